"""FastText's minibatched kernels against their NumPy references, draw for draw: skip-gram's
(a window a minibatch) and CBOW's (word2vec's minibatched CBOW over bags)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rowbook.checks import ParameterError
from rowbook.data import negative_guide, negative_table, sample_thresholds
from rowbook.data.corpus import read_corpus
from rowbook.data.morphology import HELD_OUT_SUFFIX, made_up_stems, morphology_corpus
from rowbook.data.sampling import job_seed
from rowbook.models import FastText
from rowbook.models.word_vectors.fasttext_batched_kernels import train_job_batched, window_targets
from rowbook.models.word_vectors.fasttext_batched_reference import (
    fasttext_job_batched_reference,
    window_targets_reference,
)
from rowbook.models.word_vectors.fasttext_kernels import train_job
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import train_job_batched_cbow
from rowbook.models.word_vectors.word2vec_batched_cbow_reference import (
    train_job_batched_cbow_reference,
)
from rowbook.models.word_vectors.word2vec_reference import draw_negatives_reference
from rowbook.text.char_ngrams import subword_table

CORPUS = morphology_corpus()
SMALL = {
    "vector_size": 24,
    "min_count": 1,
    "bucket": 5000,
    "epochs": 3,
    "workers": 1,
    "sample": 1e-3,
}


def _job(use_sample: bool, negative: int = 5):
    """A job's inputs on the first 40 sentences, ``(W_in, bags, sentences), sampling, out``:
    bags of n-grams 3-5 in 200 buckets, a window of 4, output rows not zero (so the scores
    are not all 0)."""
    vocab, enc = read_corpus(CORPUS[:40], min_count=1)
    bags = subword_table(vocab.keys, minn=3, maxn=5, bucket=200)
    rng = np.random.default_rng(1)
    W_in = ((rng.random((len(vocab) + 200, 16)) - 0.5) / 16).astype(np.float32)
    W_out = (rng.standard_normal((len(vocab), 16)) * 0.3).astype(np.float32)
    table = negative_table(vocab.counts, 0.5)
    out = (W_out, table, negative_guide(table), negative)
    sentences = (enc.ids, enc.starts, 0, len(enc.starts) - 1)
    sampling = (sample_thresholds(vocab.counts, 1e-2), use_sample, 4, True)
    return (W_in, bags, sentences), sampling, out


def _assert_matches_reference(kernel, reference, use_sample, negative):
    """``kernel`` and ``reference`` (each called as ``f(W_in, bags, sentences, sampling,
    out)``) on copies of one job's tables: the same words trained, the same tables to
    float32 tolerance, and the n-gram rows trained."""
    (W_in, *head), sampling, out = _job(use_sample, negative)
    W_out = out[0]
    before_in, before_out = W_in.copy(), W_out.copy()
    ref_in, ref_out = W_in.copy(), (W_out.copy(), out[1], None, negative)
    n = kernel(W_in, *head, sampling, out)
    n_ref = reference(ref_in, *head, sampling, ref_out)
    assert n == n_ref > 0
    assert not np.allclose(W_in, before_in) and not np.allclose(W_out, before_out)
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(W_out, ref_out[0], rtol=1e-4, atol=1e-6)
    n_words = len(before_out)
    assert np.any(W_in[n_words:] != before_in[n_words:])  # n-gram rows were trained


@pytest.mark.parametrize("use_sample", [True, False])
@pytest.mark.parametrize("negative", [5, 15])
@pytest.mark.parametrize("redraw", [False, True])
def test_batched_job_matches_reference(use_sample, negative, redraw):
    seed = job_seed(1, 0, 0)

    def kernel(*args):
        return train_job_batched(*args, 0.05, seed, None, redraw)

    def reference(*args):
        return fasttext_job_batched_reference(*args, 0.05, seed, redraw)

    _assert_matches_reference(kernel, reference, use_sample, negative)


def _classic_copy(job, out):
    """Copies of a job's ``W_in`` and ``out`` for the classic kernel."""
    W_in, *head = job
    return (W_in.copy(), *head), (out[0].copy(), *out[1:])


def test_batched_job_differs_from_the_classic_one():
    """Shared negatives and one bag a window: another algorithm, not a reordering."""
    job, sampling, out = _job(True)
    classic, classic_out = _classic_copy(job, out)
    train_job_batched(*job, sampling, out, 0.05, 9)
    train_job(*classic, sampling, classic_out, True, 0.05, 9)
    assert not np.allclose(job[0], classic[0], atol=1e-6)


@pytest.mark.parametrize(("use_sample", "batch"), [(True, 8), (False, 3), (True, 1)])
@pytest.mark.parametrize("negative", [5, 15])
def test_batched_cbow_job_matches_reference(use_sample, batch, negative):
    """CBOW's minibatch over bags: ``batch`` windows far apart, each ``h`` one mean over its
    context words' bags, every row of those bags taking the window's step."""
    rest = (True, batch, 0.05, job_seed(1, 0, 0))  # mean, batch, lr, seed

    def kernel(W_in, bags, sentences, sampling, out):
        head = (W_in, sentences, sampling, out, None)
        return train_job_batched_cbow(*head, *rest, False, None, bags)[0]

    def reference(W_in, bags, sentences, sampling, out):
        return train_job_batched_cbow_reference(W_in, sentences, sampling, out, None, *rest, bags)

    _assert_matches_reference(kernel, reference, use_sample, negative)


def test_batched_cbow_job_differs_from_the_classic_one():
    """Shared negatives and one snapshot per minibatch: another algorithm, not a reordering."""
    job, sampling, out = _job(True)
    classic, classic_out = _classic_copy(job, out)
    W_in, bags, sentences = job
    train_job_batched_cbow(
        W_in, sentences, sampling, out, None, True, 8, 0.05, 9, False, None, bags
    )
    train_job(*classic, sampling, classic_out, False, 0.05, 9)
    assert not np.allclose(W_in, classic[0], atol=1e-6)


@pytest.mark.parametrize(
    ("window", "counts"),
    [([3, 5, 3, 1], [1] * 30 + [10**6]), ([7, 8], [1] * 30 + [10**6]), ([2], [1] * 31)],
)
def test_window_targets_merge_repeats_and_drop_the_context(window, counts):
    """Positives first, each counted by its repeats; ``negative`` draws a pair, a draw equal
    to a positive dropped, a repeated draw merged."""
    table = negative_table(np.array(counts))
    guide = negative_guide(table)
    W_out = np.zeros((len(counts), 4), np.float32)
    words = np.array([0, *window], dtype=np.int32)  # the centre (word 0) at position 0
    targets = np.empty(len(window) * 9, np.int64)
    weights = np.empty(len(window) * 9, np.float32)
    state = 987654321
    n_positive, n, new_state = window_targets(
        words, 0, 0, len(words), 8, table, guide, np.uint64(state), W_out, targets, weights
    )
    negatives, ref_state = draw_negatives_reference(table, state, 8 * len(window))
    want_targets, want_counts, want_positive = window_targets_reference(window, negatives)
    assert int(new_state) == ref_state and n_positive == want_positive
    assert targets[:n].tolist() == want_targets
    assert weights[:n].tolist() == want_counts
    kept = sum(t not in window for t in negatives)
    assert sum(want_counts) == len(window) + kept and n < len(window) + kept  # merged


def test_window_targets_draw_a_pairs_own_context_word_again():
    """With ``redraw``, pair ``j``'s ``negative`` draws avoid its own context word (drawn
    again); a draw equal to another context word is still dropped when merged."""
    table = negative_table(np.array([1] * 10 + [40, 40]))  # words 10 and 11: most draws
    guide = negative_guide(table)
    W_out = np.zeros((12, 4), np.float32)
    window = [10, 11, 3]
    words = np.array([0, *window], dtype=np.int32)
    targets = np.empty(len(window) * 9, np.int64)
    weights = np.empty(len(window) * 9, np.float32)
    state = 123456789
    args = (words, 0, 0, len(words), 8, table, guide, np.uint64(state), W_out, targets, weights)
    n_positive, n, new_state = window_targets(*args, True)
    negatives = []
    for target in window:
        drawn, state = draw_negatives_reference(table, state, 8, avoid=target)
        assert target not in drawn
        negatives += drawn
    want_targets, want_counts, want_positive = window_targets_reference(window, negatives)
    assert int(new_state) == state and n_positive == want_positive
    assert targets[:n].tolist() == want_targets and weights[:n].tolist() == want_counts
    skipped = window_targets(*args, False)[2]
    assert int(skipped) == draw_negatives_reference(table, 123456789, 24)[1] != state


# -- the model's kernel option -------------------------------------------------------------------


def _stem_hits(vectors) -> float:
    """Share of unseen inflections whose most similar bare stem is their own."""
    stems = made_up_stems(120)
    S = np.stack([vectors.vector_for(s) for s in stems])  # (120, d)
    Q = np.stack([vectors.vector_for(s + HELD_OUT_SUFFIX) for s in stems])  # (120, d)
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    return float(np.mean(np.argmax(Q @ S.T, axis=1) == np.arange(len(stems))))


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_the_model_trains_with_the_batched_kernel(architecture):
    params = {**SMALL, "architecture": architecture}
    batched = FastText(**params, kernel="batched").fit(CORPUS)
    classic = FastText(**params, kernel="classic").fit(CORPUS)
    assert not np.array_equal(batched.W_in_, classic.W_in_)
    assert _stem_hits(batched.vectors) >= 0.9
    again = FastText(**params, kernel="batched").fit(CORPUS)
    assert np.array_equal(again.W_in_, batched.W_in_)  # one worker: bit-identical


def test_the_kernel_is_validated_and_a_parameter():
    with pytest.raises(
        ParameterError, match="kernel must be one of 'batched', 'classic', got 'fast'"
    ):
        FastText(kernel="fast")
    model = FastText(kernel="classic")
    assert model.get_params()["kernel"] == "classic" and "kernel='classic'" in repr(model)


@pytest.mark.parametrize(("architecture", "kernel"), [("skipgram", "batched"), ("cbow", "classic")])
def test_the_default_kernel_is_chosen_by_architecture(architecture, kernel):
    """``kernel=None`` (the default): skip-gram's minibatch, CBOW's classic steps (the
    choice measured in docs/cores.md)."""
    params = {**SMALL, "architecture": architecture, "epochs": 1}
    default = FastText(**params).fit(CORPUS[:300])
    chosen = FastText(**params, kernel=kernel).fit(CORPUS[:300])
    assert default.kernel is None and np.array_equal(default.W_in_, chosen.W_in_)


def test_save_load_keeps_the_kernel_and_its_next_step(tmp_path):
    model = FastText(**{**SMALL, "epochs": 1}, kernel="batched").fit(CORPUS[:500])
    path = tmp_path / "ft.npz"
    model.save(path)
    loaded = FastText.load(path)
    assert loaded.kernel == "batched" and loaded.get_params() == model.get_params()
    model.train(CORPUS[:500], epochs=1)
    loaded.train(CORPUS[:500], epochs=1)
    assert np.array_equal(loaded.W_in_, model.W_in_) and np.array_equal(loaded.W_out_, model.W_out_)


def test_a_checkpoint_resumes_with_its_kernel_only(tmp_path):
    path = tmp_path / "ckpt.npz"
    FastText(**{**SMALL, "epochs": 1}, kernel="batched").fit(CORPUS[:300], checkpoint=path)
    with pytest.raises(ValueError, match="kernel saved 'batched', now 'classic'"):
        FastText(**{**SMALL, "epochs": 1}, kernel="classic").fit(CORPUS[:300], resume=path)


def test_a_file_saved_before_the_option_loads_with_the_classic_kernel():
    saved = Path(__file__).parent / "saved_by_0_1" / "FastText.npz"
    model = FastText.load(saved)
    assert model.kernel == "classic" and model.redraw is False


def test_a_cbow_file_of_version_2_loads_and_resumes_with_the_classic_kernel(
    tmp_path, as_saved_by_version
):
    """Version 2's "batched" trained CBOW with the classic kernel: such a file keeps it."""
    params = {**SMALL, "architecture": "cbow", "epochs": 1, "redraw": False}
    classic = FastText(**params, kernel="classic").fit(CORPUS[:500])
    path = tmp_path / "cbow.npz"
    classic.save(path)
    as_saved_by_version(path)
    loaded = FastText.load(path)
    assert loaded.kernel == "classic"
    loaded.train(CORPUS[:500], epochs=1)
    classic.train(CORPUS[:500], epochs=1)
    assert np.array_equal(loaded.W_in_, classic.W_in_)


def test_a_skipgram_file_of_version_2_keeps_the_batched_kernel(tmp_path, as_saved_by_version):
    model = FastText(**{**SMALL, "epochs": 1}, kernel="batched").fit(CORPUS[:300])
    path = tmp_path / "sg.npz"
    model.save(path)
    as_saved_by_version(path)
    assert FastText.load(path).kernel == "batched"


# -- a negative equal to its target: drawn again or skipped -------------------------------------


def test_redraw_is_a_validated_parameter_that_changes_the_steps():
    with pytest.raises(ParameterError, match="redraw must be one of True, False, got 'yes'"):
        FastText(redraw="yes")
    params = {**SMALL, "epochs": 1}
    default = FastText(**params).fit(CORPUS[:300])
    again = FastText(**params, redraw=True).fit(CORPUS[:300])
    assert default.redraw is False and "redraw=True" in repr(again)
    assert not np.array_equal(default.W_in_, again.W_in_)


def test_a_file_saved_before_redraw_loads_and_resumes_skipping(tmp_path, as_saved_by_version):
    """Files before ``redraw`` skipped a negative equal to its target: they go on so."""
    model = FastText(**{**SMALL, "epochs": 1}, kernel="batched", redraw=False).fit(CORPUS[:300])
    path = tmp_path / "v3.npz"
    model.save(path)
    as_saved_by_version(path, version=3)
    loaded = FastText.load(path)
    assert loaded.redraw is False and loaded.get_params() == model.get_params()
    loaded.train(CORPUS[:300], epochs=1)
    model.train(CORPUS[:300], epochs=1)
    assert np.array_equal(loaded.W_in_, model.W_in_) and np.array_equal(loaded.W_out_, model.W_out_)
