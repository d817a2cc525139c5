"""word2vec text/binary, GloVe and .npz files: interoperable with gensim, strict on bad input."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from rowbook.io import save_state
from rowbook.vectors import Vectors

# Every character the word2vec formats allow in a key, including tab, CR, NBSP, emoji,
# the empty key, and characters that change under upper-casing.
ODD_KEYS = [
    "naïve",
    "κλειδί",
    "日本語",
    "a\tb",
    "tab\t",
    "x\ry",
    "🙂",
    "",
    "\u00a0nbsp",
    "q'\"",
    "ß",
    "I",
]


@pytest.fixture
def odd_table() -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(11)
    scale = np.array([1, 1e-8, 1e8, 1, 3, 1e-40], dtype=np.float64)  # 1e-40: subnormal in float32
    table = (rng.standard_normal((len(ODD_KEYS), 6)) * scale).astype(np.float32)
    table[0, 0], table[1, 1], table[2, 2], table[3, 3] = np.nan, np.inf, -np.inf, -0.0
    return ODD_KEYS, table


def gensim_table(keys, table) -> KeyedVectors:
    kv = KeyedVectors(table.shape[1])
    kv.add_vectors(keys, table)
    return kv


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float32 and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("binary", [False, True])
def test_rowbook_files_load_in_gensim_and_equal_gensims_bytes(odd_table, tmp_path, binary):
    keys, table = odd_table
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    Vectors(keys, table, allow_nonfinite=True).save_word2vec_format(ours, binary=binary)
    gensim_table(keys, table).save_word2vec_format(str(theirs), binary=binary)
    assert ours.read_bytes() == theirs.read_bytes()
    loaded = KeyedVectors.load_word2vec_format(str(ours), binary=binary)
    assert loaded.index_to_key == keys and same_bits(loaded.vectors, table)


@pytest.mark.parametrize("binary", [False, True])
def test_gensim_files_load_in_rowbook(odd_table, tmp_path, binary):
    keys, table = odd_table
    path = tmp_path / "theirs"
    gensim_table(keys, table).save_word2vec_format(str(path), binary=binary)
    loaded = Vectors.load_word2vec_format(path, binary=binary, allow_nonfinite=True)
    assert list(loaded.index_to_key) == keys and same_bits(loaded.vectors, table)


@pytest.mark.parametrize("binary", [False, True])
def test_limit_matches_gensim(odd_table, tmp_path, binary):
    keys, table = odd_table
    path = tmp_path / "v"
    Vectors(keys, table, allow_nonfinite=True).save_word2vec_format(path, binary=binary)
    ours = Vectors.load_word2vec_format(path, binary=binary, limit=5, allow_nonfinite=True)
    theirs = KeyedVectors.load_word2vec_format(str(path), binary=binary, limit=5)
    assert list(ours.index_to_key) == theirs.index_to_key == keys[:5]
    assert same_bits(ours.vectors, theirs.vectors)


def test_glove_text_matches_gensim(tmp_path):
    path = datapath("test_glove.txt")  # gensim's sample: no header, non-ASCII keys
    ours, theirs = Vectors.load_glove(path), KeyedVectors.load_word2vec_format(path, no_header=True)
    assert list(ours.index_to_key) == theirs.index_to_key and same_bits(
        ours.vectors, theirs.vectors
    )
    written = tmp_path / "glove.txt"
    ours.save_word2vec_format(written, write_header=False)
    again = KeyedVectors.load_word2vec_format(str(written), no_header=True)
    assert again.index_to_key == theirs.index_to_key and same_bits(again.vectors, theirs.vectors)
    limited = Vectors.load_word2vec_format(path, no_header=True, limit=3)
    assert list(limited.index_to_key) == theirs.index_to_key[:3]


def test_word2vec_c_binary_with_newlines_and_crlf_text(tmp_path):
    """word2vec.c writes a newline after each binary vector; Windows tools write CRLF."""
    keys, table = ["a", "bé"], np.array([[1.5, -2.0], [0.25, 1e-3]], dtype=np.float32)
    binary = tmp_path / "c.bin"
    rows = b"".join(
        k.encode() + b" " + r.astype("<f4").tobytes() + b"\n"
        for k, r in zip(keys, table, strict=True)
    )
    binary.write_bytes(b"2 2\n" + rows)
    text = tmp_path / "crlf.txt"
    text.write_bytes(b"2 2\r\na 1.5 -2.0\r\nb\xc3\xa9 0.25 0.001\r\n")
    for path, is_binary in ((binary, True), (text, False)):
        ours = Vectors.load_word2vec_format(path, binary=is_binary)
        theirs = KeyedVectors.load_word2vec_format(str(path), binary=is_binary)
        assert list(ours.index_to_key) == theirs.index_to_key == keys
        assert same_bits(ours.vectors, theirs.vectors) and same_bits(ours.vectors, table)


@pytest.mark.parametrize("binary", [False, True])
def test_duplicate_keys_keep_the_first_row_like_gensim(tmp_path, binary):
    keys = ["a", "b", "a", "c", "b"]
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    path = tmp_path / "dup"
    with open(path, "wb") as f:  # gensim writes duplicates as given
        f.write(b"5 2\n")
        for key, row in zip(keys, table, strict=True):
            f.write(
                key.encode()
                + b" "
                + (row.tobytes() if binary else " ".join(map(str, row)).encode() + b"\n")
            )
    with pytest.warns(UserWarning, match=r"2 duplicate keys, e\.g\. 'a' again at (line 4|row 3)"):
        ours = Vectors.load_word2vec_format(path, binary=binary)
    theirs = KeyedVectors.load_word2vec_format(str(path), binary=binary)
    # gensim 4.4 keeps the 2 dropped rows as (None, zeros) entries at the end
    assert list(ours.index_to_key) == theirs.index_to_key[:3] == ["a", "b", "c"]
    assert same_bits(ours.vectors, theirs.vectors[:3])


TEXT_ERRORS = [
    (b"two 3\na 1 2 3\n", {}, r"line 1: expected the header '<n_rows> <vector_size>', got 'two 3'"),
    (b"the 1 2 3\n", {}, r"line 1: .*pass no_header=True"),
    (
        b"2 3\na 1 2 3\nb 1 2\n",
        {},
        r"line 3: expected a key and 3 values .* got 2 values \(row starts 'b'\)",
    ),
    (
        b"2 3\na 1 2 3\nb 1  2 3\n",
        {},
        r"line 3: expected a key and 3 values separated by single spaces, got 4",
    ),
    (b"2 3\na 1 2 3\nb 1 x2 3\n", {}, r"line 3: value 2 is 'x2', not a number"),
    (b"3 2\na 1.5 2.5\nb 3.5 4.5\n", {}, r"line 4: the file ends after 2 rows but 3 were expected"),
    (b"3 2\na 1 2\nb 3 4\n", {}, r"line 1: header rows 3 cannot be true: 3 rows of 2 values"),
    (b"1 100000000000\na 1 2\n", {}, r"line 1: header dim 100000000000 cannot be true"),
    (b"2 2\na 1 nan\nb 3 4\n", {}, r"line 2: value 2 is 'nan', not a finite float32"),
    (b"2 2\na 1 2\nb 3 1e39\n", {}, r"line 3: value 2 is '1e39', not a finite float32"),
    (b"1 2\na 1 2\nb 3 4\n", {}, r"line 3: more rows than the 1 the header declares"),
    (b"2 2\na 1 2\n\nb 3 4\n", {}, r"line 3: empty line where row 2 of 2 belongs"),
    (b"2 2\na 1 2\n\xff\xfe 3 4\n", {}, r"line 3: cannot decode as utf8 .* unicode_errors="),
    (b"a 1 2\nb 3\n", {"no_header": True}, r"line 2: expected a key and 2 values"),
    (b"\n\n", {"no_header": True}, r"no vectors found: the file is empty"),
    (b"a\nb\n", {"no_header": True}, r"line 1: a key without values"),
    (b"1 2\na 1 2\n", {"limit": 0}, r"limit must be None \(read all rows\) or an int >= 1, got 0"),
    (
        b"1 2\na 1 2\n",
        {"binary": True, "no_header": True},
        r"no_header=True is only for text files",
    ),
]


@pytest.mark.parametrize(("content", "kwargs", "match"), TEXT_ERRORS)
def test_malformed_files_name_the_line(tmp_path, content, kwargs, match):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        Vectors.load_word2vec_format(path, **kwargs)


def test_trailing_blank_lines_and_limit_skip_the_rest(tmp_path):
    path = tmp_path / "v.txt"
    path.write_bytes(b"2 2\na 1 2\nb 3 4\n\n  \n")
    assert len(Vectors.load_word2vec_format(path)) == 2
    path.write_bytes(b"1 2\na 1 2\nb 3 4\n")  # header too small, but limit stops reading first
    assert list(Vectors.load_word2vec_format(path, limit=1).index_to_key) == ["a"]
    path.write_bytes(b"2 2\na 1 2\n\xff 3 4\n")
    assert Vectors.load_word2vec_format(path, unicode_errors="replace").index_to_key[1] == "\ufffd"


def test_broken_binary_files_name_the_offset(tmp_path):
    good = b"2 2\n" + b"a " + np.ones(2, "<f4").tobytes() + b"bb " + np.ones(2, "<f4").tobytes()
    path = tmp_path / "bad.bin"
    path.write_bytes(good[:-3])  # last row cut 3 bytes short; it starts at byte offset 14
    with pytest.raises(
        ValueError, match=r"byte offset 14: the file ends inside row 2 of 2 \(5 of 8 vector bytes"
    ):
        Vectors.load_word2vec_format(path, binary=True)
    path.write_bytes(good + b"c " + np.ones(2, "<f4").tobytes())
    with pytest.raises(ValueError, match=r"byte offset 25: data continues after the 2 rows"):
        Vectors.load_word2vec_format(path, binary=True)
    path.write_bytes(b"3 2\n" + good[4:])  # 3 rows of 2 floats cannot fit in 21 bytes
    with pytest.raises(ValueError, match=r"line 1: header rows 3 cannot be true"):
        Vectors.load_word2vec_format(path, binary=True)
    path.write_bytes(b"1 2\n" + b"\xff\xfe " + np.ones(2, "<f4").tobytes())
    with pytest.raises(ValueError, match=r"byte offset 4: cannot decode as utf8"):
        Vectors.load_word2vec_format(path, binary=True)


def test_keys_the_format_cannot_hold_are_refused(tmp_path):
    for key in ("new york", "line\nbreak"):
        with pytest.raises(ValueError, match=r"\(index 1\) contains a space or newline"):
            Vectors(["ok", key], np.ones((2, 2))).save_word2vec_format(tmp_path / "v.txt")
    with pytest.raises(ValueError, match="binary needs the header"):
        Vectors(["ok"], np.ones((1, 2))).save_word2vec_format(
            tmp_path / "v.bin", binary=True, write_header=False
        )


def test_npz_round_trip_keeps_any_key_and_counts(odd_table, tmp_path):
    keys, table = odd_table
    keys = [*keys, "new york", "line\nbreak"]
    table = np.vstack([table, np.ones((2, table.shape[1]), np.float32)])
    path = tmp_path / "table.vectors"  # saved at exactly this path, no suffix added
    Vectors(keys, table, counts=np.arange(len(keys)), allow_nonfinite=True).save(path)
    with pytest.raises(ValueError, match=r"'vectors' row 1 \('naïve'\): value 1 is 'nan'"):
        Vectors.load(path)
    loaded = Vectors.load(path, allow_nonfinite=True)
    assert list(loaded.index_to_key) == keys and same_bits(loaded.vectors, table)
    np.testing.assert_array_equal(loaded.counts, np.arange(len(keys)))
    with np.load(path, allow_pickle=False) as archive:  # plain arrays, no pickled objects
        assert all(archive[name].dtype != object for name in archive.files)
    Vectors(keys[:2], table[:2], allow_nonfinite=True).save(path)
    assert Vectors.load(path, allow_nonfinite=True).counts is None


def test_npz_errors(tmp_path):
    path = tmp_path / "x.npz"
    path.write_text("2 2\na 1 2\n")
    with pytest.raises(ValueError, match=r"is not an \.npz archive: it starts with b.2 2"):
        Vectors.load(path)
    save_state(path, {"weights": np.ones(2)}, kind="checkpoint")
    with pytest.raises(ValueError, match="holds a 'checkpoint' file, expected 'vectors'"):
        Vectors.load(path)
    save_state(
        path, {"keys": ["a", "b"], "vectors": np.ones((3, 2)), "counts": None}, kind="vectors"
    )
    with pytest.raises(
        ValueError, match=r"'vectors' must be a \(2, d >= 1\) array .* got shape \(3, 2\)"
    ):
        Vectors.load(path)


class ExplodingKey(str):
    def encode(self, *args, **kwargs):
        raise RuntimeError("disk full")


def test_saves_are_atomic(tmp_path):
    path = tmp_path / "v.txt"
    Vectors(["a"], np.ones((1, 2))).save_word2vec_format(path)
    before = path.read_bytes()
    broken = Vectors(["a", ExplodingKey("b")], np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="disk full"):
        broken.save_word2vec_format(path, binary=True)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["v.txt"]
