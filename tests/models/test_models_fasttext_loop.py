"""fastText's loop step for step (train_like_fasttext) against the ``fasttext`` package on one thread."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.checks import ParameterError
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.minstd import minstd_next, minstd_seed
from rowbook.data.morphology import morphology_corpus
from rowbook.models import FastText
from rowbook.models.word_vectors.fasttext_loop import fasttext_initial_input, train_like_fasttext
from rowbook.vectors.fasttext_format import read_fasttext_bin

# (nwords + bucket) * dim * 4 bytes above glibc's largest mmap threshold (32 MiB): fastText's
# table is then fresh zero pages where its one thread never writes (the premise is checked)
SETTINGS = {"dim": 10, "ws": 3, "minCount": 2, "minn": 3, "maxn": 5, "bucket": 900_000}
SETTINGS |= {"lr": 0.05, "neg": 4, "t": 1e-3, "thread": 1}


def test_minstd_rand_is_the_standard_engine():
    """[rand.predef]: the 10000th draw of a default-constructed ``minstd_rand`` is 399268537."""
    state = minstd_seed(1)
    for _ in range(10_000):
        state = minstd_next(state)
    assert state == 399268537
    assert minstd_seed(0) == minstd_seed(2147483647) == 1


@pytest.mark.parametrize(("architecture", "epochs"), [("skipgram", 2), ("cbow", 3)])
def test_tables_equal_fasttexts_on_one_thread(tmp_path, train_fasttext, architecture, epochs):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in morphology_corpus()[:300]), "utf-8")
    theirs = train_fasttext(path, model=architecture, epoch=epochs, **SETTINGS)
    theirs.save_model(str(tmp_path / "ft.bin"))
    file = read_fasttext_bin(tmp_path / "ft.bin")
    start = fasttext_initial_input(len(file.input), SETTINGS["dim"], seed=0, threads=1)
    model = FastText(
        architecture=architecture,
        vector_size=SETTINGS["dim"],
        window=SETTINGS["ws"],
        min_count=SETTINGS["minCount"],
        minn=SETTINGS["minn"],
        maxn=SETTINGS["maxn"],
        bucket=SETTINGS["bucket"],
        negative=SETTINGS["neg"],
        sample=SETTINGS["t"],
        lr=SETTINGS["lr"],
        epochs=epochs,
        seed=0,  # fastText's unsupervised training seeds with 0
    )
    vocab = CountedVocab(file.words, file.counts, file.ntokens, 0)  # fastText's order of ties
    train_like_fasttext(model, path, vocab=vocab)
    trained = np.any(model.W_in_ != start, axis=1)  # (rows,) rows the loop moved
    if not np.array_equal(file.input[~trained], start[~trained]):
        pytest.skip("fastText's never-written table memory is not zero pages on this platform")
    assert trained[: len(file.words)].all() and trained[len(file.words) :].sum() > 1000
    assert model.vectors.index_to_key == file.words  # "</s>" among the words, as in fastText
    np.testing.assert_allclose(model.W_in_, file.input, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(model.W_out_, file.output, rtol=1e-5, atol=1e-7)
    assert np.any(model.W_out_ != 0, axis=1).all()  # every output row learned, from zero


def test_own_vocabulary_and_files(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in morphology_corpus()[:200]), "utf-8")
    model = FastText(vector_size=8, min_count=2, bucket=1000, epochs=1, seed=0)
    train_like_fasttext(model, path)
    counts = dict(zip(model.vectors.index_to_key, model.counts_.tolist(), strict=True))
    assert counts["</s>"] == 200 and list(model.counts_) == sorted(model.counts_, reverse=True)
    assert model.W_in_.shape == (len(counts) + 1000, 8)
    with pytest.raises(ParameterError, match="min_lr"):
        train_like_fasttext(FastText(min_lr=1e-4), path)


@pytest.mark.parametrize("resample", [True, False])
def test_the_loop_counts_draws_equal_to_their_target(tmp_path, resample):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in morphology_corpus()[:200]), "utf-8")
    model = FastText(vector_size=8, min_count=2, bucket=1000, epochs=1, seed=0, negative=5)
    n_words = len(train_like_fasttext(model, path).vectors.index_to_key)
    tally = np.zeros((n_words, 2), dtype=np.int64)
    train_like_fasttext(model, path, resample=resample, tally=tally)
    examples, equal = tally[:, 0], tally[:, 1]
    assert examples.sum() > 0 and equal.sum() > 0  # </s> and frequent words meet themselves
    assert np.all(equal <= 5 * examples) and equal.sum() < examples.sum()
    with pytest.raises(ParameterError, match="tally"):
        train_like_fasttext(model, path, tally=np.zeros((3, 2), np.int64))


def test_initial_table_is_drawn_a_tenth_per_thread():
    one, two = fasttext_initial_input(50, 4, 5, 1), fasttext_initial_input(50, 4, 5, 2)
    assert one[:5].all() and not one[5:].any()  # rows * dim / 10 values a thread
    np.testing.assert_array_equal(two[:5], one[:5])
    assert two[5:10].all() and not two[10:].any() and not np.array_equal(two[5:10], one[:5])
    assert np.abs(fasttext_initial_input(50, 4, 5, 10)).max() <= 0.25
    # fastText's seed 0 (its only one for unsupervised training) seeds the first tenth with 0
    # and the second with 1, and minstd_rand makes both 1: the two tenths are equal
    zero = fasttext_initial_input(50, 4, 0, 2)
    np.testing.assert_array_equal(zero[:5], zero[5:10])
