"""The one corpus reader: compressed, many-file, folder and stdin sources read as the plain
file; bad bytes with their offset; non-regular files refused; long lines in bounded pieces."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rowbook.corpus_files import CHUNK_BYTES, iter_lines, iter_pieces, open_binary, source_files
from rowbook.io import read_json
from rowbook.text.bpe.bytelevel import GPT2_PATTERN
from rowbook.text.tokenize import DEFAULT_WORD_PATTERN

TEXT = "The cat sat on the mat\r\ncafé au lait\n\n  leading and trailing  \nlast line, no end"
LINES = [
    "The cat sat on the mat",
    "café au lait",
    "",
    "  leading and trailing  ",
    "last line, no end",
]
COMPRESSORS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


def test_plain_lines_match_python_splitting(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(TEXT.encode())
    assert list(iter_lines(path)) == LINES == TEXT.splitlines()
    assert list(iter_lines(str(path))) == LINES


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_compressed_files_read_by_content_not_suffix(tmp_path, kind):
    for name in (f"c.{kind}", "c.txt"):  # a misleading suffix changes nothing
        path = tmp_path / name
        path.write_bytes(COMPRESSORS[kind](TEXT.encode()))
        assert list(iter_lines(path)) == LINES
        with open_binary(path) as f:
            assert f.read() == TEXT.encode()


def test_folders_lists_and_stdin_in_the_stated_order(tmp_path, monkeypatch):
    folder = tmp_path / "books"
    (folder / "a" / "deep").mkdir(parents=True)
    (folder / ".git").mkdir()
    files = {
        "b.txt": "b\n",
        "a.txt": "a.txt\n",
        "a/z.txt": "a/z\n",
        "a/deep/y.txt.gz": "a/deep/y\n",
        ".hidden.txt": "hidden\n",
        ".git/HEAD": "ref\n",
        "a/.swp": "swap\n",
    }
    for name, text in files.items():
        data = gzip.compress(text.encode()) if name.endswith(".gz") else text.encode()
        (folder / name).write_bytes(data)
    # component-wise, as sorted() orders Paths: a/deep/y.txt.gz < a/z.txt < a.txt < b.txt
    assert list(iter_lines(folder)) == ["a/deep/y", "a/z", "a.txt", "b"]
    assert source_files(folder) == sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    single = tmp_path / "one.txt"
    single.write_text("one\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(b"from stdin\n"))))
    assert list(iter_lines([single, folder / "b.txt", "-"])) == ["one", "b", "from stdin"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("text stream\n"))  # what tests put there
    assert list(iter_lines("-")) == ["text stream"]


def test_bad_sources_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"corpus file .*missing\.txt does not exist"):
        list(iter_lines([tmp_path / "missing.txt"]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no files"):
        list(iter_lines(tmp_path / "empty"))
    with pytest.raises(ValueError, match="only once"):
        source_files(["-", "-"])
    with pytest.raises(TypeError, match="non-empty list"):
        source_files([])
    with pytest.raises(ValueError, match="errors must be"):
        list(iter_lines(tmp_path, errors="ignore"))
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"the cat sat\n" * 1000)[:-30])
    with pytest.raises(ValueError, match=r"broken\.gz is corrupt or truncated gzip data"):
        list(iter_lines(broken))


def test_bad_bytes_give_file_offset_and_line(tmp_path):
    raw = "line one\nzweite Zeile: Grüße\n".encode() + b"bad \xe2\x28\xa1 bytes\nend\n"
    offset = raw.index(b"\xe2")
    for path in (tmp_path / "bad.txt", tmp_path / "bad.txt.xz"):
        path.write_bytes(lzma.compress(raw) if path.suffix == ".xz" else raw)
        good = tmp_path / "good.txt"
        good.write_text("fine\n")
        with pytest.raises(
            ValueError, match=rf"{path.name}: invalid UTF-8 at byte offset {offset} \(line 3\)"
        ):
            list(iter_lines([good, path]))  # the second file is named, offsets start again
        assert list(iter_lines(path, errors="replace")) == raw.decode(errors="replace").splitlines()


def test_fifos_are_refused_in_the_library(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    from rowbook.data import read_corpus
    from rowbook.vectors import Vectors

    for read in (
        lambda: list(iter_lines(fifo)),
        lambda: read_corpus(fifo),
        lambda: read_json(fifo),
        lambda: Vectors.load_word2vec_format(fifo),
    ):
        with pytest.raises(ValueError, match=r"pipe is a FIFO \(named pipe\).*'-'"):
            read()


def test_deep_and_huge_json_are_refused_with_the_file_named(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match=r"Vocab file .*deep\.json nests"):
        read_json(path, "Vocab")
    path.write_text(json.dumps({"a": "x" * 100}))
    with pytest.raises(ValueError, match="larger than 50 bytes"):
        read_json(path, "Vocab", max_bytes=50)
    assert read_json(path)["a"] == "x" * 100


def _join_lines(pieces):
    lines, current = [], ""
    for text, ends in pieces:
        current += text
        if ends:
            lines, current = [*lines, current], ""
    assert current == ""
    return lines


_ALPHABET = st.sampled_from(
    ["a", "bc", "é", "日本", " ", "  ", "\t", "\r\n", "\n", "!", ", ", "x" * 9]
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_ALPHABET, max_size=60), chunk=st.integers(8, 24))
def test_long_lines_come_in_bounded_pieces_with_the_same_tokens(tmp_path_factory, parts, chunk):
    text = "".join(parts)
    path = tmp_path_factory.mktemp("pieces") / "c.txt"
    path.write_bytes(text.encode())
    pieces = list(iter_pieces(path, chunk_bytes=chunk))
    assert all(len(piece.encode()) <= chunk for piece, _ in pieces)
    lines = text.encode().split(b"\n")
    expected = [line.removesuffix(b"\r").decode() for line in lines[:-1]]
    expected += [lines[-1].decode()] if lines[-1] else []
    assert _join_lines(pieces) == expected
    if max((len(w.encode()) for w in text.split()), default=0) <= chunk - 4:
        gpt2 = regex.compile(GPT2_PATTERN).findall
        for split in (str.split, regex.compile(DEFAULT_WORD_PATTERN).findall, gpt2):
            got = [t for p, _ in pieces for t in split(p)]
            want = [t for line in expected for t in split(line)]
            if split is gpt2:  # a whitespace-only token may be cut in two; words never are
                got, want = ([t for t in ts if not t.isspace()] for ts in (got, want))
            assert got == want


_MEMORY_CHILD = textwrap.dedent("""
    import sys
    from collections import Counter
    from rowbook.data import iter_sentences
    from rowbook.corpus_source import CorpusSource
    CorpusSource.pieces.__defaults__ = (int(sys.argv[2]),)  # what iter_sentences uses

    def status(field):  # in bytes; of this process only
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))

    base = status("VmRSS:")
    counts = Counter()
    for sentence in iter_sentences(sys.argv[1]):
        counts.update(sentence)
    print(status("VmHWM:") - base, len(counts), sum(counts.values()))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's /proc")
def test_memory_of_a_50_mb_single_line_is_bounded_by_the_vocabulary(tmp_path):
    """Peak resident memory of a child process reading the corpus. The peak is the kernel's
    VmHWM: ``getrusage``'s ``ru_maxrss`` would include the parent's size, which Linux carries
    over ``execve`` (a large pytest process would then seem to be the reader's usage)."""
    rng = np.random.default_rng(0)
    words = [f"word{i:04d}-{'x' * 14}" for i in range(1000)]  # 1,000 distinct words of 23 chars
    block = " ".join(words[i] for i in rng.integers(0, 1000, 50_000)) + " "  # ~1 MB, no newline
    path = tmp_path / "one_line.txt"
    with open(path, "w") as f:
        for _ in range(50 * 2**20 // len(block) + 1):
            f.write(block)
    size = path.stat().st_size

    def grown(chunk_bytes: int) -> int:
        out = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD, str(path), str(chunk_bytes)],
            capture_output=True,
            text=True,
            check=True,
        )
        peak, distinct, tokens = map(int, out.stdout.split())
        assert distinct == 1000 and tokens == size // (len(words[0]) + 1)
        print(f"chunk_bytes={chunk_bytes}: peak memory grew by {peak / 2**20:.1f} MiB")
        return peak

    # pieces of 1 MiB: tens of MB (measured: ~25) whatever the line length; the vocabulary
    # here is tiny, so what remains is the piece being split
    in_pieces = grown(CHUNK_BYTES)
    assert in_pieces < 64 * 2**20, f"peak memory grew by {in_pieces / 2**20:.0f} MiB"
    # the check can fail: reading the line whole (one piece) and splitting it takes ~5x its size
    assert grown(2 * size) > 2 * size
