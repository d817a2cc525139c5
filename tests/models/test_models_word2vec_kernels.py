"""The numba word2vec kernels against their plain NumPy formulation, draw for draw."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.data import huffman_tree, negative_guide, negative_table, sample_thresholds
from rowbook.models.word_vectors.word2vec_kernels import (
    hierarchical_softmax_step,
    negative_sampling_step,
    train_job,
)
from rowbook.models.word_vectors.word2vec_reference import (
    cbow_step_reference,
    draw_negatives_reference,
    hierarchical_softmax_reference,
    negative_sampling_reference,
    skipgram_step_reference,
    train_job_reference,
)

V, D = 40, 16


def _tables(seed: int):
    rng = np.random.default_rng(seed)
    W_in = ((rng.random((V, D)) - 0.5) / D).astype(np.float32)
    W_out = (rng.standard_normal((V, D)) * 0.3).astype(np.float32)  # non-zero: a real test
    return W_in, W_out


def _counts(seed: int = 0):
    return np.random.default_rng(seed).integers(1, 200, size=V)


@pytest.mark.parametrize("seed", range(5))
def test_skipgram_step_matches_reference(seed):
    W_in, W_out = _tables(seed)
    table = negative_table(_counts(seed))
    ref_in, ref_out = W_in.copy(), W_out.copy()
    context, center, state, lr = 3, 7, 987654321 + seed, np.float32(0.3)
    work = np.zeros(D, np.float32)
    h = W_in[context]
    new_state, loss = negative_sampling_step(
        h, W_out, center, 5, table, negative_guide(table), lr, np.uint64(state), work, True
    )
    h += work
    negatives, ref_state = draw_negatives_reference(table, state, 5)
    ref_loss = skipgram_step_reference(ref_in, ref_out, context, center, negatives, lr)
    assert int(new_state) == ref_state
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(W_out, ref_out, rtol=1e-5, atol=1e-7)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    assert not np.array_equal(W_out, _tables(seed)[1])  # the step did something


def test_negative_equal_to_center_is_skipped():
    W_in, W_out = _tables(0)
    table = negative_table(np.array([1] * (V - 1) + [10**6]))  # most draws are word V-1
    state = 987654321
    negatives, _ = draw_negatives_reference(table, state, 5)
    assert negatives.count(V - 1) >= 3 and len(set(negatives)) > 1
    before = W_out.copy()
    work = np.zeros(D, np.float32)
    negative_sampling_step(
        W_in[0],
        W_out,
        V - 1,
        5,
        table,
        negative_guide(table),
        np.float32(0.5),
        np.uint64(state),
        work,
        False,
    )
    changed = set(np.flatnonzero(np.any(W_out != before, axis=1)).tolist())
    assert changed == set(negatives)  # the centre's row once (as positive), the others as negatives
    W_ref = before.copy()
    work_ref, _ = negative_sampling_reference(
        W_in[0].copy(), W_ref, V - 1, negatives, np.float32(0.5)
    )
    np.testing.assert_allclose(W_out, W_ref, rtol=1e-6)
    np.testing.assert_allclose(work, work_ref, rtol=1e-6)


def test_negative_equal_to_center_is_drawn_again_with_redraw():
    """fastText's choice (``redraw``): every one of the ``negative`` steps has a negative
    other than the centre, the draws made as the reference's with the centre avoided."""
    W_in, W_out = _tables(0)
    table = negative_table(np.array([1] * (V - 1) + [200]))  # about 2 draws in 3 are V-1
    state = 987654321
    negatives, ref_state = draw_negatives_reference(table, state, 5, avoid=V - 1)
    assert V - 1 not in negatives and len(negatives) == 5
    W_ref, before = W_out.copy(), W_out.copy()
    work = np.zeros(D, np.float32)
    args = (table, negative_guide(table), np.float32(0.5), np.uint64(state), work, False)
    new_state, _ = negative_sampling_step(W_in[0], W_out, V - 1, 5, *args, True)
    assert int(new_state) == ref_state != int(draw_negatives_reference(table, state, 5)[1])
    work_ref, _ = negative_sampling_reference(
        W_in[0].copy(), W_ref, V - 1, negatives, np.float32(0.5)
    )
    np.testing.assert_allclose(W_out, W_ref, rtol=1e-6)
    np.testing.assert_allclose(work, work_ref, rtol=1e-6)
    changed = set(np.flatnonzero(np.any(W_out != before, axis=1)).tolist())
    assert changed == {V - 1, *negatives}


@pytest.mark.parametrize("cbow_mean", [True, False])
def test_cbow_step_with_repeated_context_matches_sum_of_gradients(cbow_mean):
    """CBOW's gradient reaches every context occurrence (a repeated word gets it twice)."""
    W_in, W_out = _tables(1)
    context, center, negatives, lr = [2, 5, 2, 9], 11, [4, 11, 30], np.float32(0.2)
    ref_in, ref_out = W_in.copy(), W_out.copy()
    cbow_step_reference(ref_in, ref_out, context, center, negatives, lr, cbow_mean)
    h = W_in[context].sum(0) / (len(context) if cbow_mean else 1)
    s = 1 / (1 + np.exp(-(W_out[[center, 4, 30]] @ h)))
    g = (np.array([1, 0, 0]) - s) * lr  # the negative equal to center is skipped
    grad_h = g @ W_out[[center, 4, 30]]
    expected_in = W_in.copy()
    for c in context:
        expected_in[c] += grad_h if cbow_mean else grad_h / len(context)
    np.testing.assert_allclose(ref_in, expected_in, rtol=1e-5, atol=1e-7)


def _out(counts, seed, negative, hs):
    """train_job's output side: (W_out, table, guide, negative), (W_nodes, codes, points, lengths)."""
    table = negative_table(counts)
    out = (_tables(seed)[1], table, negative_guide(table), negative)
    if not hs:
        return out, None
    W_nodes = (np.random.default_rng(seed + 1).standard_normal((V - 1, D)) * 0.3).astype(np.float32)
    return out, (W_nodes, *huffman_tree(counts))


def _copy(parts):
    return (
        None
        if parts is None
        else tuple(x.copy() if isinstance(x, np.ndarray) else x for x in parts)
    )


@pytest.mark.parametrize("skipgram", [True, False])
@pytest.mark.parametrize("cbow_mean", [True, False])
@pytest.mark.parametrize(("use_sample", "shrink"), [(True, True), (False, False), (True, False)])
@pytest.mark.parametrize(("negative", "hs"), [(4, False), (0, True), (3, True)])
def test_train_job_matches_reference(skipgram, cbow_mean, use_sample, shrink, negative, hs):
    rng = np.random.default_rng(7)
    ids = rng.integers(0, V, size=160).astype(np.int32)
    starts = np.array([0, 1, 50, 51, 120, 160], dtype=np.int64)  # includes 1-word sentences
    counts = np.bincount(ids, minlength=V) + 1
    thresholds = sample_thresholds(counts, 0.003)
    W_in = _tables(3)[0]
    out, tree = _out(counts, 3, negative, hs)
    ref_in, ref_out, ref_tree = W_in.copy(), _copy(out), _copy(tree)
    sentences, sampling = (ids, starts, 0, 5), (thresholds, use_sample, 3, shrink)
    rest = (skipgram, cbow_mean, 0.25, 424242)
    n, loss = train_job(W_in, sentences, sampling, out, tree, *rest, True)
    n_ref = train_job_reference(ref_in, sentences, sampling, ref_out, ref_tree, *rest)
    assert n == n_ref
    assert (n < 160) == use_sample
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-4, atol=1e-6)
    for got, want in zip(out + (tree or ()), ref_out + (ref_tree or ()), strict=True):
        if isinstance(got, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert loss > 0


def test_train_job_is_deterministic_and_seed_dependent():
    ids = np.random.default_rng(0).integers(0, V, size=300).astype(np.int32)
    starts = np.array([0, 300], dtype=np.int64)
    counts = np.bincount(ids, minlength=V) + 1
    runs = []
    for seed in (1, 1, 2):
        W_in = _tables(0)[0]
        out, _ = _out(counts, 0, 5, False)
        sampling = (sample_thresholds(counts, 0.01), True, 5, True)
        train_job(W_in, (ids, starts, 0, 1), sampling, out, None, True, True, 0.1, seed, False)
        runs.append(W_in)
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("seed", range(3))
def test_hierarchical_softmax_step_matches_reference(seed):
    counts = _counts(seed)
    codes, points, lengths = huffman_tree(counts)
    rng = np.random.default_rng(seed)
    h = rng.standard_normal(D).astype(np.float32)
    W_nodes = (rng.standard_normal((V - 1, D)) * 0.3).astype(np.float32)
    ref_nodes = W_nodes.copy()
    word = int(np.argmax(lengths))  # the deepest path
    work = np.zeros(D, np.float32)
    loss = hierarchical_softmax_step(
        h, W_nodes, codes[word], points[word], lengths[word], np.float32(0.3), work, True
    )
    n = lengths[word]
    ref_work, ref_loss = hierarchical_softmax_reference(
        h, ref_nodes, codes[word, :n], points[word, :n], np.float32(0.3)
    )
    np.testing.assert_allclose(W_nodes, ref_nodes, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(work, ref_work, rtol=1e-5, atol=1e-7)
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    touched = np.flatnonzero(np.any(W_nodes != _copy_nodes(seed), axis=1))
    assert sorted(touched.tolist()) == sorted(points[word, :n].tolist())


def _copy_nodes(seed):
    rng = np.random.default_rng(seed)
    rng.standard_normal(D)
    return (rng.standard_normal((V - 1, D)) * 0.3).astype(np.float32)
