"""Subsampling, the negative table, window shrinking: against their formulas and gensim."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rowbook.data import (
    draw_negative,
    job_seed,
    keep_probabilities,
    lcg_next,
    negative_guide,
    negative_table,
    read_corpus,
    sample_thresholds,
    window_bounds,
)

gensim_word2vec = pytest.importorskip("gensim.models.word2vec")


def _zipf_corpus(seed: int = 0, n_sentences: int = 300) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    return [
        [f"w{i}" for i in rng.choice(300, size=rng.integers(1, 30), p=p)]
        for _ in range(n_sentences)
    ]


@pytest.mark.parametrize("sample", [0.0, 1e-3, 1e-2, 5.0])
def test_keep_probability_formula(sample):
    counts = np.array([5000, 700, 120, 30, 5, 1])
    total = counts.sum()
    t = sample * total if sample < 1 else int(sample * (3 + math.sqrt(5)) / 2)
    if sample == 0:
        t = total
    expected = [min(1.0, (math.sqrt(c / t) + 1) * t / c) for c in counts]
    np.testing.assert_allclose(keep_probabilities(counts, sample), expected, rtol=1e-12)


@pytest.mark.parametrize("sample", [1e-3, 1e-4, 0.0])
def test_vocab_thresholds_and_negative_table_equal_gensim(sample):
    corpus = _zipf_corpus()
    model = gensim_word2vec.Word2Vec(min_count=2, sample=sample, negative=5, ns_exponent=0.75)
    model.build_vocab(corpus)
    vocab, _ = read_corpus(corpus, min_count=2)
    assert vocab.keys == tuple(model.wv.index_to_key)
    np.testing.assert_array_equal(vocab.counts, model.wv.expandos["count"])
    np.testing.assert_array_equal(
        sample_thresholds(vocab.counts, sample), model.wv.expandos["sample_int"]
    )
    np.testing.assert_array_equal(negative_table(vocab.counts, 0.75), model.cum_table)


def test_negative_table_with_other_exponent_equals_gensim():
    corpus = _zipf_corpus(1)
    model = gensim_word2vec.Word2Vec(min_count=1, ns_exponent=0.5)
    model.build_vocab(corpus)
    vocab, _ = read_corpus(corpus, min_count=1)
    np.testing.assert_array_equal(negative_table(vocab.counts, 0.5), model.cum_table)


def test_negative_draws_follow_unigram_power():
    counts = np.array([1000, 300, 50, 10, 1])
    table = negative_table(counts, 0.75)
    guide = negative_guide(table)
    state, n = np.uint64(12345), 200_000
    drawn = np.zeros(len(counts), dtype=np.int64)
    for _ in range(n):
        drawn[draw_negative(table, guide, state)] += 1
        state = lcg_next(state)
    expected = counts**0.75 / (counts**0.75).sum()
    assert np.all(np.abs(drawn / n - expected) <= 4 * np.sqrt(expected / n) + 1e-4)


@pytest.mark.parametrize("domain", [2**31 - 1, 1000, 9])
def test_draw_negative_is_bisect_left(domain):
    counts = np.random.default_rng(0).integers(1, 10**5, size=3000)
    table = negative_table(counts, 0.75, domain=domain)
    guide = negative_guide(table)
    states = [
        0,
        1 << 16,
        123456789012,
        (1 << 48) - 1,
        *np.random.default_rng(1).integers(0, 2**48, 5000),
    ]
    for state in states:
        x = (int(state) >> 16) % int(table[-1])
        assert draw_negative(table, guide, np.uint64(state)) == np.searchsorted(
            table, x, side="left"
        )


def test_lcg_is_word2vec_generator():
    state = 1
    for _ in range(5):
        state_next = (state * 25214903917 + 11) % 2**48
        assert int(lcg_next(np.uint64(state))) == state_next
        state = state_next


@pytest.mark.parametrize("window", [1, 3, 5])
def test_window_bounds_definition(window):
    for b in range(window):
        for i in range(12):
            lo, hi = window_bounds(i, 0, 12, window, b)
            inside = [j for j in range(12) if abs(j - i) <= window - b]
            assert (lo, hi - 1) == (min(inside), max(inside))


def test_shrink_draws_uniform_over_window():
    """The kernels' b = (state >> 16) % window is uniform on [0, window)."""
    window, n, state = 5, 50_000, job_seed(3, 0, 0)
    b = np.empty(n, dtype=np.int64)
    for k in range(n):
        b[k] = (state >> 16) % window
        state = (state * 25214903917 + 11) % 2**48
    freq = np.bincount(b, minlength=window) / n
    np.testing.assert_allclose(freq, 1 / window, atol=0.01)


def test_job_seeds_differ_and_fit_48_bits():
    seeds = {job_seed(1, e, j) for e in range(3) for j in range(100)}
    assert len(seeds) == 300
    assert all(0 <= s < 2**48 for s in seeds)
