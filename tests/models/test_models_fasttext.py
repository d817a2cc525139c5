"""FastText: kernels against their reference, maxn=0 against Word2Vec, files against fasttext."""

from __future__ import annotations

import numpy as np
import pytest

import rowbook
from rowbook.data import negative_guide, negative_table, sample_thresholds
from rowbook.data.corpus import read_corpus
from rowbook.data.morphology import (
    HELD_OUT_SUFFIX,
    made_up_stems,
    morphology_corpus,
    partners,
)
from rowbook.data.sampling import job_seed
from rowbook.models import FastText, NotFittedError, Word2Vec
from rowbook.models.word_vectors.fasttext_kernels import train_job
from rowbook.models.word_vectors.word2vec_reference import (
    fasttext_job_reference as train_job_reference,
)
from rowbook.text.char_ngrams import subword_table
from rowbook.vectors import SubwordVectors

HELD_OUT = HELD_OUT_SUFFIX


def _stems(n: int) -> list[str]:
    return made_up_stems(n)


CORPUS = morphology_corpus()
SMALL = {
    "vector_size": 24,
    "min_count": 1,
    "bucket": 5000,
    "epochs": 3,
    "workers": 1,
    "sample": 1e-3,
}


@pytest.fixture(scope="module")
def trained() -> FastText:
    return FastText(**{**SMALL, "epochs": 5}).fit(CORPUS)


# -- the kernel and its reference ------------------------------------------------------


@pytest.mark.parametrize("skipgram", [True, False])
@pytest.mark.parametrize(("use_sample", "redraw"), [(True, False), (False, False), (True, True)])
def test_kernel_equals_reference_draw_for_draw(skipgram, use_sample, redraw):
    vocab, enc = read_corpus(CORPUS[:40], min_count=1)
    starts, ids = subword_table(vocab.keys, minn=3, maxn=5, bucket=200)
    rng = np.random.default_rng(1)
    W_in = ((rng.random((len(vocab) + 200, 16)) - 0.5) / 16).astype(np.float32)
    W_out = (rng.standard_normal((len(vocab), 16)) * 0.3).astype(np.float32)
    table = negative_table(vocab.counts, 0.5)
    thresholds = sample_thresholds(vocab.counts, 1e-2)
    ref_in, ref_out = W_in.copy(), W_out.copy()
    sentences = (enc.ids, enc.starts, 0, len(enc.starts) - 1)
    head = ((starts, ids), sentences, (thresholds, use_sample, 4, True))
    seed = job_seed(1, 0, 0)
    out = (W_out, table, negative_guide(table), 5)
    n = train_job(W_in, *head, out, skipgram, 0.05, seed, None, redraw)
    n_ref = train_job_reference(
        ref_in, *head, (ref_out, table, None, 5), skipgram, 0.05, seed, redraw
    )
    assert n == n_ref > 0
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(W_out, ref_out, rtol=1e-4, atol=1e-6)
    assert np.abs(W_in[len(vocab) :] - W_in.copy()[len(vocab) :]).max() == 0  # sanity of the copy
    touched = np.flatnonzero(
        np.any(
            ref_in != ((np.random.default_rng(1).random(W_in.shape) - 0.5) / 16).astype(np.float32),
            axis=1,
        )
    )
    assert touched.max() >= len(vocab)  # n-gram rows were trained, not only word rows


def test_every_row_of_a_bag_takes_the_whole_step():
    """Skip-gram pairs by hand, in fastText's orientation: the centre's bag predicts its
    context word; h = mean of the bag, each bag row += h's full step."""
    vocab, enc = read_corpus([["abcd", "wxyz"]], min_count=1)
    starts, ids = subword_table(vocab.keys, minn=3, maxn=3, bucket=50)
    rng = np.random.default_rng(0)
    W_in = rng.standard_normal((len(vocab) + 50, 4)).astype(np.float32)
    W_out = rng.standard_normal((len(vocab), 4)).astype(np.float32)
    table = negative_table(np.array([1, 10**9]), 1.0)  # every negative is word 1
    before_in, before_out = W_in.copy(), W_out.copy()
    out = (W_out, table, negative_guide(table), 1)
    sampling = (sample_thresholds(vocab.counts, 0), False, 1, True)
    train_job(W_in, (starts, ids), (enc.ids, enc.starts, 0, 1), sampling, out, True, 0.5, 7)
    w_in, w_out = before_in.copy(), before_out.copy()
    words = enc.ids.tolist()  # two positions, window 1: each word's bag predicts the other
    for center, context in ((words[0], words[1]), (words[1], words[0])):
        bag = ids[starts[center] : starts[center + 1]]
        h = w_in[bag].mean(0)
        step = np.zeros(4, np.float32)
        negatives = [] if context == 1 else [1]  # a negative equal to the target is skipped
        for target, label in [(context, 1.0), *[(t, 0.0) for t in negatives]]:
            g = 0.5 * (label - 1 / (1 + np.exp(-h @ w_out[target])))
            step += g * w_out[target]
            w_out[target] += g * h
        np.add.at(w_in, bag, step)  # once per occurrence
    np.testing.assert_allclose(W_in, w_in, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(W_out, w_out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("negative", [1, 3])
def test_redraw_gives_every_example_its_negatives(negative):
    """Two words drawn half and half: with ``redraw`` each example's ``negative`` negatives
    are all the other word, whatever the generator gives (fastText's ``getNegative``)."""
    vocab, enc = read_corpus([["abcd", "wxyz"]], min_count=1)
    starts, ids = subword_table(vocab.keys, minn=3, maxn=3, bucket=50)
    rng = np.random.default_rng(0)
    W_in = rng.standard_normal((len(vocab) + 50, 4)).astype(np.float32)
    W_out = rng.standard_normal((len(vocab), 4)).astype(np.float32)
    table = negative_table(np.array([1, 1]), 1.0)
    before_in, before_out = W_in.copy(), W_out.copy()
    out = (W_out, table, negative_guide(table), negative)
    sampling = (sample_thresholds(vocab.counts, 0), False, 1, True)
    job = ((starts, ids), (enc.ids, enc.starts, 0, 1), sampling, out, True, 0.5)
    train_job(W_in, *job, 7, None, True)
    w_in, w_out = before_in.copy(), before_out.copy()
    words = enc.ids.tolist()
    for center, context in ((words[0], words[1]), (words[1], words[0])):
        bag = ids[starts[center] : starts[center + 1]]
        h = w_in[bag].mean(0)
        step = np.zeros(4, np.float32)
        for target, label in [(context, 1.0)] + [(1 - context, 0.0)] * negative:
            g = 0.5 * (label - 1 / (1 + np.exp(-h @ w_out[target])))
            step += g * w_out[target]
            w_out[target] += g * h
        np.add.at(w_in, bag, step)
    np.testing.assert_allclose(W_in, w_in, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(W_out, w_out, rtol=1e-5, atol=1e-6)


# -- maxn=0 is word2vec ----------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["classic", "batched"])
def test_maxn_zero_cbow_is_word2vec_bit_for_bit(kernel):
    """Without n-grams a bag is its word's row: fastText's CBOW is word2vec's, bit for bit,
    with either kernel, once a negative equal to its target is skipped as word2vec does. (Its skip-gram is word2vec's with each pair turned round, fastText's orientation; the
    hand-computed pairs above and the reference hold that.)"""
    common = {
        "architecture": "cbow",
        "vector_size": 16,
        "window": 4,
        "min_count": 2,
        "negative": 5,
        "sample": 1e-3,
        "epochs": 2,
        "workers": 1,
        "seed": 3,
        "batch_words": 2000,
    }
    rates = {"lr": 0.025, "min_lr": 1e-4, "kernel": kernel}
    ft = FastText(**common, **rates, maxn=0, ns_exponent=0.75, redraw=False).fit(CORPUS[:1500])
    w2v = Word2Vec(**common, **rates).fit(CORPUS[:1500])
    assert ft.vectors.index_to_key == w2v.index_to_key_
    assert ft.W_in_.shape == w2v.W_in_.shape  # no bucket rows without n-grams
    np.testing.assert_array_equal(ft.W_in_, w2v.W_in_)
    np.testing.assert_array_equal(ft.W_out_, w2v.W_out_)
    np.testing.assert_array_equal(ft.vectors.vectors, w2v.vectors.vectors)


# -- planted morphology ------------------------------------------------------------------


def _stem_hits(query: SubwordVectors, table: SubwordVectors) -> float:
    """Share of unseen inflections (stem + "er", vectors from ``query``) whose most similar
    bare stem (vectors from ``table``) is their own."""
    stems = _stems(120)
    assert not any(s + HELD_OUT in table for s in stems)
    S = np.stack([table.vector_for(s) for s in stems])  # (120, d)
    Q = np.stack([query.vector_for(s + HELD_OUT) for s in stems])  # (120, d)
    cos = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (
        S / np.linalg.norm(S, axis=1, keepdims=True)
    ).T
    return float(np.mean(np.argmax(cos, axis=1) == np.arange(len(stems))))


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_unseen_inflections_land_next_to_their_stems(architecture):
    model = FastText(**{**SMALL, "architecture": architecture}).fit(CORPUS)
    assert _stem_hits(model.vectors, model.vectors) >= 0.9
    nearest = [model.vectors.most_similar(s + HELD_OUT, topn=1)[0][0] for s in _stems(120)]
    assert np.mean([w.startswith(s) for w, s in zip(nearest, _stems(120), strict=True)]) >= 0.9
    # the control: unseen words' vectors from a table whose n-gram rows are shuffled
    V = len(model.vectors)
    W = model.W_in_.copy()
    W[V:] = np.random.default_rng(0).permutation(W[V:])
    broken = SubwordVectors(model.vectors.index_to_key, W, minn=3, maxn=6, bucket=SMALL["bucket"])
    assert _stem_hits(broken, model.vectors) <= 0.1


def test_meaning_is_learned(trained):
    """A stem's forms end up next to its partners (context alone says so); untrained, they do not."""
    untrained = SubwordVectors(
        trained.vectors.index_to_key,
        FastText(**SMALL).build_vocab(CORPUS).W_in_,
        minn=3,
        maxn=6,
        bucket=SMALL["bucket"],
    )

    def with_partner(vectors: SubwordVectors) -> float:
        stems = _stems(120)
        found = [
            set(partners(s)) & {w for w, _ in vectors.most_similar(s + "ing", topn=10)}
            for s in stems
        ]
        return float(np.mean([bool(f) for f in found]))

    assert with_partner(trained.vectors) >= 0.8
    assert with_partner(untrained) <= 0.2


# -- the contract --------------------------------------------------------------------------


def test_one_worker_is_bit_identical_and_seeded():
    a = FastText(**SMALL).fit(CORPUS[:500])
    b = FastText(**SMALL).fit(CORPUS[:500])
    c = FastText(**{**SMALL, "seed": 2}).fit(CORPUS[:500])
    assert np.array_equal(a.W_in_, b.W_in_) and np.array_equal(a.W_out_, b.W_out_)
    assert not np.array_equal(a.W_in_, c.W_in_)


def test_two_workers_learn_too():
    model = FastText(**{**SMALL, "workers": 2, "batch_words": 500}).fit(CORPUS)
    assert _stem_hits(model.vectors, model.vectors) >= 0.9


class Stop(Exception):
    pass


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_checkpoint_resume_equals_uninterrupted_run(tmp_path, architecture):
    params = {**SMALL, "architecture": architecture, "epochs": 3, "batch_words": 1000}
    full = FastText(**params).fit(CORPUS[:800])
    path = tmp_path / "ft.npz"

    def stop_after_two(progress) -> None:
        if progress.epoch == 2:
            raise Stop

    interrupted = FastText(**params)
    with pytest.raises(Stop):
        interrupted.fit(CORPUS[:800], checkpoint=path, callback=stop_after_two)
    with pytest.raises(NotFittedError):
        interrupted.vectors  # noqa: B018 - learned state is only set by a completed fit
    resumed = FastText(**{**params, "workers": 1}).fit(CORPUS[:800], resume=path, checkpoint=path)
    assert np.array_equal(resumed.W_in_, full.W_in_) and np.array_equal(resumed.W_out_, full.W_out_)
    assert [p.epoch for p in resumed.history_] == [1, 2, 3]
    assert [p.epoch for p in rowbook.load(path).history_] == [1, 2, 3]


def test_resume_checks_parameters_and_corpus(tmp_path):
    path = tmp_path / "ft.npz"
    FastText(**{**SMALL, "epochs": 1}).fit(CORPUS[:300], checkpoint=path)
    with pytest.raises(ValueError, match=r"other parameters.*maxn"):
        FastText(**{**SMALL, "epochs": 1, "maxn": 5}).fit(CORPUS[:300], resume=path)
    with pytest.raises(ValueError, match="different corpus"):
        FastText(**{**SMALL, "epochs": 1}).fit(CORPUS[:100], resume=path)


def test_save_load_round_trip(trained, tmp_path):
    path = tmp_path / "ft.npz"
    trained.save(path)
    back = rowbook.load(path)
    assert isinstance(back, FastText) and back.get_params() == trained.get_params()
    np.testing.assert_array_equal(back.W_in_, trained.W_in_)
    np.testing.assert_array_equal(
        back.vectors.vector_for("whalebone"), trained.vectors.vector_for("whalebone")
    )


def test_bad_parameters_name_the_parameter():
    with pytest.raises(ValueError, match="maxn must be an integer >= 4, got 3"):
        FastText(minn=4, maxn=3)
    with pytest.raises(ValueError, match="architecture must be one of"):
        FastText(architecture="sg")
    with pytest.raises(ValueError, match="min_lr"):
        FastText(lr=0.01, min_lr=0.1)
    with pytest.raises(NotFittedError, match=r"not fitted.*\.W_in"):
        FastText().W_in_  # noqa: B018


# -- fastText's files --------------------------------------------------------------------


def test_save_fasttext_gives_fasttext_the_same_vectors(trained, tmp_path):
    fasttext = pytest.importorskip("fasttext")
    path = tmp_path / "ft.bin"
    trained.save_fasttext(path)
    theirs = fasttext.load_model(str(path))
    assert theirs.words == list(trained.vectors.index_to_key)
    for word in [*trained.vectors.index_to_key[:50], "whalebone", _stems(120)[0] + HELD_OUT, "é"]:
        np.testing.assert_allclose(
            trained.vectors.vector_for(word), theirs.get_word_vector(word), atol=1e-6, rtol=1e-6
        )
    again = FastText.load_fasttext(path)
    np.testing.assert_array_equal(again.W_in_, trained.W_in_)
    np.testing.assert_array_equal(again.W_out_, trained.W_out_)
    assert again.get_params() == {**trained.get_params(), "workers": None}


def test_load_fasttext_of_a_fasttext_trained_model(tmp_path, train_fasttext):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(s) for s in CORPUS[:1500]) + "\n", encoding="utf-8")
    model = train_fasttext(
        path, model="cbow", dim=16, minn=2, maxn=4, bucket=4000, minCount=1, epoch=1, lr=0.01
    )
    model.save_model(str(tmp_path / "m.bin"))
    ours = FastText.load_fasttext(tmp_path / "m.bin")
    assert (ours.architecture, ours.minn, ours.maxn, ours.bucket, ours.vector_size) == (
        "cbow",
        2,
        4,
        4000,
        16,
    )
    for word in [*model.words[:30], "whalebone"]:
        np.testing.assert_allclose(
            ours.vectors.vector_for(word), model.get_word_vector(word), atol=1e-6, rtol=1e-6
        )


def test_build_vocab_update_keeps_the_bucket_rows_and_trains_on():
    from rowbook.models.word_vectors.word2vec_training import initial_rows

    model = FastText(**SMALL).fit(CORPUS[:500])
    V, before, old_vectors = len(model.vectors), model.W_in_.copy(), model.vectors.vectors.copy()
    extra = [["zzyzx", "zzyzxs", "zzyzx"]] * 5
    model.build_vocab(extra, update=True)
    assert len(model.vectors) == V + 2 and model.W_in_.shape[0] == V + 2 + SMALL["bucket"]
    np.testing.assert_array_equal(model.W_in_[:V], before[:V])
    kept = np.any(before[V:] != 0, axis=1)  # buckets in use before: kept, after the new words
    np.testing.assert_array_equal(model.W_in_[V + 2 :][kept], before[V:][kept])
    changed = set(np.flatnonzero(np.any(model.W_in_[V + 2 :] != before[V:], axis=1)).tolist())
    new_rows = {i - V - 2 for i in model.vectors.subword_ids("zzyzxs").tolist()[1:]}
    assert (
        changed == {i for i in new_rows if not kept[i]} != set()
    )  # buckets only the new words use
    np.testing.assert_array_equal(model.W_in_[V : V + 2], initial_rows(1, V + 2, 24)[V:])
    np.testing.assert_array_equal(model.vectors.vectors[:V], old_vectors)  # bags moved with them
    model.train(extra + CORPUS[:50], epochs=1)
    assert not np.array_equal(model.W_in_[V : V + 2], initial_rows(1, V + 2, 24)[V:])


def test_initial_input_is_initial_rows_on_the_rows_in_use_and_zero_elsewhere():
    from rowbook.models.word_vectors.fasttext import initial_input
    from rowbook.models.word_vectors.word2vec_training import initial_rows

    model = FastText(vector_size=6, minn=2, maxn=3, bucket=70_000, seed=4)
    keys = ("walk", "walked", "talk")
    W = initial_input(4, keys, model)
    full = initial_rows(4, 3 + 70_000, 6)
    used = np.unique(subword_table(keys, minn=2, maxn=3, bucket=70_000)[1])
    np.testing.assert_array_equal(W[used], full[used])
    unused = np.setdiff1d(np.arange(len(W)), used)
    assert not W[unused].any() and len(unused) > 69_000
