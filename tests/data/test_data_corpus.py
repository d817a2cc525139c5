"""Corpus reading: gensim's vocabulary rules, file and iterable input, encoding, jobs."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rowbook.data import id_stream, iter_sentences, job_boundaries, read_corpus, truncate_vocab
from rowbook.data.corpus import encode_corpus, vocab_from_counts

gensim_word2vec = pytest.importorskip("gensim.models.word2vec")


def _corpus(seed: int = 0, n: int = 400) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 501) ** 1.1
    p /= p.sum()
    return [[f"t{i}" for i in rng.choice(500, size=rng.integers(0, 25), p=p)] for _ in range(n)]


@pytest.mark.parametrize(("min_count", "max_vocab_size"), [(1, None), (5, None), (1, 60), (2, 40)])
def test_vocabulary_equals_gensim(min_count, max_vocab_size, monkeypatch):
    monkeypatch.setattr(id_stream, "REMAP_TOKENS", 97)  # counted and remapped in many blocks
    corpus = _corpus()
    model = gensim_word2vec.Word2Vec(min_count=min_count, max_vocab_size=max_vocab_size)
    model.build_vocab(corpus)
    vocab, encoded = read_corpus(corpus, min_count=min_count, max_vocab_size=max_vocab_size)
    assert vocab.keys == tuple(model.wv.index_to_key)
    np.testing.assert_array_equal(vocab.counts, model.wv.expandos["count"])
    assert vocab.total_words == sum(map(len, corpus))
    assert vocab.corpus_count == len(corpus)
    index = model.wv.key_to_index
    expected = [index[w] for s in corpus for w in s if w in index]
    np.testing.assert_array_equal(encoded.ids, expected)


def test_encoding_drops_unknown_words_and_keeps_sentences():
    corpus = [["a", "x", "b"], [], ["b", "a", "y", "a"]]
    vocab, enc = read_corpus(corpus, min_count=2)
    assert vocab.keys == ("a", "b")
    assert enc.starts.tolist() == [0, 2, 2, 5]
    assert enc.ids.tolist() == [0, 1, 1, 0, 0]
    assert enc.raw_lengths.tolist() == [3, 0, 4]
    assert enc.total_words == 7


def _plain_encoding(corpus, keys, max_len):
    """The ids, starts and raw lengths of ``corpus`` over ``keys``, by lists of Python ints."""
    index = {key: i for i, key in enumerate(keys)}
    ids, starts, raw_lengths = [], [0], []
    for sentence in corpus:
        kept = [index[w] for w in sentence if w in index]
        pieces = [kept[a : a + max_len] for a in range(0, len(kept), max_len)] or [[]]
        for number, piece in enumerate(pieces):
            ids += piece
            starts.append(len(ids))
            raw_lengths.append(len(sentence) if number == 0 else 0)
    return ids, starts, raw_lengths


@pytest.mark.parametrize("block", [1, 7, 1 << 18])
def test_ids_remapped_in_place_block_by_block_equal_a_plain_encoding(block, monkeypatch):
    monkeypatch.setattr(id_stream, "REMAP_TOKENS", block)
    corpus = [*_corpus(seed=3, n=120), [], ["t0"] * 30, ["unseen"]]
    vocab, enc = read_corpus(corpus, min_count=3, max_sentence_length=6)
    expected = _plain_encoding(corpus, vocab.keys, 6)
    assert (enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()) == expected
    assert enc.ids.dtype == np.int32 and enc.ids.flags.c_contiguous
    again = encode_corpus(corpus, vocab.keys[:40], max_sentence_length=6)
    expected = _plain_encoding(corpus, vocab.keys[:40], 6)
    assert (again.ids.tolist(), again.starts.tolist(), again.raw_lengths.tolist()) == expected


def test_long_sentences_are_cut_into_pieces():
    corpus = [["a"] * 7 + ["z"] + ["a"] * 3, ["a"] * 2]
    _, enc = read_corpus(corpus, min_count=2, max_sentence_length=4)
    assert np.diff(enc.starts).tolist() == [4, 4, 2, 2]
    assert enc.raw_lengths.tolist() == [11, 0, 0, 2]


def test_alphabetical_ties_for_glove():
    vocab, _ = read_corpus([["a", "c", "b", "c"]], ties="alphabetical")
    assert vocab.keys == ("c", "a", "b")
    gensim_order, _ = read_corpus([["a", "c", "b", "c"]])  # ties: later first sighting first
    assert gensim_order.keys == ("c", "b", "a")


@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=9), max_size=8),
    st.integers(1, 3),
)
def test_alphabetical_ties_are_glove_vocab_counts_order(corpus, min_count):
    """glove.c's ``vocab_count`` (count down, then ``strcmp``), written out, whichever words
    ``min_count`` drops before the tied ones."""
    counts = Counter(w for sentence in corpus for w in sentence)
    expected = sorted((w for w in counts if counts[w] >= min_count), key=lambda w: (-counts[w], w))
    vocab, _ = read_corpus(corpus, min_count=min_count, ties="alphabetical")
    assert vocab.keys == tuple(expected)
    assert vocab_from_counts(counts, min_count=min_count, ties="alphabetical").keys == vocab.keys


def test_file_and_generator_corpora_equal_lists(tmp_path):
    corpus = _corpus(1, 50)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in corpus), encoding="utf-8")
    v1, e1 = read_corpus(corpus)
    v2, e2 = read_corpus(path)
    v3, e3 = read_corpus(str(path))
    v4, e4 = read_corpus(s for s in corpus)
    for v, e in [(v2, e2), (v3, e3), (v4, e4)]:
        assert v.keys == v1.keys
        np.testing.assert_array_equal(e.ids, e1.ids)
        np.testing.assert_array_equal(e.starts, e1.starts)


def test_tokenizer_callable_and_object(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("A,b\nb,C\n", encoding="utf-8")

    class Pipeline:
        def tokenize(self, line):
            return line.strip().lower().split(",")

    assert list(iter_sentences(path, lambda line: line.strip().split(","))) == [
        ["A", "b"],
        ["b", "C"],
    ]
    assert list(iter_sentences(path, Pipeline())) == [["a", "b"], ["b", "c"]]
    with pytest.raises(TypeError, match="tokenizer"):
        list(iter_sentences(path, 3))


def test_bad_corpora_are_named():
    with pytest.raises(TypeError, match="corpus item 1 is a str"):
        read_corpus([["a"], "b c"])
    with pytest.raises(
        FileNotFoundError, match=r"corpus file /nonexistent/corpus\.txt does not exist"
    ):
        read_corpus("/nonexistent/corpus.txt")
    with pytest.raises(TypeError, match="iterable of token lists"):
        read_corpus(42)


def test_job_boundaries_pack_greedily():
    lengths = np.random.default_rng(0).integers(0, 40, size=200)
    bounds = job_boundaries(lengths, batch_words=100)
    assert bounds[0] == 0 and bounds[-1] == 200 and np.all(np.diff(bounds) > 0)
    for a, b in itertools.pairwise(bounds):
        size = lengths[a:b].sum()
        assert size <= 100 or b - a == 1
        if b < 200:
            assert size + lengths[b] > 100  # the next sentence did not fit


def _greedy_jobs(lengths, batch_words):
    """Sentence by sentence, as gensim's job producer fills jobs (never an empty one)."""
    bounds, size = [0], 0
    for s, length in enumerate(lengths):
        if size + length > batch_words and s > bounds[-1]:
            bounds.append(s)
            size = 0
        size += length
    return [*bounds, len(lengths)] if len(lengths) > bounds[-1] else bounds


@given(st.lists(st.integers(0, 30), max_size=60), st.integers(1, 40))
def test_job_boundaries_equal_filling_jobs_sentence_by_sentence(lengths, batch_words):
    bounds = job_boundaries(np.array(lengths, dtype=np.int64), batch_words)
    assert bounds.tolist() == _greedy_jobs(lengths, batch_words)


def test_truncate_vocab_drops_rare_words_from_text():
    vocab, enc = read_corpus([["a", "b", "c", "a"], ["c", "a"]])
    small, enc2 = truncate_vocab(vocab, enc, 2)
    assert small.keys == ("a", "c")
    assert enc2.ids.tolist() == [0, 1, 0, 1, 0]
    assert enc2.starts.tolist() == [0, 3, 5]


def _write_sources(tmp_path, corpus):
    """The corpus as one plain file, and the same lines as .gz + .bz2 + a folder of .xz parts."""
    import bz2
    import gzip
    import lzma

    lines = [
        "".join(" ".join(s) + "\n" for s in corpus[k : k + 10]) for k in range(0, len(corpus), 10)
    ]
    plain = tmp_path / "plain.txt"
    plain.write_text("".join(lines), encoding="utf-8")
    (tmp_path / "one.txt.gz").write_bytes(gzip.compress("".join(lines[:2]).encode()))
    (tmp_path / "two.bz2").write_bytes(bz2.compress("".join(lines[2:3]).encode()))
    folder = tmp_path / "rest"
    folder.mkdir()
    for k, text in enumerate(lines[3:]):
        (folder / f"part{k:02d}.xz").write_bytes(lzma.compress(text.encode()))
    return plain, [tmp_path / "one.txt.gz", tmp_path / "two.bz2", folder]


def test_compressed_many_file_folder_and_stdin_corpora_equal_the_plain_file(tmp_path, monkeypatch):
    import io
    import sys

    from rowbook.models import Word2Vec

    corpus = _corpus(2, 80)
    plain, parts = _write_sources(tmp_path, corpus)
    v0, e0 = read_corpus(plain)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(plain.read_bytes())))
    for source in (parts, [str(p) for p in parts], "-"):
        v, e = read_corpus(source)
        assert v.keys == v0.keys and v.counts.tolist() == v0.counts.tolist()
        np.testing.assert_array_equal(e.ids, e0.ids)
        np.testing.assert_array_equal(e.starts, e0.starts)
    settings = dict(vector_size=8, window=3, min_count=1, epochs=1, workers=1, seed=5)
    expected = Word2Vec(**settings).fit(corpus).vectors
    for source in (plain, parts):
        got = Word2Vec(**settings).fit(source).vectors
        assert got.index_to_key == expected.index_to_key
        np.testing.assert_array_equal(got.vectors, expected.vectors)


@pytest.mark.parametrize("chunk_bytes", [16, 1 << 20])
def test_long_lines_become_sentences_as_gensim_line_sentence(tmp_path, chunk_bytes):
    from rowbook.corpus_files import iter_pieces
    from rowbook.data.corpus import _line_sentences

    words = [f"w{i % 7}" for i in range(53)]
    path = tmp_path / "long.txt"
    path.write_text(" ".join(words) + "\nshort line\n\n" + " ".join(words[:20]) + "\n")
    pieces = iter_pieces(path, chunk_bytes=chunk_bytes)
    ours = [s for s in _line_sentences(pieces, str.split, 10) if s]  # gensim skips empty lines
    assert ours == list(gensim_word2vec.LineSentence(str(path), max_sentence_length=10))
    assert [s for s in iter_sentences(path, max_sentence_length=10) if s] == ours
