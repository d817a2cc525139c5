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


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_word2vec_counts_every_row_each_example_moved(architecture):
    model = rowbook.Word2Vec(
        **EXACT, architecture=architecture, shrink_windows=False, row_stats=True
    ).fit(CORPUS)
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
