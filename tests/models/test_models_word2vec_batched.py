"""The minibatched kernels against their NumPy references, draw for draw: skip-gram's (HogBatch,
a window a minibatch) and CBOW's (consecutive windows a minibatch)."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest

from rowbook.checks import ParameterError
from rowbook.data import huffman_tree, negative_guide, negative_table, sample_thresholds
from rowbook.data.synthetic import planted_analogies, planted_corpus
from rowbook.kernel_math import fast_sigmoid
from rowbook.models.word_vectors.word2vec import Word2Vec
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import train_job_batched_cbow
from rowbook.models.word_vectors.word2vec_batched_cbow_reference import (
    train_job_batched_cbow_reference,
)
from rowbook.models.word_vectors.word2vec_batched_kernels import (
    merged_negatives,
    shared_targets,
    train_job_batched,
)
from rowbook.models.word_vectors.word2vec_batched_reference import (
    merged_negatives_reference,
    shared_targets_reference,
    train_job_batched_reference,
)
from rowbook.models.word_vectors.word2vec_kernels import train_job
from rowbook.models.word_vectors.word2vec_reference import draw_negatives_reference

V, D = 40, 16


def _job_inputs(negative: int, hs: bool, seed: int = 3):
    rng = np.random.default_rng(7)
    ids = rng.integers(0, V, size=160).astype(np.int32)
    starts = np.array([0, 1, 50, 51, 120, 160], dtype=np.int64)  # includes 1-word sentences
    counts = np.bincount(ids, minlength=V) + 1
    rng = np.random.default_rng(seed)
    W_in = ((rng.random((V, D)) - 0.5) / D).astype(np.float32)
    W_out = (rng.standard_normal((V, D)) * 0.3).astype(np.float32)  # non-zero: a real test
    table = negative_table(counts)
    out = (W_out, table, negative_guide(table), negative)
    tree = None
    if hs:
        W_nodes = (rng.standard_normal((V - 1, D)) * 0.3).astype(np.float32)
        tree = (W_nodes, *huffman_tree(counts))
    return W_in, ids, starts, sample_thresholds(counts, 0.003), out, tree


def _copy(parts):
    if parts is None:
        return None
    return tuple(x.copy() if isinstance(x, np.ndarray) else x for x in parts)


@pytest.mark.parametrize(
    ("use_sample", "shrink", "shared"), [(True, True, 1), (False, False, 1), (True, True, 3)]
)
@pytest.mark.parametrize(
    ("negative", "hs", "lr"),
    [(4, False, 0.25), (0, True, 0.25), (3, True, 0.25), (12, False, 0.05)],
)
def test_batched_job_matches_reference(use_sample, shrink, shared, negative, hs, lr):
    """Equal to float32 rounding (at lr 0.25, 12 merged negatives carry it past 1e-5 in 160
    words, hence the smaller step there); each window's own draw, and runs of 3 windows
    sharing one."""
    sampling = (use_sample, 3, shrink)
    rest = (shared, lr, 424242)
    _assert_job_matches(
        train_job_batched, train_job_batched_reference, negative, hs, sampling, rest
    )


def _assert_job_matches(kernel, reference, negative, hs, sampling, rest):
    """One job of ``kernel`` and of its ``reference`` from the same tables: the same words
    trained and the same tables to float32 rounding. ``sampling`` is the kernels' but for
    the thresholds: ``(use_sample, window, shrink)``."""
    W_in, ids, starts, thresholds, out, tree = _job_inputs(negative, hs)
    ref_in, ref_out, ref_tree = W_in.copy(), _copy(out), _copy(tree)
    before = W_in.copy()
    head = ((ids, starts, 0, 5), (thresholds, *sampling))
    n, loss = kernel(W_in, *head, out, tree, *rest, True)
    n_ref = reference(ref_in, *head, ref_out, ref_tree, *rest)
    assert n == n_ref and (n < 160) == sampling[0]
    assert not np.allclose(W_in, before)  # the job did something
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-4, atol=1e-6)
    for got, want in zip(out + (tree or ()), ref_out + (ref_tree or ()), strict=True):
        if isinstance(got, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert loss > 0


def test_batched_job_differs_from_the_classic_one():
    """Shared negatives and one snapshot per window: another algorithm, not a reordering."""
    W_in, ids, starts, thresholds, out, _ = _job_inputs(5, False)
    classic_in, classic_out = W_in.copy(), _copy(out)
    head = ((ids, starts, 0, 5), (thresholds, True, 3, True))
    train_job_batched(W_in, *head, out, None, 1, 0.25, 9, False)
    train_job(classic_in, *head, classic_out, None, True, True, 0.25, 9, False)
    assert not np.allclose(W_in, classic_in, atol=1e-6)


def test_shared_targets_merge_repeats_and_drop_the_center():
    counts = np.array([1] * (V - 1) + [10**6])  # most draws are word V-1
    table = negative_table(counts)
    guide = negative_guide(table)
    W_out = np.zeros((V, D), np.float32)
    pool, pool_counts = np.empty(8, np.int64), np.empty(8, np.float32)
    n_pool, new_state = merged_negatives(
        0, 8, table, guide, np.uint64(987654321), W_out, pool, pool_counts
    )
    negatives, ref_state = draw_negatives_reference(table, 987654321, 8)
    assert int(new_state) == ref_state
    for center in (V - 1, 0):  # one pool, two windows: the centre drawn and one not drawn
        targets = np.empty(9, np.int64)
        weights = np.empty(9, np.float32)
        n = shared_targets(center, pool, pool_counts, n_pool, targets, weights)
        want_targets, want_counts = shared_targets_reference(center, negatives)
        assert targets[:n].tolist() == want_targets
        assert weights[:n].tolist() == want_counts
        assert sum(want_counts) == 1 + sum(t != center for t in negatives)
    assert len(set(want_targets)) == len(want_targets) < 9  # repeats were merged


def test_windows_sharing_a_draw_train_otherwise():
    """Runs of windows sharing their negatives: other draws, other tables, the same words."""
    W_in, ids, starts, thresholds, out, _ = _job_inputs(5, False)
    own_in, own_out = W_in.copy(), _copy(out)
    head = ((ids, starts, 0, 5), (thresholds, True, 3, True))
    n_shared, _ = train_job_batched(W_in, *head, out, None, 4, 0.25, 9, False)
    n_own, _ = train_job_batched(own_in, *head, own_out, None, 1, 0.25, 9, False)
    assert n_shared == n_own
    assert not np.allclose(W_in, own_in, atol=1e-6)


def test_shared_negatives_drop_every_centre_of_a_batch():
    """CBOW's minibatch: a draw equal to any of its centres is dropped (they are positives)."""
    counts = np.array([10**5] * 3 + [1] * (V - 3))  # most draws are words 0, 1 and 2
    table = negative_table(counts)
    guide = negative_guide(table)
    centres = [2, 0, 2, 7]
    targets = np.empty(len(centres) + 12, np.int64)
    weights = np.empty(len(centres) + 12, np.float32)
    targets[:4], weights[:4] = centres, 1.0
    n, new_state = merged_negatives(
        4, 12, table, guide, np.uint64(55), np.zeros((V, D), np.float32), targets, weights
    )
    negatives, ref_state = draw_negatives_reference(table, 55, 12)
    want_targets, want_counts = merged_negatives_reference(centres, negatives)
    assert int(new_state) == ref_state
    assert targets[4:n].tolist() == want_targets and weights[4:n].tolist() == want_counts
    assert 0 in negatives and 2 in negatives and 1 in want_targets  # dropped, and kept
    assert not {0, 2, 7} & set(want_targets)


@pytest.mark.parametrize("cbow_mean", [True, False])
@pytest.mark.parametrize(("use_sample", "shrink", "batch"), [(True, True, 5), (False, False, 1)])
@pytest.mark.parametrize(
    ("negative", "hs", "lr"),
    [(4, False, 0.25), (0, True, 0.25), (3, True, 0.25), (12, False, 0.05)],
)
def test_batched_cbow_job_matches_reference(use_sample, shrink, batch, cbow_mean, negative, hs, lr):
    """Minibatches of 5 windows far apart, and of one window."""
    rest = (cbow_mean, batch, lr, 424242)

    def kernel(*args):  # no telemetry, no bags
        return train_job_batched_cbow(*args, None, None)

    reference = train_job_batched_cbow_reference
    _assert_job_matches(kernel, reference, negative, hs, (use_sample, 3, shrink), rest)


def test_batched_cbow_job_differs_from_the_classic_one():
    """Shared negatives and one snapshot per minibatch: another algorithm, not a reordering."""
    W_in, ids, starts, thresholds, out, _ = _job_inputs(5, False)
    classic_in, classic_out = W_in.copy(), _copy(out)
    head = ((ids, starts, 0, 5), (thresholds, True, 3, True))
    train_job_batched_cbow(W_in, *head, out, None, True, 8, 0.25, 9, False, None, None)
    train_job(classic_in, *head, classic_out, None, False, True, 0.25, 9, False)
    assert not np.allclose(W_in, classic_in, atol=1e-6)


# -- the model's kernel option -------------------------------------------------------------------

CORPUS = planted_corpus(3000, seed=0)
SMALL = dict(vector_size=24, window=5, min_count=5, sample=0.0, negative=5, workers=1, epochs=8)


def analogy_accuracy(model) -> float:
    """3CosAdd over unit vectors on the planted analogies (inputs excluded)."""
    keys, table = model.index_to_key_, model.W_in_
    index = {k: i for i, k in enumerate(keys)}
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    hits = 0
    for a, b, c, d in planted_analogies():
        scores = unit @ (unit[index[b]] - unit[index[a]] + unit[index[c]])
        scores[[index[a], index[b], index[c]]] = -np.inf
        hits += keys[int(np.argmax(scores))] == d
    return hits / len(planted_analogies())


@pytest.mark.parametrize("kernel", ["batched", "hogbatch"])
@pytest.mark.parametrize("hs", [False, True])
def test_the_model_trains_with_the_batched_kernel(hs, kernel):
    batched = Word2Vec(**SMALL, kernel=kernel, hierarchical_softmax=hs).fit(CORPUS)
    classic = Word2Vec(**SMALL, kernel="classic", hierarchical_softmax=hs).fit(CORPUS)
    assert not np.array_equal(batched.W_in_, classic.W_in_)
    assert analogy_accuracy(batched) >= 0.9
    again = Word2Vec(**SMALL, kernel=kernel, hierarchical_softmax=hs).fit(CORPUS)
    assert np.array_equal(again.W_in_, batched.W_in_)  # one worker: bit-identical


def test_batched_shares_negatives_across_windows_and_hogbatch_does_not():
    batched = Word2Vec(**{**SMALL, "epochs": 1}, kernel="batched").fit(CORPUS)
    hogbatch = Word2Vec(**{**SMALL, "epochs": 1}, kernel="hogbatch").fit(CORPUS)
    assert not np.array_equal(batched.W_in_, hogbatch.W_in_)


def test_the_kernel_is_validated_and_a_parameter():
    with pytest.raises(
        ParameterError, match="kernel must be one of 'batched', 'hogbatch', 'classic', got 'fast'"
    ):
        Word2Vec(kernel="fast")
    with pytest.raises(ParameterError, match="'hogbatch' is a skip-gram kernel"):
        Word2Vec(architecture="cbow", kernel="hogbatch")
    assert Word2Vec().kernel == "batched"  # the default, chosen by measurement (docs/cores.md)
    model = Word2Vec(kernel="classic")
    assert model.get_params()["kernel"] == "classic" and "kernel='classic'" in repr(model)


@pytest.mark.parametrize("hs", [False, True])
def test_cbow_trains_with_the_batched_kernel(hs):
    params = {**SMALL, "architecture": "cbow", "hierarchical_softmax": hs}
    batched = Word2Vec(**params, kernel="batched").fit(CORPUS)
    classic = Word2Vec(**params, kernel="classic").fit(CORPUS)
    assert not np.array_equal(batched.W_in_, classic.W_in_)
    assert analogy_accuracy(batched) >= analogy_accuracy(classic) - 0.1
    again = Word2Vec(**params, kernel="batched").fit(CORPUS)
    assert np.array_equal(again.W_in_, batched.W_in_)  # one worker: bit-identical


def test_save_load_keeps_the_kernel_and_its_next_step(tmp_path):
    model = Word2Vec(**{**SMALL, "epochs": 2}, kernel="batched").fit(CORPUS)
    path = tmp_path / "w2v.npz"
    model.save(path)
    loaded = Word2Vec.load(path)
    assert loaded.kernel == "batched" and loaded.get_params() == model.get_params()
    model.train(CORPUS, epochs=1)
    loaded.train(CORPUS, epochs=1)
    assert np.array_equal(loaded.W_in_, model.W_in_) and np.array_equal(loaded.W_out_, model.W_out_)


def test_a_checkpoint_resumes_with_its_kernel_only(tmp_path):
    path = tmp_path / "ckpt.npz"
    Word2Vec(**{**SMALL, "epochs": 2}, kernel="batched").fit(CORPUS, checkpoint=path)
    other = "classic"
    with pytest.raises(ValueError, match=f"kernel saved 'batched', now '{other}'"):
        Word2Vec(**{**SMALL, "epochs": 2}, kernel=other).fit(CORPUS, resume=path)


def test_a_file_saved_before_the_option_loads_with_the_classic_kernel():
    saved = Path(__file__).parent / "saved_by_0_1" / "Word2Vec.npz"
    model = Word2Vec.load(saved)
    assert model.kernel == "classic"


def test_a_cbow_file_of_version_2_loads_and_resumes_with_the_classic_kernel(
    tmp_path, as_saved_by_version
):
    """Version 2's "batched" trained CBOW with the classic kernel: such a file keeps it."""
    params = {**SMALL, "architecture": "cbow", "epochs": 2}
    classic = Word2Vec(**params, kernel="classic").fit(CORPUS)
    path = tmp_path / "cbow.npz"
    classic.save(path)
    as_saved_by_version(path)
    loaded = Word2Vec.load(path)
    assert loaded.kernel == "classic"
    loaded.train(CORPUS, epochs=1)
    classic.train(CORPUS, epochs=1)
    assert np.array_equal(loaded.W_in_, classic.W_in_)
    checkpoint = tmp_path / "ckpt.npz"
    Word2Vec(**{**params, "epochs": 3}, kernel="classic").fit(CORPUS, checkpoint=checkpoint)
    as_saved_by_version(checkpoint)
    with pytest.raises(ValueError, match="kernel saved 'classic', now 'batched'"):
        Word2Vec(**{**params, "epochs": 3}).fit(CORPUS, resume=checkpoint)


@pytest.mark.parametrize("version", [2, 3])
def test_a_skipgram_file_of_versions_2_and_3_resumes_with_a_draw_a_window(
    tmp_path, version, as_saved_by_version
):
    """Their "batched" drew negatives for every window: "hogbatch" now, step for step."""
    model = Word2Vec(**{**SMALL, "epochs": 1}, kernel="hogbatch").fit(CORPUS)
    path = tmp_path / "sg.npz"
    model.save(path)
    as_saved_by_version(path, version)
    loaded = Word2Vec.load(path)
    assert loaded.kernel == "hogbatch"
    loaded.train(CORPUS, epochs=1)
    model.train(CORPUS, epochs=1)
    assert np.array_equal(loaded.W_in_, model.W_in_)


def test_the_batched_kernels_sigmoid_is_the_exact_one_to_float_precision():
    sigmoid = numba.njit(lambda v: fast_sigmoid(v))
    x = np.linspace(-40, 40, 20_001, dtype=np.float32)
    exact = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    approx = np.array([sigmoid(v) for v in x], dtype=np.float64)
    assert np.abs(approx - exact).max() < 2.5e-7
