"""A corpus's ids spilled to disk: the same ids, the same vectors, memory flat in the corpus length."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rowbook import FastText, GloVe, Word2Vec
from rowbook.data import id_stream, read_corpus
from rowbook.data.corpus import truncate_vocab


def _sentences(n: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    return [[f"w{i}" for i in rng.choice(300, size=rng.integers(0, 60), p=p)] for _ in range(n)]


@pytest.mark.parametrize(
    "options", [{}, {"min_count": 5}, {"max_vocab_size": 120, "max_sentence_length": 7}]
)
def test_spilled_ids_equal_the_ids_in_ram(tmp_path, monkeypatch, options):
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 997)  # many blocks, sentences across them
    corpus = _sentences(500, seed=1)
    vocab, in_ram = read_corpus(corpus, **options)
    vocab2, spilled = read_corpus(corpus, spill_dir=tmp_path, **options)
    assert vocab2.keys == vocab.keys and np.array_equal(vocab2.counts, vocab.counts)
    assert spilled.id_file is not None and in_ram.id_file is None
    np.testing.assert_array_equal(np.asarray(spilled.ids), in_ram.ids)
    np.testing.assert_array_equal(spilled.starts, in_ram.starts)
    np.testing.assert_array_equal(spilled.raw_lengths, in_ram.raw_lengths)
    for s0, s1 in [(0, 3), (10, 200), (499, 500)]:
        for a, b in zip(spilled.sentences(s0, s1), in_ram.sentences(s0, s1), strict=True):
            np.testing.assert_array_equal(a, b)
    folder = spilled.id_file.folder
    spilled.id_file.close()
    assert not folder.exists()  # the temporary files go with the corpus


def test_word2vec_on_a_spilled_corpus_learns_the_same_vectors(tmp_path, monkeypatch):
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 1000)
    corpus = _sentences(400, seed=2)
    settings = {"vector_size": 8, "min_count": 2, "epochs": 2, "workers": 1, "batch_words": 500}
    in_ram = Word2Vec(**settings).fit(corpus)
    monkeypatch.setattr(id_stream.IdFile, "ids", property(lambda self: None))  # never mapped
    spilled = Word2Vec(**settings).fit(corpus, spill_dir=tmp_path)
    np.testing.assert_array_equal(spilled.vectors.vectors, in_ram.vectors.vectors)
    assert list(tmp_path.iterdir()) == []  # nothing left behind once the corpus is gone


def test_fasttext_on_a_spilled_corpus_learns_the_same_vectors(tmp_path, monkeypatch):
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 1000)
    corpus = _sentences(300, seed=5)
    settings = {
        "vector_size": 8,
        "min_count": 2,
        "epochs": 2,
        "workers": 1,
        "batch_words": 500,
        "bucket": 5000,
    }
    in_ram = FastText(**settings).fit(corpus)
    monkeypatch.setattr(id_stream.IdFile, "ids", property(lambda self: None))  # never mapped
    spilled = FastText(**settings).fit(corpus, spill_dir=tmp_path)
    np.testing.assert_array_equal(spilled.vectors.vectors, in_ram.vectors.vectors)
    np.testing.assert_array_equal(
        spilled.vectors.vector_for("w299x"), in_ram.vectors.vector_for("w299x")
    )  # a new word


def test_truncating_a_spilled_corpus_keeps_it_on_disk_and_equal(tmp_path, monkeypatch):
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 997)
    corpus = _sentences(500, seed=3)
    vocab, in_ram = read_corpus(corpus)
    _, spilled = read_corpus(corpus, spill_dir=tmp_path)
    small, cut = truncate_vocab(vocab, in_ram, 40)
    small2, cut2 = truncate_vocab(vocab, spilled, 40)
    assert small2.keys == small.keys and cut2.id_file is not None
    assert cut2.id_file.folder.parent == tmp_path
    np.testing.assert_array_equal(np.asarray(cut2.ids), cut.ids)
    np.testing.assert_array_equal(cut2.starts, cut.starts)
    np.testing.assert_array_equal(cut2.raw_lengths, cut.raw_lengths)
    del cut2, spilled
    assert list(tmp_path.iterdir()) == []


def test_glove_with_max_vocab_on_a_spilled_corpus_learns_the_same_vectors(tmp_path):
    corpus = _sentences(300, seed=4)
    settings = {"vector_size": 6, "min_count": 1, "max_vocab": 50, "epochs": 2, "workers": 1}
    in_ram = GloVe(**settings).fit(corpus)
    spilled = GloVe(**settings).fit(corpus, spill_dir=tmp_path)
    np.testing.assert_array_equal(spilled.vectors.vectors, in_ram.vectors.vectors)


def test_spill_dir_must_be_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="spill_dir"):
        read_corpus([["a"]], spill_dir=tmp_path / "missing")


_MEMORY = """
import resource, sys, numpy as np
from rowbook.data import id_stream, read_corpus
id_stream.BLOCK_TOKENS = 1 << 16
n_tokens, spill = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
words = np.array([f"w{i}" for i in range(5000)])
def corpus():  # generated line by line: the corpus itself is never held
    for _ in range(n_tokens // 100):
        yield list(words[rng.integers(0, 5000, 100)])
def vm_hwm():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
before = vm_hwm()
vocab, enc = read_corpus(corpus(), spill_dir=None if spill == "-" else spill)
print((vm_hwm() - before) / 1024)
"""


def _grown_mb(n_tokens: int, spill: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY, str(n_tokens), spill],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


_IDS_MB = 1_500_000 * 4 / 2**20  # the int32 ids of the 1.5M tokens between the two runs


def test_reading_a_corpus_four_times_longer_keeps_memory_flat_when_spilled(tmp_path):
    small, large = _grown_mb(500_000, str(tmp_path)), _grown_mb(2_000_000, str(tmp_path))
    assert large - small < 0.5 * _IDS_MB, (
        f"spilled: {small:.1f} MB for 0.5M tokens, {large:.1f} MB for 2M"
    )


def test_reading_into_ram_holds_the_ids_once():
    """In RAM the peak grows by the ids themselves: no int64 or remapped copy of the stream
    (it grew by about 7x the ids when the provisional ids were copied, remapped and counted)."""
    small, large = _grown_mb(500_000, "-"), _grown_mb(2_000_000, "-")
    grown = large - small
    assert 0.7 * _IDS_MB < grown < 1.5 * _IDS_MB, f"{grown:.1f} MB for {_IDS_MB:.1f} MB of ids"


def test_remap_in_place_copies_when_a_view_of_the_ids_is_still_alive():
    from array import array

    raw = array("i", [0, 1, 2, 1, 0])
    view = np.frombuffer(raw, dtype=np.int32)  # as a profiler holding a finished frame keeps one
    ids, kept = id_stream.remap_in_place(raw, np.array([5, -1, 6], np.int32), np.array([2, 0, 3]))
    assert ids.tolist() == [5, 6, 5] and kept.tolist() == [1, 0, 2] and len(view) == 5
