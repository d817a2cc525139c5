"""The bad inputs of issue 11, one by one: through the library, and through the CLI (exit 2,
one line on standard error, no traceback)."""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import pytest

from rowbook.autograd import Tensor
from rowbook.autograd.shape_ops import gather
from rowbook.cli import main
from rowbook.cli.fitting import interrupted
from rowbook.io import atomic_write, load_state, parse_json, save_state
from rowbook.nn import Embedding
from rowbook.nn.loss import cross_entropy
from rowbook.text import ByteLevelBPE, Unigram, Vocab, WordPiece, load_model, load_tokenizer
from rowbook.vectors import Vectors

HUGE = 2**64 - 1


def test_an_npy_header_claim_is_refused_before_numpy_allocates(tmp_path, craft):
    path = tmp_path / "claim.npz"
    path.write_bytes(craft.npz({"a0": craft.npy(shape=(100_000_000_000, 2), data=b"\0" * 8)}))
    assert path.stat().st_size < 400
    with pytest.raises(ValueError, match=r"claims shape \(100000000000, 2\) .* holds 8 bytes"):
        load_state(path, kind="vectors")


def test_compressed_members_are_capped_and_the_cap_can_be_lifted(tmp_path, craft):
    state = {"zeros": np.zeros((1024, 1024), np.float32), "note": "4 MiB of zeros"}
    save_state(tmp_path / "plain.npz", state, kind="checkpoint")
    bomb = tmp_path / "bomb.npz"
    bomb.write_bytes(craft.npz(craft.members((tmp_path / "plain.npz").read_bytes()), compress=True))
    assert bomb.stat().st_size < 64 * 1024
    with pytest.raises(
        ValueError, match=r"expand to \d+ bytes, more than the cap max_inflated_bytes"
    ):
        load_state(bomb, kind="checkpoint", max_inflated_bytes=2**20)
    lifted = load_state(bomb, kind="checkpoint", max_inflated_bytes=None)
    assert lifted["note"] == state["note"]
    np.testing.assert_array_equal(lifted["zeros"], state["zeros"])


def test_an_npy_header_numpy_cannot_tokenize_is_a_value_error(tmp_path, craft):
    """NumPy re-tokenizes a header it cannot parse; an unclosed bracket makes that fail with
    tokenize.TokenError (found by the fuzz suite)."""
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, }\n"
    member = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 12
    path = tmp_path / "bad-header.npz"
    path.write_bytes(craft.npz({"a0": member}))
    with pytest.raises(
        ValueError, match=r"bad-header\.npz: member 'a0.npy' has a damaged \.npy header"
    ):
        load_state(path, kind="vectors")


def test_bzip2_and_lzma_members_are_refused(tmp_path, craft):
    """zipfile inflates them without an output bound: 4 kB of bzip2 may become gigabytes."""
    import zipfile

    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        path = tmp_path / "packed.npz"
        with zipfile.ZipFile(path, "w", method) as archive:
            archive.writestr("a0.npy", craft.npy(np.zeros(4, np.float32)))
        with pytest.raises(ValueError, match=r"packed\.npz: member 'a0.npy' uses zip compression"):
            load_state(path, kind="vectors")


def test_object_arrays_are_refused(tmp_path, craft):
    path = tmp_path / "objects.npz"
    path.write_bytes(
        craft.npz({"a0": craft.npy(shape=(1,), descr="|O", data=b"\x80\x04N.\0\0\0\0")})
    )
    with pytest.raises(ValueError, match="dtype object; rowbook reads only"):
        load_state(path, kind="vectors")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda meta: [1, 2], "its metadata is not an object with format 'rowbook'"),
        (
            lambda meta: {k: v for k, v in meta.items() if k != "tree"},
            "metadata lacks the field 'tree'",
        ),
        (
            lambda meta: {**meta, "tree": {"vectors": {"__array__": "a7"}}},
            "refers at /vectors to array 'a7'",
        ),
    ],
)
def test_npz_metadata_is_validated(tmp_path, craft, edit, message):
    Vectors(["a", "b"], np.eye(2)).save(tmp_path / "good.npz")
    path = tmp_path / "bad.npz"
    good = (tmp_path / "good.npz").read_bytes()
    path.write_bytes(craft.with_meta(good, edit(craft.meta_of(good))))
    with pytest.raises(ValueError, match=message) as caught:
        Vectors.load(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    "loader",
    [
        Vocab.load,
        ByteLevelBPE.load,
        ByteLevelBPE.from_tokenizer_json,
        WordPiece.load,
        WordPiece.from_tokenizer_json,
        Unigram.load,
        Unigram.from_tokenizer_json,
        load_tokenizer,
    ],
)
def test_deep_json_is_a_value_error_naming_the_file(tmp_path, loader):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match=r"deep.json nests arrays/objects 200000 levels deep"):
        loader(path)


def test_parse_json_equals_json_loads_on_tricky_strings():
    text = json.dumps({"a": ["[[[", '\\"{', {"b": [[1], "]]]}"]}], "c": "\u00e9\\"})
    assert parse_json(text, "example") == json.loads(text)


@pytest.mark.parametrize("text", ['"' + '\\"' * 300_000, '"' + '\\"' * 300_000 + "\\", '[["'])
def test_the_depth_scan_stays_linear_on_unterminated_strings(text):
    """Escaped quotes that never close a string: the scan must not restart at each of them
    (a quadratic scan of this 600 kB text would hang the test)."""
    with pytest.raises(ValueError, match="example is not valid JSON: Unterminated string"):
        parse_json(text, "example")


@pytest.mark.parametrize(
    "loader",
    [
        Vectors.load_word2vec_format,
        Vectors.load,
        Vocab.load,
        ByteLevelBPE.load,
        WordPiece.from_vocab,
        load_model,
        load_tokenizer,
    ],
)
def test_a_fifo_is_refused_not_waited_on(tmp_path, loader):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="pipe is a FIFO"):
        loader(fifo)


def test_stale_temporaries_of_the_same_target_are_removed(tmp_path):
    """A killed save's temporary file (nobody holds its lock) goes when the same target is
    written again, however young; a save still writing holds its lock and keeps it."""
    import fcntl

    killed, writing = tmp_path / ".out.txt.abcd1234.tmp", tmp_path / ".out.txt.efgh5678.tmp"
    unnamed, young_unnamed = tmp_path / ".out.txt.ijkl9012.new", tmp_path / ".out.txt.mnop3456.new"
    other, lookalike = tmp_path / ".other.txt.abcd1234.tmp", tmp_path / ".out.txt.notours.tmp"
    for path in (killed, writing, unnamed, young_unnamed, other, lookalike):
        path.write_text("left by a killed save")
    day_ago = time.time() - 2 * 24 * 3600
    for path in (unnamed, other, lookalike):
        os.utime(path, (day_ago, day_ago))
    with open(writing) as live:
        fcntl.flock(live, fcntl.LOCK_EX)  # another save, still writing
        with atomic_write(tmp_path / "out.txt", "w") as f:
            f.write("new")
    assert not killed.exists() and not unnamed.exists()
    assert writing.exists() and young_unnamed.exists() and other.exists() and lookalike.exists()


def test_vocab_encode_refuses_non_strings_as_fit_does():
    vocab = Vocab().fit([["a", "b"]])
    with pytest.raises(TypeError, match="tokens must be str"):
        Vocab().fit([["a", 5]])
    with pytest.raises(TypeError, match=r"got int 5 at index 1"):
        vocab.encode(["a", 5, None])
    with pytest.raises(TypeError, match=r"got NoneType None at index 0"):
        vocab.encode([None])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "tokens",
            [["<pad>", 0], ["<unk>", 0], ["a", -3]],
            "the count of 'a' must be an int >= 0, got -3",
        ),
        ("extra_specials", {"x": 1}, "field 'extra_specials' must be a list of strings"),
        ("extra_specials", None, "field 'extra_specials' must be a list of strings"),
        ("min_count", True, "field 'min_count' must be an integer >= 1"),
        (
            "tokens",
            [["<pad>", 0], ["<unk>", 0], ["a", True]],
            "must be a list of \\[token, count\\] pairs",
        ),
    ],
)
def test_vocab_files_get_the_checks_of_construction(tmp_path, field, value, message):
    with pytest.raises(ValueError, match="must be an int >= 0"):  # what fit_counts says
        Vocab().fit_counts({"a": -3})
    Vocab().fit([["a", "a"]]).save(tmp_path / "v.json")
    document = json.loads((tmp_path / "v.json").read_text())
    (tmp_path / "v.json").write_text(json.dumps({**document, field: value}))
    with pytest.raises(ValueError, match=message):
        Vocab.load(tmp_path / "v.json")


@pytest.fixture(scope="module")
def bpe_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bpe")
    bpe = ByteLevelBPE().fit(["the cat sat on the mat"] * 3, 262, special_tokens=["<pad>"])
    bpe.save(folder / "bpe.json")
    bpe.to_tokenizer_json(folder / "tokenizer.json")
    return {
        name: json.loads((folder / name).read_text()) for name in ("bpe.json", "tokenizer.json")
    }


BPE_EDITS = [
    (
        "tokenizer.json",
        lambda d: d.update(added_tokens={"x": 1}),
        "'added_tokens' must be a list of objects",
    ),
    (
        "tokenizer.json",
        lambda d: d.update(added_tokens=["<pad>"]),
        r"added_tokens\[0\] must be an object",
    ),
    (
        "tokenizer.json",
        lambda d: d["model"].update(merges=[[["a"], ["b"]]]),
        "merge 0 .* is not 'left right'",
    ),
    (
        "tokenizer.json",
        lambda d: d.update(post_processor=[1]),
        "post_processor 'list' is not supported",
    ),
    (
        "bpe.json",
        lambda d: d.update(merges=[[["a"], ["b"], 1]]),
        r"merge 0 .* must be \[left, right, count",
    ),
    (
        "bpe.json",
        lambda d: d.update(special_tokens=[["<pad>"]]),
        "special tokens must be a list of non-empty",
    ),
    ("bpe.json", lambda d: d["vocab"].update({"Ġ": True}), "must map a str to an id"),
]


@pytest.mark.parametrize(("name", "edit", "message"), BPE_EDITS)
def test_bpe_files_are_validated_field_by_field(tmp_path, bpe_files, name, edit, message):
    document = json.loads(json.dumps(bpe_files[name]))
    edit(document)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    load = ByteLevelBPE.from_tokenizer_json if name == "tokenizer.json" else ByteLevelBPE.load
    with pytest.raises(ValueError, match=message) as caught:
        load(path)
    assert str(path) in str(caught.value)


def test_uint64_ids_are_reported_as_they_are():
    ids = np.array([1, HUGE], dtype=np.uint64)
    with pytest.raises(IndexError, match=f"ids contains {HUGE} at position \\(1,\\)"):
        Embedding(5, 2)(ids)
    with pytest.raises(IndexError, match=f"gather: id {HUGE} is out of range"):
        gather(Tensor(np.ones((5, 2))), ids)
    with pytest.raises(IndexError, match=f"target {HUGE} is out of range"):
        cross_entropy(Tensor(np.ones((2, 3))), ids)
    with pytest.raises(IndexError, match=f"token id {HUGE} is out of range"):
        Vocab().fit([["a"]]).decode(ids)


def test_allowed_nonfinite_rows_score_as_zero_rows(tmp_path):
    rng = np.random.default_rng(0)
    keys, table = [f"w{i}" for i in range(6)], rng.standard_normal((6, 4)).astype(np.float32)
    bad = table.copy()
    bad[2, 1], bad[4, 0] = np.nan, np.inf
    Vectors(keys, bad, allow_nonfinite=True).save_word2vec_format(tmp_path / "v.txt")
    with pytest.raises(ValueError, match=r"v\.txt, line 4: value 2 is 'nan'"):
        Vectors.load_word2vec_format(tmp_path / "v.txt")
    loaded = Vectors.load_word2vec_format(tmp_path / "v.txt", allow_nonfinite=True)
    zeroed = table.copy()
    zeroed[[2, 4]] = 0.0  # what the query side must treat them as
    expected = Vectors(keys, zeroed).most_similar("w0", topn=5)
    got = loaded.most_similar("w0", topn=5)
    assert [k for k, _ in got] == [k for k, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-6)


def test_ctrl_c_before_the_first_checkpoint_does_not_ask_for_one(tmp_path, capsys):
    args = argparse.Namespace(checkpoint=str(tmp_path / "ck.npz"), prog="rowbook train word2vec")
    assert interrupted(args) == 130
    err = capsys.readouterr().err
    assert "add --checkpoint" not in err and "written at the end of the first epoch" in err


# -- the command line: exit 2, one line, no traceback ------------------------------------------


def _binary(header: bytes) -> bytes:
    return header + b"king " + np.ones(2, "<f4").tobytes()


def _cli_cases(craft, bpe_files):
    good_npz = craft.npz(craft.members(_saved_npz()))
    meta = craft.meta_of(good_npz)
    tok, bpe = bpe_files["tokenizer.json"], bpe_files["bpe.json"]
    vocab = Vocab().fit([["king"]]).to_dict()
    return [  # (file name, content, argv with FILE standing for the file, words in the message)
        ("h.txt", b"100000000000 300\nking 1 2\n", ["neighbors", "FILE", "king"], "header rows"),
        ("h.txt", b"100000000 300\nking 1 2\n", ["neighbors", "FILE", "king"], "header rows"),
        ("h.txt", b"1 100000000000\nking 1 2\n", ["neighbors", "FILE", "king"], "header dim"),
        ("h.bin", _binary(b"100000000000 300\n"), ["neighbors", "FILE", "king"], "header rows"),
        ("h.bin", _binary(b"1 100000000000\n"), ["neighbors", "FILE", "king"], "header dim"),
        ("n.txt", b"2 2\nking 1 nan\nqueen 1 2\n", ["neighbors", "FILE", "king"], "line 2"),
        (
            "n.bin",
            _binary(b"1 2\n")[:-4] + np.float32(np.inf).tobytes(),
            ["neighbors", "FILE", "king"],
            "row 1",
        ),
        (
            "c.npz",
            craft.npz({"a0": craft.npy(shape=(10**11, 2))}),
            ["neighbors", "FILE", "king"],
            "NumPy .npz archive not written by rowbook",  # named, never read
        ),
        (
            "c.npz",
            craft.npz({**craft.members(good_npz), "a0": craft.npy(shape=(10**11, 2))}),
            ["neighbors", "FILE", "king"],
            "claims shape",
        ),
        (
            "z.npz",
            craft.claim_sizes(craft.npz(craft.members(good_npz), compress=True), 2 * 2**30),
            ["neighbors", "FILE", "king"],
            "max_inflated_bytes",
        ),
        ("m.npz", craft.with_meta(good_npz, [1, 2]), ["neighbors", "FILE", "king"], "metadata"),
        (
            "m.npz",
            craft.with_meta(good_npz, {k: v for k, v in meta.items() if k != "tree"}),
            ["neighbors", "FILE", "king"],
            "'tree'",
        ),
        (
            "m.npz",
            craft.with_meta(
                good_npz, {**meta, "tree": {"keys": ["king"], "vectors": {"__array__": "a9"}}}
            ),
            ["neighbors", "FILE", "king"],
            "'a9'",
        ),
        (
            "t.json",
            json.dumps({**tok, "added_tokens": {"x": 1}}).encode(),
            ["tokenize", "--tokenizer", "bpe", "--bpe", "FILE", "x"],
            "added_tokens",
        ),
        (
            "t.json",
            json.dumps({**tok, "added_tokens": ["<pad>"]}).encode(),
            ["tokenize", "--tokenizer", "bpe", "--bpe", "FILE", "x"],
            "added_tokens",
        ),
        (
            "b.json",
            json.dumps({**bpe, "merges": [[["a"], ["b"], 1]]}).encode(),
            ["tokenize", "--tokenizer", "bpe", "--bpe", "FILE", "x"],
            "merge 0",
        ),
        (
            "b.json",
            json.dumps({**bpe, "special_tokens": [["<pad>"]]}).encode(),
            ["tokenize", "--tokenizer", "bpe", "--bpe", "FILE", "x"],
            "special tokens",
        ),
        (
            "d.json",
            b"[" * 200_000,
            ["tokenize", "--tokenizer", "bpe", "--bpe", "FILE", "x"],
            "levels deep",
        ),
        (
            "v.json",
            json.dumps({**vocab, "extra_specials": None}).encode(),
            ["tokenize", "--vocab", "FILE", "king"],
            "extra_specials",
        ),
        (
            "v.json",
            json.dumps({**vocab, "extra_specials": {"x": 1}}).encode(),
            ["tokenize", "--vocab", "FILE", "king"],
            "extra_specials",
        ),
        (
            "v.json",
            json.dumps({**vocab, "tokens": [["<pad>", 0], ["<unk>", 0], ["king", -1]]}).encode(),
            ["tokenize", "--vocab", "FILE", "king"],
            "count of 'king'",
        ),
        ("d.json", b"[" * 200_000, ["tokenize", "--vocab", "FILE", "king"], "levels deep"),
        (
            "corpus.txt",
            b"the cat sat on the mat\n" * 20,
            ["train", "word2vec", "FILE", "-o", "/proc/rowbook-out.txt"],
            "not writable",
        ),
    ]


def _saved_npz() -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        Vectors(["king", "queen"], np.eye(2)).save(Path(folder) / "v.npz")
        return (Path(folder) / "v.npz").read_bytes()


def test_each_bad_input_is_one_line_and_status_2(tmp_path, craft, bpe_files, capsys):
    for n, (name, content, argv, needle) in enumerate(_cli_cases(craft, bpe_files)):
        path = tmp_path / f"{n}-{name}"
        path.write_bytes(content)
        capsys.readouterr()
        code = main([str(path) if a == "FILE" else a for a in argv])
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, (name, argv, code, err)
        assert lines[0].startswith(f"rowbook {argv[0]}") and needle in lines[0], (needle, lines[0])
