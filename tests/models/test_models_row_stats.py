"""Per-row telemetry of the word-vector models: the counts equal a count by hand of the rows
each example moved, the tables are the same with it on or off, and it survives save, resume
and a grown vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

import rowbook
from rowbook.data.corpus import read_corpus
from rowbook.text.char_ngrams import subword_table

CORPUS = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["a", "dog", "sat", "on", "a", "log"],
    ["the", "dog", "saw", "the", "cat"],
] * 7
EXACT = {"vector_size": 8, "min_count": 1, "epochs": 2, "workers": 1, "sample": 0.0, "window": 2}


def _windows(model, corpus):
    """``(center, context words)`` of every position, every word kept, full windows."""
    _, enc = read_corpus(corpus, min_count=model.min_count)
    ids, starts = enc.ids, enc.starts
    for s in range(len(starts) - 1):
        words = ids[starts[s] : starts[s + 1]].tolist()
        for i, center in enumerate(words):
            lo, hi = max(i - model.window, 0), min(i + model.window + 1, len(words))
            yield center, [words[j] for j in range(lo, hi) if j != i]


def _counted_by_hand(model, corpus, rows_of) -> np.ndarray:
    """Updates per row: each example moves the rows of its input words, once per occurrence."""
    counts = np.zeros(len(model.W_in_), dtype=np.int64)
    for center, context in _windows(model, corpus):
        if model.architecture == "skipgram":
            inputs = [context_word for context_word in context]  # word2vec: context rows
            if isinstance(model, rowbook.FastText):  # fastText: the centre's bag, per pair
                pairs = len(context) if model.kernel == "classic" else min(len(context), 1)
                inputs = [center] * pairs  # (batched: once a window)
        else:
            inputs = context
        for word in inputs:
            for row in rows_of(word):
                counts[row] += 1
    return counts * model.epochs


@pytest.mark.parametrize("kernel", ["classic", "batched"])
@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_word2vec_counts_every_row_each_example_moved(architecture, kernel):
    settings = {**EXACT, "shrink_windows": False, "row_stats": True}
    model = rowbook.Word2Vec(**settings, architecture=architecture, kernel=kernel).fit(CORPUS)
    stats = model.row_stats_
    assert stats.updates.tolist() == _counted_by_hand(model, CORPUS, lambda w: [w]).tolist()
    assert stats.keys == model.index_to_key_ and stats.counts.tolist() == model.counts_.tolist()


@pytest.mark.parametrize(
    ("architecture", "kernel"),
    [("skipgram", "classic"), ("skipgram", "batched"), ("cbow", "classic"), ("cbow", "batched")],
)
def test_fasttext_counts_every_row_of_every_bag(architecture, kernel):
    settings = {**EXACT, "bucket": 40, "minn": 2, "maxn": 3, "row_stats": True}
    model = rowbook.FastText(**settings, architecture=architecture, kernel=kernel)
    model.window = 1  # the shrunk window is uniform(1, ws): with ws=1 every window is full
    model.fit(CORPUS)
    starts, bag_ids = subword_table(model.index_to_key_, minn=2, maxn=3, bucket=40)

    def rows_of(word: int) -> list[int]:
        return bag_ids[starts[word] : starts[word + 1]].tolist()

    stats = model.row_stats_
    assert stats.updates.tolist() == _counted_by_hand(model, CORPUS, rows_of).tolist()
    unused = sorted(set(range(len(stats))) - set(bag_ids.tolist()))
    assert stats.never_touched() == [stats.keys[r] for r in unused]
    assert all(k.startswith("#bucket") for k in stats.keys[len(model.index_to_key_) :])


def test_glove_counts_both_words_of_every_record():
    model = rowbook.GloVe(vector_size=6, min_count=1, epochs=3, workers=1, row_stats=True)
    model.fit(CORPUS)
    X = model.cooccurrence(CORPUS).matrix.tocoo()
    by_hand = np.bincount(np.concatenate([X.row, X.col]), minlength=len(model.index_to_key_))
    assert model.row_stats_.updates.tolist() == (by_hand * 3).tolist()


@pytest.mark.parametrize("cls", [rowbook.Word2Vec, rowbook.FastText, rowbook.GloVe])
def test_telemetry_changes_no_table(cls):
    settings = {"vector_size": 8, "min_count": 1, "epochs": 2, "workers": 1}
    off = cls(**settings).fit(CORPUS)
    on = cls(**settings, row_stats=True).fit(CORPUS)
    assert np.array_equal(off.vectors.vectors, on.vectors.vectors)
    with pytest.raises(ValueError, match=r"without telemetry.*row_stats=True"):
        off.row_stats_  # noqa: B018


def test_steps_are_jobs_over_the_models_life_and_distance_is_measured():
    model = rowbook.Word2Vec(**EXACT, batch_words=20, row_stats=True).fit(CORPUS)
    stats = model.row_stats_
    jobs_per_epoch = stats.steps // model.epochs
    assert jobs_per_epoch > 1 and stats.steps == jobs_per_epoch * 2
    assert (
        0 < stats.last_step.max() <= stats.steps and (stats.last_step[stats.updates > 0] > 0).all()
    )
    start = rowbook.Word2Vec(**EXACT, batch_words=20).build_vocab(CORPUS).W_in_
    moved = np.linalg.norm(model.W_in_ - start, axis=1)
    np.testing.assert_allclose(stats.distance, moved, rtol=1e-6)
    model.train(CORPUS, epochs=1)  # another call: the steps go on counting
    assert model.row_stats_.steps == stats.steps + jobs_per_epoch


def test_a_checkpoint_resumes_the_telemetry(tmp_path):
    path = tmp_path / "run.npz"
    full = rowbook.Word2Vec(**EXACT, row_stats=True).fit(CORPUS)

    class Stop(Exception):
        pass

    def stop(progress):
        if progress.epoch == 1:
            raise Stop

    with pytest.raises(Stop):
        rowbook.Word2Vec(**EXACT, row_stats=True).fit(CORPUS, checkpoint=path, callback=stop)
    resumed = rowbook.Word2Vec(**EXACT, row_stats=True).fit(CORPUS, resume=path)
    for name in ("updates", "grad_norm_sum", "last_step", "distance"):
        assert np.array_equal(getattr(resumed.row_stats_, name), getattr(full.row_stats_, name))
    assert rowbook.load(path).row_stats_.steps == 1  # the checkpoint of epoch 1


def test_a_grown_vocabulary_grows_the_telemetry_around_the_buckets():
    model = rowbook.FastText(**EXACT, bucket=30, row_stats=True).fit(CORPUS)
    before = model.row_stats_
    V = len(model.index_to_key_)
    model.build_vocab([["zebra", "cat", "zebra"]] * 3, update=True)
    model.train([["zebra", "cat", "zebra"]] * 3, epochs=1)
    after = model.row_stats_
    assert len(after) == len(before) + 1 and after.keys[V] == "zebra"
    assert (after.updates[:V] >= before.updates[:V]).all()
    assert (after.updates[V + 1 :] >= before.updates[V:]).all()  # buckets kept, shifted by one
    assert after.updates[V] > 0


# -- the kernels' record against a recount of their NumPy references' steps --------------------


def _word2vec_kernels():
    from rowbook.models.word_vectors import (
        word2vec_batched_cbow_reference,
        word2vec_batched_reference,
        word2vec_reference,
    )
    from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import train_job_batched_cbow
    from rowbook.models.word_vectors.word2vec_batched_kernels import train_job_batched
    from rowbook.models.word_vectors.word2vec_kernels import train_job

    reference = word2vec_reference.train_job_reference
    return {  # name: (kernel, its arguments after the tree, reference, module it scatters from)
        "skipgram classic": (train_job, (True, True), reference, word2vec_reference),
        "cbow classic, sum": (train_job, (False, False), reference, word2vec_reference),
        "skipgram batched": (
            train_job_batched,
            (2,),  # two windows a draw of negatives
            word2vec_batched_reference.train_job_batched_reference,
            word2vec_batched_reference,
        ),
        "cbow batched": (
            lambda *args: train_job_batched_cbow(*args, None),  # no bags
            (True, 4),
            word2vec_batched_cbow_reference.train_job_batched_cbow_reference,
            word2vec_batched_cbow_reference,
        ),
    }


def _fasttext_kernels():
    from rowbook.models.word_vectors import fasttext_batched_reference, word2vec_reference
    from rowbook.models.word_vectors.fasttext_batched_kernels import train_job_batched
    from rowbook.models.word_vectors.fasttext_kernels import train_job

    reference = word2vec_reference.fasttext_job_reference
    return {
        "fasttext skipgram classic": (train_job, (True,), reference, word2vec_reference),
        "fasttext cbow classic": (train_job, (False,), reference, word2vec_reference),
        "fasttext skipgram batched": (
            train_job_batched,
            (),
            fasttext_batched_reference.fasttext_job_batched_reference,
            fasttext_batched_reference,
        ),
    }


KERNELS = {**_word2vec_kernels(), **_fasttext_kernels()}
V, BUCKETS, D, LR = 34, 12, 8, 0.2


def _recounted(monkeypatch, module, rows: int):
    """``(updates, norm_sum)`` per row, filled by ``module``'s scatter-adds from now on: one
    update per scattered row, and the norm of the step it took."""
    updates, norm_sum = np.zeros(rows, np.int64), np.zeros(rows)
    scatter = module.scatter_add_rows

    def counted(ids, steps, num_rows, **kwargs):
        np.add.at(updates, ids, 1)
        np.add.at(norm_sum, ids, np.linalg.norm(np.asarray(steps, np.float64), axis=1))
        return scatter(ids, steps, num_rows, **kwargs)

    monkeypatch.setattr(module, "scatter_add_rows", counted)
    return updates, norm_sum


@pytest.mark.parametrize("name", list(KERNELS))
def test_a_jobs_record_is_a_recount_of_its_references_steps(monkeypatch, name):
    """Two jobs with telemetry, and the same two of the kernel's NumPy reference: per row, the
    updates are the reference's scattered steps, their gradient norms sum to the steps' norms
    over ``lr``, the last job is the last that moved the row, and its start is its value
    before the first job that moved it."""
    from rowbook.data import negative_guide, negative_table, sample_thresholds
    from rowbook.models.word_vectors.telemetry import new_telemetry

    kernel, args, reference, module = KERNELS[name]
    fasttext = name.startswith("fasttext")
    rng = np.random.default_rng(5)
    ids = rng.integers(0, V - 4, size=140).astype(np.int32)  # the last 4 words never met
    starts = np.array([0, 1, 40, 41, 90, 140], dtype=np.int64)  # 1-word sentences too
    counts = np.bincount(ids, minlength=V) + 1
    rows = V + BUCKETS if fasttext else V
    W_in = ((rng.random((rows, D)) - 0.5) / D).astype(np.float32)
    W_out = (rng.standard_normal((V, D)) * 0.3).astype(np.float32)
    table = negative_table(counts)
    sampling = (sample_thresholds(counts, 0.01), True, 2, True)  # window 2, shrunk
    head, tail = (), (None,)  # word2vec: the tree (off)
    if fasttext:  # each word's bag: its row, then 0-3 buckets
        sizes = rng.integers(1, 5, size=V)
        bag_starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        bag_ids = np.concatenate(
            [[w, *rng.integers(V, rows, size=n - 1)] for w, n in enumerate(sizes)]
        ).astype(np.int32)
        head, tail = ((bag_starts, bag_ids),), ()
    ref_in, ref_out = W_in.copy(), W_out.copy()
    telemetry = new_telemetry(rows, D, np.float32)
    updates, norm_sum = _recounted(monkeypatch, module, rows)
    start, last = np.zeros_like(W_in), np.zeros(rows, np.int64)
    for job, (s0, s1) in enumerate([(0, 3), (3, 5)], start=1):
        before, rows_before = updates.copy(), W_in.copy()
        stats = (telemetry["counters"], telemetry["start"], np.int64(job))
        out = (W_out, table, negative_guide(table), 3)
        span = ((ids, starts, s0, s1), sampling)
        loss = () if fasttext else (False,)
        kernel(W_in, *head, *span, out, *tail, *args, LR, 10 + job, *loss, stats)
        reference(ref_in, *head, *span, (ref_out, *out[1:]), *tail, *args, LR, 10 + job)
        moved = updates > before
        start[moved & (before == 0)] = rows_before[moved & (before == 0)]
        last[moved] = job
    np.testing.assert_allclose(W_in, ref_in, rtol=1e-4, atol=1e-6)  # the same steps
    counters = telemetry["counters"]
    assert updates.sum() > 0 and (updates == 0).any()  # not every row moved
    assert counters[:, 0].tolist() == updates.tolist()
    np.testing.assert_allclose(counters[:, 1], norm_sum / np.float32(LR), rtol=1e-4)
    assert counters[:, 2].tolist() == last.tolist()
    moved = updates > 0
    assert np.array_equal(telemetry["start"][moved], start[moved])
