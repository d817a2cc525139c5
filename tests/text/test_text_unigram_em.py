"""Unigram training's passes over the words (:mod:`rowbook.text.unigram.em`): the E-step against
every path enumerated, the same bits on any number of threads; the compiled M-step and pruning
against their Python statements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rowbook.text import Unigram
from rowbook.text.trie import build_trie, joined_codepoints
from rowbook.text.unigram import em, lattice, prune, train
from rowbook.text.unigram.seeds import seed_pieces
from rowbook.text.unigram.train import _Words
from rowbook.text.word_counts import count_words


def _random_case(rng):
    """Pieces (the placeholder first) and counted words over a small alphabet, some of whose
    characters no piece covers."""
    pieces = ["<UNK>", *rng.choice(list("abc"), size=rng.integers(1, 4), replace=False)]
    pieces += list(
        dict.fromkeys("".join(rng.choice(list("abcd"), size=rng.integers(2, 5))) for _ in range(8))
    )
    scores = [math.nan, *(-rng.uniform(0.5, 6.0) for _ in pieces[1:])]
    words = {
        "".join(rng.choice(list("abcd"), size=rng.integers(1, 8))): int(rng.integers(1, 5))
        for _ in range(12)
    }
    return list(zip(pieces, scores, strict=True)), words


def _scores(pieces):
    scores = np.array([s for _, s in pieces], dtype=np.float64)
    return scores, train._unk_score(scores)


def _model(pieces):
    """The lattice model of ``pieces`` for the references: the placeholder (id 0) never matched."""
    scores, unk_score = _scores(pieces)
    kinds = np.zeros(len(pieces), np.int8)
    kinds[0] = lattice.NEVER
    return build_trie([p for p, _ in pieces]), scores, kinds, unk_score


def _nodes_of(pieces, words, workers=1):
    """The nodes of ``words`` for ``pieces`` (the placeholder at 0 never matched)."""
    trie = build_trie([p for p, _ in pieces[1:]], range(1, len(pieces)))
    longest = max(len(p) for p, _ in pieces[1:])
    return em.find_nodes(words.data, words.starts, trie, longest, workers=workers)


def test_marginals_equal_every_path_enumerated():
    rng = np.random.default_rng(3)
    for _ in range(30):
        pieces, word_counts = _random_case(rng)
        words = _Words(word_counts)
        scores, unk_score = _scores(pieces)
        expected, objective = em.marginals(
            words.starts, words.counts, _nodes_of(pieces, words), scores, 0, unk_score
        )
        want = em.marginals_reference(word_counts, dict(pieces[1:]), unk_score)
        got = {piece: expected[i] for i, (piece, _) in enumerate(pieces) if i and expected[i]}
        if expected[0]:
            got[None] = expected[0]
        assert got.keys() == want.keys()
        for piece, count in want.items():
            assert math.isclose(got[piece], count, rel_tol=1e-9, abs_tol=1e-12), piece
        assert np.isfinite(objective) and objective > 0


def _seeded(corpus, where=False):
    """The words of ``corpus`` and the seeds after the placeholder; with ``where``, also
    where each seed occurs in the words' text (``at``, ``span``)."""
    counts = count_words(corpus, Unigram()._training_words)
    words, seeds = _Words(counts), seed_pieces(counts)
    pieces = [("<UNK>", math.nan), *zip(seeds.pieces, seeds.scores.tolist(), strict=True)]
    if not where:
        return words, pieces
    return words, pieces, np.append(0, seeds.at), np.append(0, seeds.span)


def test_passes_are_the_same_bits_on_any_threads_and_best_paths_are_viterbi(corpus, monkeypatch):
    words, pieces = _seeded(corpus[:400])
    scores, unk_score = _scores(pieces)
    nodes = _nodes_of(pieces, words)
    one = em.marginals(words.starts, words.counts, nodes, scores, 0, unk_score)
    best = em.best_pieces(words.starts, nodes, scores, unk_score)
    ids, _, bounds = lattice.viterbi(words.data, words.starts, _model(pieces))
    assert np.array_equal(best[0], ids) and np.array_equal(best[1], bounds)
    monkeypatch.setattr(em, "BLOCK_CHARS", 97)  # many blocks, of every size
    for workers in (1, 2, 3):
        again = _nodes_of(pieces, words, workers)
        assert all(np.array_equal(a, b) for a, b in zip(again, nodes, strict=True))
        many = em.marginals(
            words.starts, words.counts, nodes, scores, 0, unk_score, workers=workers
        )
        assert np.array_equal(many[0], one[0]) and many[1] == one[1]
        more = em.best_pieces(words.starts, nodes, scores, unk_score, workers=workers)
        assert np.array_equal(more[0], best[0]) and np.array_equal(more[1], best[1])


@pytest.mark.parametrize("seed_size", [1_000_000, 300])
def test_the_seeds_lattices_are_those_a_trie_of_the_seeds_finds(corpus, seed_size):
    counts = count_words([*corpus[:200], "aaaa aaaaaa ab" * 3], Unigram()._training_words)
    words = _Words(counts)
    seeds = seed_pieces(counts, max_piece_length=6, seed_size=seed_size)
    assert seed_size > 1000 or len(seeds.pieces) == seed_size  # some substrings left out
    trie = build_trie(seeds.pieces)
    want = em.find_nodes(words.data, words.starts, trie, 6)
    assert all(np.array_equal(a, b) for a, b in zip(seeds.nodes, want, strict=True))
    assert all(a.dtype == b.dtype for a, b in zip(seeds.nodes, want, strict=True))


def test_kept_nodes_are_those_of_the_pieces_kept(corpus):
    words, pieces = _seeded(corpus[:200])
    rng = np.random.default_rng(1)
    kept = np.concatenate(([0], rng.permutation(np.arange(1, len(pieces)))[: len(pieces) // 3]))
    nodes = em.keep_nodes(
        _nodes_of(pieces, words), words.starts, train._renumbered(kept, len(pieces))
    )
    want = _nodes_of([pieces[i] for i in kept.tolist()], words)
    assert all(np.array_equal(a, b) for a, b in zip(nodes, want, strict=True))


def test_training_gives_the_same_pieces_on_one_thread_or_two(corpus, monkeypatch):
    monkeypatch.setattr(em, "BLOCK_CHARS", 1000)
    one = Unigram().fit(corpus, 400, workers=1).pieces
    assert Unigram().fit(corpus, 400, workers=2).pieces == one


def test_m_step_equals_its_statements_in_python():
    rng = np.random.default_rng(0)
    expected = np.concatenate(([7.0], rng.exponential(2.0, 500), [0.5, 0.4999, np.nan]))
    kept = [(k, float(f)) for k, f in enumerate(expected) if k and f >= 0.5]
    total = 0.0
    for _, f in kept:  # in id order, as tokenizers adds (Python 3.12's sum() compensates)
        total += f
    logsum = train.digamma(total)
    ids, scores = train._m_step(expected)
    assert ids.tolist() == [0, *(k for k, _ in kept)]
    assert math.isnan(scores[0]) and scores[1:].tolist() == [
        train.digamma(f) - logsum for _, f in kept
    ]


@pytest.mark.parametrize("vocab_size", [150, 400])
def test_pruning_equals_its_statements_in_python(corpus, vocab_size, monkeypatch):
    # "<UNK>" in the text: a seed spelled as the placeholder, left out of the pieces' lattices
    words, pieces, at, span = _seeded([*corpus[:300], "a <UNK> b<UNK>c", "<UNK>"], where=True)
    for _ in range(2):
        scores, unk_score = _scores(pieces)
        nodes = _nodes_of(pieces, words)
        expected, _ = em.marginals(words.starts, words.counts, nodes, scores, 0, unk_score)
        kept, new_scores = train._m_step(expected)
        pieces = [
            (pieces[k][0], s) for k, s in zip(kept.tolist(), new_scores.tolist(), strict=True)
        ]
        at, span = at[kept], span[kept]
    scores, unk_score = _scores(pieces)
    nodes = _nodes_of(pieces, words)
    skip = [p for p, _ in pieces].index("<UNK>", 1)
    want = lattice.two_best(*joined_codepoints([p for p, _ in pieces]), _model(pieces), 0)
    monkeypatch.setattr(prune, "PIECES_PER_BLOCK", 37)  # many blocks, and threads
    for workers in (1, 2):
        got = prune.two_best_of_pieces(nodes, at, span, scores, unk_score, skip, workers=workers)
        assert _per_piece(got) == _per_piece(want)
    size = max(vocab_size * 11 // 10, int(len(pieces) * 0.75))
    kept = prune.prune(
        words.starts, words.counts, nodes, scores, unk_score, at, span, size, skip, workers=2
    )
    assert [pieces[i] for i in kept.tolist()] == _prune_in_python(pieces, words, vocab_size, 0.75)


def _per_piece(two_best):
    """``(paths, pieces on the best path, second best path)`` of each piece but the placeholder."""
    n_paths, best_len, second, bounds = two_best
    return [
        (int(n_paths[i]), int(best_len[i]), second[bounds[i] : bounds[i + 1]].tolist())
        for i in range(1, n_paths.size)
    ]


def _prune_in_python(pieces, words, vocab_size, shrinking):
    """The pruning step as ``tokenizers``' ``prune_sentence_pieces`` states it, one piece at a
    time in Python."""
    model = _model(pieces)
    piece_data, piece_starts = joined_codepoints([p for p, _ in pieces])
    n_paths, best_len, second, bounds = lattice.two_best(piece_data, piece_starts, model, 0)
    # the words' lattices hold every piece but the placeholder (a piece spelled "<UNK>" too),
    # the pieces' own lattices (above) every piece whose text is not the placeholder's
    trie = build_trie([p for p, _ in pieces[1:]], range(1, len(pieces)))
    ids, _, word_bounds = lattice.viterbi(words.data, words.starts, (trie, *model[1:]))
    ids = np.where(ids < 0, 0, ids)
    freq = np.bincount(
        ids, weights=np.repeat(words.counts, np.diff(word_bounds)), minlength=len(pieces)
    )
    vsum, total = float(words.counts.sum()), float(freq.sum())
    kept, candidates = [pieces[0]], []
    for i in range(1, len(pieces)):
        always = n_paths[i] == 1 or best_len[i] == 1
        alternatives = (
            second[bounds[i] : bounds[i + 1]] if n_paths[i] == 2 and best_len[i] == 1 else None
        )
        if freq[i] == 0 and not always:
            continue
        if alternatives is None or alternatives.size == 0:
            kept.append(pieces[i])
            continue
        f = freq[i] / vsum
        if f == 0 or math.isnan(f):
            continue
        logprob_sp = math.log(freq[i]) - math.log(total)
        logsum_alt = math.log(total + freq[i] * (len(pieces) - 1))
        logprob_alt = sum(math.log(freq[max(a, 0)] + freq[i]) - logsum_alt for a in alternatives)
        candidates.append((i, f * (logprob_sp - logprob_alt)))
    size = max(vocab_size * 11 // 10, int(len(pieces) * shrinking))
    for i, _ in sorted(candidates, key=lambda c: -c[1]):
        if len(kept) == size:
            break
        kept.append(pieces[i])
    return kept
