"""Unigram training by EM and pruning (Kudo 2018), step for step as ``tokenizers``' ``UnigramTrainer``.

Which trainer, and why: the issue's oracle is ``tokenizers``; SentencePiece's own trainer
(``unigram_model_trainer.cc``) differs in its seeds (it counts substrings with the corpus
frequencies and skips some), in its pruning (``tokenizers`` divides by the vocabulary size
where SentencePiece uses the number of alternatives, a known difference) and in its final
selection, so the two share only about 86% of their pieces on the same text. rowbook
follows ``tokenizers``:

1. seeds (:mod:`rowbook.text.unigram.seeds`): every character and up to ``seed_size``
   frequent substrings, as log-probabilities, after an ``<UNK>`` placeholder at id 0;
2. EM, ``n_sub_iterations`` times: the E-step adds every piece's expected count over the
   words (:func:`rowbook.text.unigram.em.marginals`), the M-step drops pieces expected
   fewer than 0.5 times and scores the rest ``digamma(count) - digamma(total)``
   (the Bayesian update of Kudo's code);
3. unless ``1.1 * vocab_size`` pieces are left, prune: a piece whose best segmentation is
   not itself is dropped if no word's best path uses it; the others are kept if they have
   no second-best segmentation, else ranked by the loss of likelihood their removal would
   cost, ``freq/total * (log p(piece) - sum(log p(alternative pieces)))``, and the best
   ``max(0.75 * pieces, 1.1 * vocab_size)`` survive; then back to 2;
4. finalize: every character of the corpus is kept (a missing one gets the lowest score
   plus 0.0001 per character already added), then the pieces by id until ``vocab_size``
   minus the special tokens, sorted by score (stable); special tokens first, ``unk_token``
   put at 0 when it is not among them.

Where rowbook differs, and how much. ``tokenizers`` walks its words in the order of a hash
map seeded at random in every process and adds the E-step's sums per thread's chunk, so its
result changes from run to run and with the thread count; rowbook adds every piece's terms
in first-sighting order of the words, the same to the last bit on any number of threads
(:mod:`rowbook.text.unigram.em`). A tied score then falls either way, and pruning keeps or
drops a different piece near the cut: the tests train both on the same text and hold the
share of common pieces at 0.99 or more (measured: 1.0 at 300, 600 and 1,000 pieces); the
score of a common piece agrees to 1e-9. ``tokenizers`` also adds the characters missing
from the model in its hash order (their ids differ) and puts its ``<UNK>`` placeholder in
the lattice (a text containing ``<UNK>`` makes its likelihood NaN and panics); rowbook never
matches the placeholder. Two-best paths tie-break by position, ``tokenizers``' by heap order.

Where the time goes (NewsArticles, 142,824 distinct words of 1.4 M characters, 8,000
pieces; one thread). Before: 41 s wall at load 5 to 7, for seeds 5.2 s, 18 E-steps 15.7 s
(two thirds of each walking the trie), a trie built for every pass 4.2 s, the M-step 2.7 s
and pruning 7.1 s in Python loops over the pieces. Then each word's lattice nodes were found
once and renumbered after each step, the E-step and pruning's Viterbi ran over blocks of
words on ``workers`` threads, the M-step and the pruning loss were compiled, and the seeds'
suffix sort became a counting sort: 6.3 s of CPU, of which 3.5 s serial (seeds 1.1 s, a
trie of the pieces and their two best paths at every pruning 0.73 s, renumbering 0.37 s,
Python over the pieces' list 0.4 s). Now the words' nodes come from the seeds' suffix
array (:mod:`~rowbook.text.unigram.seeds`: no trie of the seeds), pruning reads each
piece's own lattice out of a word's (:mod:`~rowbook.text.unigram.prune`: no trie of the
pieces) on the threads, renumbering runs on the threads, and the pieces stay arrays (their
seed, score, and where they occur) until :func:`_finalize`: 5.1 to 5.4 s of CPU at load 8
(was 8.2 s at that load), of which the E-steps 2.2 s, seeds 1.06 s (the suffix sort and
its intervals 0.5 s, the lattices 0.29 s), counting the words 0.7 s, pruning 0.6 s and
renumbering 0.29 s, all but the seeds on ``workers`` threads (``docs/benchmarks.md``). The
pieces and scores are those of the trainer before, to the last bit (NewsArticles at 8,000,
generated words at 2,000, the test corpus at 300 and 1,000, compared whole).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numba
import numpy as np

from rowbook._threads import resolve_workers
from rowbook.checks import check_int, check_number
from rowbook.text.trie import codepoints
from rowbook.text.unigram import em
from rowbook.text.unigram.prune import prune
from rowbook.text.unigram.seeds import characters, seed_pieces
from rowbook.text.word_counts import as_counted, budget_bytes, count_words
from rowbook.text.wordpiece.train import check_training_args

__all__ = ["digamma", "fit_unigram", "learn_unigram"]


def digamma(x: float) -> float:
    """The digamma function as ``tokenizers`` computes it (recurrence up to 7, then the series).

    Examples
    --------
    >>> round(digamma(1.0), 6)  # minus the Euler-Mascheroni constant
    -0.577216
    """
    result = 0.0
    while x < 7.0:
        result -= 1.0 / x
        x += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return (
        result
        + math.log(x)
        + xx2 / 24.0
        - 7.0 / 960.0 * xx4
        + 31.0 / 8064.0 * xx4 * xx2
        - 127.0 / 30720.0 * xx4 * xx4
    )


class _Words:
    """The words as one array of code points, their bounds and counts."""

    def __init__(self, word_counts: Mapping[str, int]) -> None:
        words = as_counted(word_counts)
        self.counts = words.counts.astype(np.float64)  # (W,)
        self.starts = words.bounds  # (W + 1,)
        self.data = codepoints(words.text)  # (C,)


def _unk_score(scores: np.ndarray) -> float:
    """``min(score) - 10`` over the pieces but the placeholder (id 0, score NaN)."""
    finite = scores[1:][~np.isnan(scores[1:])]
    return (finite.min() if finite.size else 0.0) - 10.0


def _renumbered(kept: np.ndarray, size: int) -> np.ndarray:
    """``(size,)`` the new id of each piece: its place in ``kept``, or -1."""
    new_id = np.full(size, -1, np.int64)
    new_id[kept] = np.arange(kept.size)
    return new_id


_digamma = numba.njit(cache=True)(digamma)  # the same function compiled, for the M-step


@numba.njit(cache=True)
def _m_step(expected):
    """``(kept, scores)``: the ids of the placeholder (score NaN) and of the pieces expected
    at least 0.5 times, scored ``digamma(count) - digamma(sum of their counts)`` (summed in
    id order)."""
    kept = np.flatnonzero(expected >= 0.5)
    kept = np.concatenate((np.zeros(1, np.int64), kept[kept > 0]))
    total = 0.0
    for k in kept[1:]:
        total += expected[k]
    logsum = _digamma(total)
    scores = np.empty(kept.size, np.float64)
    scores[0] = np.nan
    for i in range(1, kept.size):
        scores[i] = _digamma(expected[kept[i]]) - logsum
    return kept, scores


def learn_unigram(
    word_counts: Mapping[str, int],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    unk_token: str | None = "<unk>",
    initial_alphabet: Sequence[str] = (),
    shrinking_factor: float = 0.75,
    n_sub_iterations: int = 2,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    progress: Any = None,
    workers: int = 1,
) -> tuple[list[tuple[str, float]], int | None]:
    """``(pieces, unk_id)``: the vocabulary learned from words and their counts (module
    docstring), the E-step on ``workers`` threads (the same pieces for any number)."""
    word_counts = as_counted(word_counts)  # once, for the words and the seeds
    words = _Words(word_counts)
    chars, where, _, _ = characters(words.data, np.empty(0))
    seen = [chr(int(c)) for c in chars[np.argsort(where, kind="stable")].tolist()]  # first sighting
    required = list(dict.fromkeys(seen + [s[0] for s in initial_alphabet]))
    if len(required) > vocab_size:
        raise ValueError(
            f"vocab_size={vocab_size} is smaller than the {len(required)} characters of the "
            "corpus, which are all kept; raise vocab_size"
        )
    seeds = seed_pieces(word_counts, max_piece_length=max_piece_length, seed_size=seed_size)
    texts = ["<UNK>", *seeds.pieces]  # each piece's text, by its id among the seeds
    nodes = seeds.nodes._replace(piece=seeds.nodes.piece + 1)  # the placeholder never matched
    # the pieces now: their seed ids, scores, and where they occur in the words' text
    origin = np.arange(len(texts))
    scores = np.concatenate(([math.nan], seeds.scores))
    at, span = np.concatenate(([0], seeds.at)), np.concatenate(([0], seeds.span))
    # a seed spelled "<UNK>" is the placeholder in the pieces' own lattices (a trie of the
    # pieces' texts finds the placeholder's id there first), as in the trainer before
    unk_seed = texts.index("<UNK>", 1) if "<UNK>" in seeds.pieces else -1
    desired = vocab_size * 11 // 10
    while True:
        for _ in range(n_sub_iterations):
            expected, _ = em.marginals(
                words.starts, words.counts, nodes, scores, 0, _unk_score(scores), workers=workers
            )
            kept, scores = _m_step(expected)
            nodes = em.keep_nodes(
                nodes, words.starts, _renumbered(kept, origin.size), workers=workers
            )
            origin, at, span = origin[kept], at[kept], span[kept]
            if progress is not None:
                progress(origin.size)
        if origin.size <= desired:
            break
        skip = np.flatnonzero(origin == unk_seed)  # (0,) or (1,)
        size = max(desired, int(origin.size * shrinking_factor))
        kept = prune(
            words.starts,
            words.counts,
            nodes,
            scores,
            _unk_score(scores),
            at,
            span,
            size,
            int(skip[0]) if skip.size else -1,
            workers=workers,
        )
        nodes = em.keep_nodes(nodes, words.starts, _renumbered(kept, origin.size), workers=workers)
        origin, scores, at, span = origin[kept], scores[kept], at[kept], span[kept]
    pieces = [(texts[i], s) for i, s in zip(origin.tolist(), scores.tolist(), strict=True)]
    return _finalize(pieces, required, vocab_size, list(special_tokens), unk_token)


def _finalize(
    pieces: list[tuple[str, float]],
    required: list[str],
    vocab_size: int,
    specials: list[str],
    unk_token: str | None,
) -> tuple[list[tuple[str, float]], int | None]:
    existing = dict(pieces[1:])
    low = min((s for _, s in pieces[1:] if not math.isnan(s)), default=0.0)
    out, inserted, penalty = [], {"<UNK>"}, 0.0
    for c in required:
        if c in existing:
            out.append((c, existing[c]))
        else:
            out.append((c, low + penalty))
            penalty += 0.0001
        inserted.add(c)
    need_unk = unk_token is not None and unk_token not in specials
    room = vocab_size - len(specials) - need_unk
    for piece, score in pieces:
        if len(out) >= room:
            break
        if piece in inserted:
            continue
        inserted.add(piece)
        out.append((piece, 0.0 if math.isnan(score) else score))
    out.sort(key=lambda p: -p[1])  # stable: ties keep this order
    head = ([unk_token] if need_unk else []) + specials
    unk_id = None if unk_token is None else head.index(unk_token)
    return [(t, 0.0) for t in head] + out, unk_id


def fit_unigram(
    uni: Any,
    texts: Iterable[str],
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    initial_alphabet: Sequence[str] = (),
    shrinking_factor: float = 0.75,
    n_sub_iterations: int = 2,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    word_counts: Mapping[str, int] | None = None,
    memory: float | str | None = None,
    spill_dir: str | os.PathLike | None = None,
    show_progress: bool = False,
    workers: int | None = None,
) -> Any:
    """Fit ``uni`` (a :class:`~rowbook.text.Unigram`) on ``texts`` as ``tokenizers``'
    ``UnigramTrainer`` does, and return it (``Unigram.fit`` is this function).

    Parameters
    ----------
    texts : Iterable[str]
        The corpus, read once, normalized and pre-tokenized by ``uni``'s parts.
    vocab_size : int
        Final size, special tokens included.
    special_tokens : Sequence[str], default ()
        The first ids; ``uni.unk_token`` is put at id 0 when it is not among them.
    initial_alphabet : Sequence[str], default ()
        Characters kept even if the corpus lacks them.
    shrinking_factor, n_sub_iterations, max_piece_length, seed_size
        ``tokenizers``' ``UnigramTrainer`` options (module docstring).
    word_counts : Mapping[str, int], optional
        Counts already made (of shards, within a memory budget, on Dask); ``texts`` is then
        ignored (pass ``()``).
    memory : float or str, optional
        Budget of the word counts, in gigabytes or as a size such as ``"1GB"``; past half of
        it they spill to temporary files (in ``spill_dir``) and are merged: the same counts,
        in the same order (:mod:`rowbook.text.word_counts`).
    show_progress : bool, default False
    workers : int, optional
        Processes counting the words and threads of the EM passes (``None``: one per core
        the process may use); the pieces are the same for any number.
    """
    specials = check_training_args(vocab_size, 0, special_tokens, None, initial_alphabet)
    workers = resolve_workers(workers)
    check_number("shrinking_factor", shrinking_factor, 0.0, 1.0, low_open=True, high_open=True)
    check_int("n_sub_iterations", n_sub_iterations, 1)
    check_int("max_piece_length", max_piece_length, 1)
    check_int("seed_size", seed_size, 1)
    if word_counts is None:
        word_counts = count_words(
            texts,
            uni._training_words,
            workers=workers,
            show_progress=show_progress,
            memory=budget_bytes(memory),
            spill_dir=spill_dir,
        )
    if not word_counts:
        raise ValueError("the corpus has no words to learn from (empty, or all whitespace)")
    pieces, unk_id = learn_unigram(
        word_counts,
        vocab_size,
        special_tokens=specials,
        unk_token=uni.unk_token,
        initial_alphabet=initial_alphabet,
        shrinking_factor=shrinking_factor,
        n_sub_iterations=n_sub_iterations,
        max_piece_length=max_piece_length,
        seed_size=seed_size,
        workers=workers,
    )
    added = [
        (t, True)
        for t in dict.fromkeys(
            [*([uni.unk_token] if unk_id == 0 and uni.unk_token not in specials else []), *specials]
        )
    ]
    uni._set_model(pieces, unk_id, added)
    return uni
