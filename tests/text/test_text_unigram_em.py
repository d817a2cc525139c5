"""Unigram training's passes over the words (:mod:`rowbook.text.unigram.em`): the E-step against
every path enumerated, the same bits on any number of threads; the compiled M-step and pruning
against their Python statements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rowbook.text import Unigram
from rowbook.text.trie import build_trie, joined_codepoints
from rowbook.text.unigram import em, lattice, train
from rowbook.text.unigram.seeds import seed_pieces
from rowbook.text.unigram.train import _model, _Words
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
        scores, unk_score = train._scores(pieces)
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


def _seeded(corpus):
    counts = count_words(corpus, Unigram()._training_words)
    words = _Words(counts)
    return words, [("<UNK>", math.nan), *seed_pieces(counts)]


def test_passes_are_the_same_bits_on_any_threads_and_best_paths_are_viterbi(corpus, monkeypatch):
    words, pieces = _seeded(corpus[:400])
    scores, unk_score = train._scores(pieces)
    nodes = _nodes_of(pieces, words)
    one = em.marginals(words.starts, words.counts, nodes, scores, 0, unk_score)
    best = em.best_pieces(words.starts, nodes, scores, unk_score)
    ids, _, bounds = lattice.viterbi(words.data, words.starts, train._model(pieces))
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
    pieces = [(f"p{i}", 0.0) for i in range(expected.size)]
    kept = [(f"p{k}", float(f)) for k, f in enumerate(expected) if k and f >= 0.5]
    total = 0.0
    for _, f in kept:  # in id order, as tokenizers adds (Python 3.12's sum() compensates)
        total += f
    logsum = train.digamma(total)
    want = [("p0", math.nan), *((p, train.digamma(f) - logsum) for p, f in kept)]
    got, ids = train._m_step(pieces, expected)
    assert got[1:] == want[1:] and got[0][0] == "p0" and math.isnan(got[0][1])
    assert [pieces[i][0] for i in ids.tolist()] == [p for p, _ in want]


@pytest.mark.parametrize("vocab_size", [150, 400])
def test_pruning_equals_its_statements_in_python(corpus, vocab_size):
    words, pieces = _seeded(corpus[:300])
    for _ in range(2):
        scores, unk_score = train._scores(pieces)
        nodes = _nodes_of(pieces, words)
        expected, _ = em.marginals(words.starts, words.counts, nodes, scores, 0, unk_score)
        pieces, _ = train._m_step(pieces, expected)
    kept = train._prune(pieces, words, _nodes_of(pieces, words), vocab_size, 0.75)
    assert [pieces[i] for i in kept.tolist()] == _prune_in_python(pieces, words, vocab_size, 0.75)


def _prune_in_python(pieces, words, vocab_size, shrinking):
    """The pruning step as ``tokenizers``' ``prune_sentence_pieces`` states it, one piece at a
    time in Python."""
    model = _model(pieces)
    piece_data, piece_starts = joined_codepoints([p for p, _ in pieces])
    n_paths, best_len, second, bounds = lattice.two_best(piece_data, piece_starts, model, 0)
    ids, _, word_bounds = lattice.viterbi(words.data, words.starts, model)
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
