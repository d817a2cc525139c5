"""Counts made per shard on Dask equal the counts of one pass over the whole corpus, exactly."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster

from rowbook import ByteLevelBPE, FastText, GloVe, Vocab, Word2Vec
from rowbook.data import cooccurrence_matrix, read_corpus
from rowbook.distributed import bpe_word_counts, cooccurrence_counts, word_counts


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        with Client(cluster) as connected:
            yield connected


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Five text files of Zipf-distributed words (ties included), and their lines in order."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(400)]
    p = 1.0 / np.arange(1, 401)
    p /= p.sum()
    folder = tmp_path_factory.mktemp("shards")
    paths, lines = [], []
    for s in range(5):
        shard = [" ".join(rng.choice(words, size=rng.integers(1, 30), p=p)) for _ in range(300)]
        path = folder / f"part{s}.txt"
        path.write_text("\n".join(shard) + "\n", encoding="utf-8")
        paths.append(path)
        lines += shard
    return paths, lines


def test_word_counts_equal_one_pass_in_order(client, shards):
    paths, lines = shards
    counts = word_counts(paths, client=client)
    sentences = [line.split() for line in lines]
    vocab, _ = read_corpus(sentences, min_count=3)
    model = Word2Vec(min_count=3, vector_size=4, workers=1).build_vocab_from_freq(counts)
    assert model.index_to_key_ == vocab.keys  # same words, same gensim tie order
    assert model.counts_.tolist() == vocab.counts.tolist()
    assert Vocab(min_count=3).fit_counts(counts).itos == Vocab(min_count=3).fit(sentences).itos


@pytest.mark.parametrize("model", [Word2Vec, FastText])
def test_fit_on_dask_counts_learns_the_model_of_one_pass(client, shards, tmp_path, model):
    paths, _ = shards
    settings = {"min_count": 3, "vector_size": 6, "epochs": 2, "workers": 1, "seed": 2}
    if model is FastText:
        settings["bucket"] = 2000
    counts = word_counts(paths, client=client)
    whole = model(**settings).fit(paths)
    counted = model(**settings).fit(paths, vocab=counts)
    spilled = model(**settings).fit(paths, vocab=counts, spill_dir=tmp_path)
    assert counted.index_to_key_ == whole.index_to_key_
    for other in (counted, spilled):
        np.testing.assert_array_equal(other.W_in_, whole.W_in_)
        np.testing.assert_array_equal(other.W_out_, whole.W_out_)


def test_bpe_word_counts_give_the_same_merges(client, shards):
    paths, lines = shards
    counts = bpe_word_counts(paths, client=client)
    assert counts == ByteLevelBPE().count_words(
        line + "\n" for line in lines
    ) or counts == ByteLevelBPE().count_words(lines)
    split = ByteLevelBPE().fit_word_counts(counts, 400)
    whole = ByteLevelBPE().fit([p.read_text(encoding="utf-8") for p in paths], 400)
    assert split.merges == whole.merges


def test_cooccurrence_counts_equal_one_pass_bit_for_bit_and_train_glove(client, shards):
    paths, lines = shards
    sentences = [line.split() for line in lines]
    vocab, enc = read_corpus(sentences, min_count=2, ties="alphabetical")
    X = cooccurrence_counts(paths, vocab.keys, 10, client=client)
    expected = cooccurrence_matrix(enc, len(vocab), 10)
    assert (X != expected).nnz == 0
    settings = {"vector_size": 4, "min_count": 2, "epochs": 2, "workers": 1, "window": 10}
    direct = GloVe(**settings).fit(sentences)
    counted = GloVe(**settings).fit_cooccurrence(X, vocab.keys, counts=vocab.counts)
    np.testing.assert_array_equal(counted.vectors.vectors, direct.vectors.vectors)


def test_a_single_path_is_not_a_list_of_shards(client, shards):
    with pytest.raises(ValueError, match="pass \\[path\\] for a single file"):
        word_counts(str(shards[0][0]), client=client)


def test_normalizer_and_unicode_errors_read_shards_as_one_pass_does(client, tmp_path):
    from rowbook.corpus_files import iter_lines
    from rowbook.text import Normalizer

    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    paths[0].write_bytes(b"The Caf\xe9 opens\nTHE end\n")
    paths[1].write_bytes(b"the cafe\n")
    lower = Normalizer(case="lower")
    lines = list(iter_lines(paths, errors="replace"))
    counts = bpe_word_counts(paths, normalizer=lower, errors="replace", client=client)
    assert counts == ByteLevelBPE().count_words(map(lower, lines))
    assert word_counts(paths, errors="replace", client=client) == Counter(
        w for line in lines for w in line.split()
    )
    with pytest.raises(ValueError, match=r"a\.txt"):
        word_counts(paths, client=client)  # strict: the byte is named, as one pass names it
