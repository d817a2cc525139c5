"""Embedding Projector folders: written files load back equal and read as TensorBoard reads
them; a folder described by TensorBoard's own API reads; hostile folders are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rowbook.vectors import Vectors
from rowbook.vectors.projector import (
    CONFIG_NAME,
    escape,
    read_config,
    read_projector,
    unescape,
    write_projector,
)
from rowbook.vectors.projector_config import MAX_CONFIG_BYTES

tensorboard = pytest.importorskip("tensorboard")
from google.protobuf import text_format  # noqa: E402
from tensorboard.plugins import projector  # noqa: E402
from tensorboard.plugins.projector import projector_plugin  # noqa: E402

HARD_KEYS = [
    "plain",
    "new\tyork",
    "two\nlines",
    "back\\slash",
    " ",
    "\t",
    " lead",
    "trail ",
    "\u3000",
    "crlf\r",
    "\\u0041",
    '"quoted"',
    "#hash",
    "naïve",
    "\u2028",
]


def _js_trim_is_empty(line: str) -> bool:
    """JavaScript's ``line.trim().length === 0``: its white space and line terminators."""
    return all(c.isspace() or c == "\ufeff" for c in line) and not any(
        c in "\x1c\x1d\x1e\x1f\x85" for c in line
    )


def projector_metadata(text: str) -> tuple[list[str], list[dict[str, str | None]]]:
    """The projector's ``parseMetadata`` (vz_projector/data-provider.ts), line for line."""
    names, rows, first = ["label"], [], True
    for line in text.split("\n"):
        if _js_trim_is_empty(line):
            continue
        if first:
            first = False
            if "\t" in line:
                names = line.split("\t")
                continue
        values = line.split("\t")
        rows.append(
            {
                n: (values[j] if j < len(values) and values[j] != "" else None)
                for j, n in enumerate(names)
            }
        )
    return names, rows


@pytest.fixture
def table() -> Vectors:
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((len(HARD_KEYS), 5)).astype(np.float32)
    return Vectors(HARD_KEYS, rows, counts=np.arange(len(HARD_KEYS), 0, -1))


def test_round_trip_with_hard_keys(tmp_path: Path, table: Vectors) -> None:
    kinds = ["a", None, "b\tc", " ", "a"] * 3
    table.save_projector(tmp_path, metadata={"kind": kinds, "n": list(range(15))}, name="words")
    back = Vectors.load_projector(tmp_path)
    assert back.index_to_key == table.index_to_key
    assert np.array_equal(back.vectors, table.vectors)  # shortest decimals read back exactly
    assert np.array_equal(back.counts, table.counts)
    found = read_projector(tmp_path)
    assert found.name == "words" and list(found.metadata) == ["label", "count", "kind", "n"]
    assert found.metadata["kind"] == kinds and found.metadata["n"] == [str(i) for i in range(15)]


def test_tensorboard_reads_what_is_written(tmp_path: Path, table: Vectors) -> None:
    config_path = table.save_projector(tmp_path, metadata={"kind": ["x"] * 15}, name="my table")
    config = text_format.Parse(config_path.read_text(encoding="utf-8"), projector.ProjectorConfig())
    (info,) = config.embeddings
    assert (info.tensor_name, info.tensor_path, info.metadata_path) == (
        "my table",
        "tensors.tsv",
        "metadata.tsv",
    )
    assert list(info.tensor_shape) == [15, 5]
    tensor = projector_plugin._read_tensor_tsv_file(str(tmp_path / info.tensor_path))
    assert np.array_equal(tensor, table.vectors)
    names, rows = projector_metadata((tmp_path / info.metadata_path).read_text(encoding="utf-8"))
    assert names == ["label", "count", "kind"] and len(rows) == 15  # no row lost or split
    assert [unescape(r["label"]) for r in rows] == HARD_KEYS
    assert [r["count"] for r in rows] == [str(c) for c in table.counts]
    # one column (no metadata, no counts): no header, and still one line per key
    Vectors(HARD_KEYS, table.vectors).save_projector(tmp_path / "plain")
    names, rows = projector_metadata((tmp_path / "plain" / "metadata.tsv").read_text("utf-8"))
    assert names == ["label"] and [unescape(r["label"]) for r in rows] == HARD_KEYS


def test_a_folder_described_by_tensorboard_reads(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((6, 3)).astype(np.float32)
    np.savetxt(tmp_path / "vecs.tsv", vectors, delimiter="\t")  # the TensorFlow tutorial's way
    (tmp_path / "meta.tsv").write_text(
        "word\tpos\nrun\tverb\ncat\tnoun\nsat\tverb\non\tprep\nthe\tdet\nmat\tnoun\n",
        encoding="utf-8",
    )
    config = projector.ProjectorConfig()
    info = config.embeddings.add()
    info.tensor_name, info.tensor_path, info.metadata_path = "words:0", "vecs.tsv", "meta.tsv"
    projector.visualize_embeddings(str(tmp_path), config)
    assert (tmp_path / CONFIG_NAME).is_file()
    back = Vectors.load_projector(tmp_path, key_column="word")
    assert back.index_to_key == ("run", "cat", "sat", "on", "the", "mat")
    np.testing.assert_allclose(back.vectors, vectors, rtol=1e-7)
    assert read_projector(tmp_path).metadata["pos"] == [
        "verb",
        "noun",
        "verb",
        "prep",
        "det",
        "noun",
    ]
    with pytest.raises(ValueError, match="repeats a value"):
        Vectors.load_projector(tmp_path, key_column="pos")
    # raw float32 tensors (TensorBoard's fallback for a file that is not text), shape from config
    vectors.tofile(tmp_path / "vecs.bin")
    info.tensor_path = "vecs.bin"
    info.tensor_shape.extend([6, 3])
    info.ClearField("metadata_path")
    projector.visualize_embeddings(str(tmp_path), config)
    raw = Vectors.load_projector(tmp_path)
    assert raw.index_to_key == tuple("012345") and np.array_equal(raw.vectors, vectors)


def test_config_text_format_details(tmp_path: Path) -> None:
    (tmp_path / "t.tsv").write_text("1\t2\n3\t4\n", encoding="utf-8")
    (tmp_path / CONFIG_NAME).write_text(
        '# written by hand\nembeddings: {\n  tensor_name: "caf\\303\\251" " table"\n'
        "  tensor_shape: [2, 2]\n  tensor_path: 't.tsv'\n}\nembeddings { tensor_path: \"t.tsv\" }\n",
        encoding="utf-8",
    )
    config = read_config(tmp_path / CONFIG_NAME)
    assert config["embeddings"][0]["tensor_name"] == "café table"
    assert config["embeddings"][0]["tensor_shape"] == [2, 2]
    with pytest.raises(ValueError, match=r"lists 2 tables \['café table', 't.tsv'\]; choose one"):
        read_projector(tmp_path)
    assert read_projector(tmp_path, tensor="t.tsv").vectors.tolist() == [[1, 2], [3, 4]]
    with pytest.raises(KeyError, match="no table 'nope'"):
        read_projector(tmp_path, tensor="nope")


def test_hostile_folders_are_refused(tmp_path: Path) -> None:
    def folder(config: str, tensors: str = "1\t2\n", name: str = "f") -> Path:
        path = tmp_path / name
        path.mkdir()
        (path / CONFIG_NAME).write_text(config, encoding="utf-8")
        (path / "t.tsv").write_text(tensors, encoding="utf-8")
        return path

    (tmp_path / "outside.tsv").write_text("1\t2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="leads outside"):
        read_projector(folder('embeddings { tensor_path: "../outside.tsv" }', name="a"))
    with pytest.raises(ValueError, match=r"row 2: value 2 is 'x', not a number"):
        read_projector(folder('embeddings { tensor_path: "t.tsv" }', "1\t2\n3\tx\n", name="b"))
    with pytest.raises(ValueError, match="row 2: 1 values, the first row has 2"):
        read_projector(folder('embeddings { tensor_path: "t.tsv" }', "1\t2\n3\n", name="c"))
    with pytest.raises(ValueError, match="row 1: a NaN or infinite"):
        read_projector(folder('embeddings { tensor_path: "t.tsv" }', "nan\t2\n", name="d"))
    with pytest.raises(ValueError, match="unexpected 'tensor_nme'"):
        read_projector(folder('embeddings { tensor_nme: "t" }', name="e"))
    with pytest.raises(ValueError, match="2 rows of metadata for 1 rows"):
        path = folder('embeddings { tensor_path: "t.tsv" metadata_path: "m.tsv" }', name="g")
        (path / "m.tsv").write_text("a\nb\n", encoding="utf-8")
        read_projector(path)
    with pytest.raises(ValueError, match="tensor_shape is \\[3, 3\\]"):
        path = folder('embeddings { tensor_path: "t.tsv" tensor_shape: [3, 3] }', name="h")
        (path / "t.tsv").write_bytes(b"\xff" * 8)
        read_projector(path)
    big = folder("#" + " " * MAX_CONFIG_BYTES, name="i")
    with pytest.raises(ValueError, match="a projector configuration is at most"):
        read_projector(big)
    with pytest.raises(FileNotFoundError, match="not a projector folder"):
        read_projector(tmp_path / "a" / "nothing")


def test_what_cannot_be_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="key 1 is ''"):
        write_projector(tmp_path, ["a", ""], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="row 0 \\('a'\\) has a NaN"):
        write_projector(tmp_path, ["a"], np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="metadata column 'kind' must hold one value per row"):
        write_projector(tmp_path, ["a", "b"], np.zeros((2, 2)), {"kind": ["x"]})
    with pytest.raises(ValueError, match="metadata column 'label' must be a str other than"):
        write_projector(tmp_path, ["a"], np.zeros((1, 2)), {"label": ["x"]})


@given(st.text(min_size=1))
def test_escaped_fields_stay_one_field(value: str) -> None:
    field = escape(value)
    assert unescape(field) == value
    assert not {"\t", "\n", "\r"} & set(field) and not _js_trim_is_empty(field)
