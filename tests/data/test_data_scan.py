"""The first pass on several processes equals the serial pass: parts, counts, ids, spills."""

from __future__ import annotations

import gzip
import sys
import warnings
from collections import Counter

import numpy as np
import pytest

from rowbook.corpus_files import iter_batches, iter_part_batches, read_batches, source_parts
from rowbook.corpus_source import corpus_source
from rowbook.data import scan
from rowbook.data.corpus import count_words, encode_corpus, read_corpus

HARD_LINES = [  # each line of the mixed files, before its line end
    "the cat sat on the mat",
    "",
    " ".join(f"w{i % 13}" for i in range(90)),  # longer than a part, cut into sentences
    "naïve café  déjà-vu\twith\ttabs",
    "",
    "the end",
]


def _write_mixed(folder) -> list:
    """A plain file with LF and CRLF lines and no final line end, a gzip file, an empty file,
    a file of blank lines and a short one: the hard cases of splitting by byte range."""
    rng = np.random.default_rng(0)
    lines = [HARD_LINES[i] for i in rng.integers(0, len(HARD_LINES), 40)]
    ends = ["\r\n" if i % 3 == 0 else "\n" for i in range(len(lines))]
    plain = folder / "a.txt"
    plain.write_bytes("".join(s + e for s, e in zip(lines, ends, strict=True)).encode()[:-1])
    packed = folder / "b.txt.gz"
    packed.write_bytes(gzip.compress("\n".join(lines[::-1]).encode() + b"\n"))
    (folder / "c.txt").write_bytes(b"")
    (folder / "d.txt").write_bytes(b"\n\n\r\n")
    (folder / "e.txt").write_bytes(b"one word")
    return [plain, packed, folder / "c.txt", folder / "d.txt", folder / "e.txt"]


def test_parts_give_the_pieces_of_a_whole_file_read_for_every_cut(tmp_path):
    text = b"ab cd\r\n\r\n\nefgh ij kl mn\r\nopq\nlast line without end"
    path = tmp_path / "t.txt"
    path.write_bytes(text)
    for chunk_bytes in (8, 1 << 20):  # long lines in pieces, cut where a whole read cuts them
        whole = list(iter_batches(path, chunk_bytes=chunk_bytes))
        flat = [(t, e) for b, e in whole for t in b]  # every text of a batch ends alike
        for part_bytes in range(1, len(text) + 2):
            parts = source_parts(path, part_bytes=part_bytes)
            got = [
                (t, e)
                for p in parts
                for b, e in iter_part_batches(p, chunk_bytes=chunk_bytes)
                for t in b
            ]
            assert got == flat, (chunk_bytes, part_bytes)


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of a few bytes, so a small corpus is cut at every kind of boundary."""
    monkeypatch.setattr(scan, "MIN_PART_BYTES", 7)
    monkeypatch.setattr(scan, "PART_BYTES", 1 << 20)


@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_pass_equals_the_serial_pass(tmp_path, small_parts, workers):
    files = _write_mixed(tmp_path)
    assert len(scan.parallel_parts(corpus_source(files), workers)) > 10
    serial_vocab, serial = read_corpus(files, min_count=1, max_sentence_length=7, workers=1)
    vocab, encoded = read_corpus(files, min_count=1, max_sentence_length=7, workers=workers)
    assert vocab.keys == serial_vocab.keys and len(vocab.keys) > 10
    np.testing.assert_array_equal(vocab.counts, serial_vocab.counts)
    assert (vocab.total_words, vocab.corpus_count) == (
        serial_vocab.total_words,
        serial_vocab.corpus_count,
    )
    for name in ("ids", "starts", "raw_lengths"):
        np.testing.assert_array_equal(getattr(encoded, name), getattr(serial, name))
    text = " ".join(
        gzip.open(f).read().decode() if f.suffix == ".gz" else f.read_text() for f in files
    )
    assert dict(zip(vocab.keys, vocab.counts.tolist(), strict=True)) == Counter(text.split())
    again = encode_corpus(files, vocab.keys[::2], max_sentence_length=7, workers=workers)
    once = encode_corpus(files, vocab.keys[::2], max_sentence_length=7, workers=1)
    np.testing.assert_array_equal(again.ids, once.ids)
    np.testing.assert_array_equal(again.starts, once.starts)
    counts, lines = count_words(files, workers=workers)
    assert list(counts.items()) == list(count_words(files, workers=1)[0].items())
    assert lines == count_words(files, workers=1)[1] == 40 + 40 + 0 + 3 + 1


def test_spilled_files_are_the_serial_ones_byte_for_byte(tmp_path, small_parts, monkeypatch):
    from rowbook.data import id_stream

    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 5)  # workers and parent spill in many blocks
    files = _write_mixed(tmp_path)
    spilled = []
    for workers in (1, 2, 3):
        folder = tmp_path / f"spill{workers}"
        folder.mkdir()
        _, encoded = read_corpus(files, min_count=2, spill_dir=folder, workers=workers)
        assert encoded.id_file is not None
        (inner,) = folder.iterdir()
        assert sorted(p.name for p in inner.iterdir()) == [encoded.id_file.path.name]
        spilled.append(encoded.id_file.path.read_bytes())
    assert spilled[0] == spilled[1] == spilled[2] and len(spilled[0]) > 100


def test_what_reads_on_one_core(tmp_path, small_parts):
    packed = _write_mixed(tmp_path)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert scan.parallel_parts(corpus_source(packed), 2) is None
    assert [w.category for w in caught] == [scan.OneCoreNotice]
    assert "compressed" in str(caught[0].message) and "one core" in str(caught[0].message)
    plain = tmp_path / "a.txt"
    assert scan.parallel_parts(corpus_source(["-"]), 2) is None  # standard input stays serial
    assert scan.parallel_parts(corpus_source([plain, "-"]), 2) is None
    assert scan.parallel_parts(corpus_source(plain), 1) is None
    assert scan.parallel_parts(corpus_source(plain), 2, max_vocab_size=10) is None  # pruning


def test_standard_input_counts_as_the_file(tmp_path, small_parts, monkeypatch):
    import io

    plain = _write_mixed(tmp_path)[0]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(plain.read_bytes())))
    assert count_words("-", workers=2) == count_words(plain, workers=2)


def test_a_bad_byte_read_in_a_worker_is_named_as_in_the_serial_pass(tmp_path, small_parts):
    from rowbook.checks import ParameterHint

    path = tmp_path / "bad.txt"
    path.write_bytes(b"the cat sat\n" * 20 + b"bad \xff byte\n" + b"ok line\n" * 20)
    messages = []
    for workers in (1, 2):
        with pytest.raises(ParameterHint) as caught:
            read_corpus(path, workers=workers)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "byte offset 244 (line 21)" in messages[0] and "errors='replace'" in messages[0]


SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"
)
NOT_SPACES = "\u200b\u180e\ufeff\xad\u2060é\u20ac\U0001f600x"  # look like spaces, or near them


def _hard_text(seed: int, n_lines: int) -> str:
    """Lines of words joined by every whitespace character ``str.split`` knows and by
    characters it does not, some long, some empty, CRLF and LF, no final line end."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_lines):
        parts = []
        for _ in range(int(rng.integers(0, 40))):
            word = "".join(rng.choice(list("abcdé" + NOT_SPACES), int(rng.integers(1, 6))))
            parts += [
                word,
                "".join(rng.choice(list(SPACES.replace("\n", "")), 1 + rng.integers(0, 3))),
            ]
        lines.append("".join(parts[: max(0, len(parts) - int(rng.integers(0, 2)))]))
    return "".join(line + ("\r\n" if i % 4 == 0 else "\n") for i, line in enumerate(lines))[:-1]


@pytest.mark.parametrize("chunk_bytes", [16, 1 << 20])
def test_the_compiled_whitespace_split_is_str_split(tmp_path, chunk_bytes):
    path = tmp_path / "hard.txt"
    path.write_text(_hard_text(0, 60), encoding="utf-8")
    pieces = [(t, e) for b, e in iter_batches(path, chunk_bytes=chunk_bytes) for t in b]
    for max_len in (1, 3, 10_000):
        want = scan.scan_sentences(scan.line_sentences(pieces, str.split, max_len), None)
        got = scan.scan_text(read_batches([path], chunk_bytes=chunk_bytes, as_bytes=True), max_len)
        assert got.keys == want.keys and len(want.keys) > 50
        assert got.ids.tolist() == want.ids.tolist()
        np.testing.assert_array_equal(got.lengths, want.lengths)
        np.testing.assert_array_equal(got.counts, want.counts)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_read_compiled_gives_the_python_pass(tmp_path, small_parts, workers):
    """The default tokenizer reads compiled; an explicit ``str.split`` reads in Python."""
    path = tmp_path / "hard.txt"
    path.write_bytes(_hard_text(1, 80).encode() + b" bad \xff byte \xfe\n")
    for spill in (None, tmp_path):
        kwargs = dict(min_count=1, max_sentence_length=5, workers=workers, spill_dir=spill)
        vocab, encoded = read_corpus(corpus_source(path, errors="replace"), **kwargs)
        source = corpus_source(path, errors="replace", tokenizer=str.split)
        want_vocab, want = read_corpus(source, **kwargs)
        assert vocab.keys == want_vocab.keys and "\ufffd" in vocab.keys
        np.testing.assert_array_equal(vocab.counts, want_vocab.counts)
        for name in ("ids", "starts", "raw_lengths"):
            np.testing.assert_array_equal(getattr(encoded, name), getattr(want, name))
