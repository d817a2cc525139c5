"""Shared helpers for the command-line tests: run ``main`` in-process, small input files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rowbook.cli import main


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out[:300]!r}, err={self.err[:300]!r})"


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """``run(*argv)`` -> Result(code, stdout, stderr) of ``rowbook argv...``."""

    def _run(*argv: object) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


def assert_one_line_error(result: Result, command: str, *needles: str) -> None:
    """Exit status 2 and exactly one line on stderr, ``rowbook <command>: error: ...``."""
    assert result.code == 2, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"rowbook {command}: error: "), lines[0]
    assert "Traceback" not in result.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


#: Words with planted offsets: queen - king = woman - man, paris - france = rome - italy.
WORDS = [
    "man",
    "woman",
    "king",
    "queen",
    "boy",
    "girl",
    "france",
    "paris",
    "italy",
    "rome",
    "apple",
    "banana",
]


def planted_table(dim: int = 6, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    male, female, royal, young = (rng.standard_normal(dim) for _ in range(4))
    country, capital = rng.standard_normal(dim), rng.standard_normal(dim)
    rows = {
        "man": male,
        "woman": female,
        "king": male + royal,
        "queen": female + royal,
        "boy": male + young,
        "girl": female + young,
        "france": country + rng.standard_normal(dim),
        "italy": country + rng.standard_normal(dim),
    }
    rows["paris"] = rows["france"] - country + capital
    rows["rome"] = rows["italy"] - country + capital
    rows["apple"], rows["banana"] = rng.standard_normal(dim), rng.standard_normal(dim)
    table = np.stack([rows[w] + 0.05 * rng.standard_normal(dim) for w in WORDS]).astype(np.float32)
    return list(WORDS), table


def write_word2vec_text(
    path: Path, keys: list[str], table: np.ndarray, header: bool = True
) -> Path:
    """Written here with plain string formatting, independent of rowbook's writer."""
    lines = [f"{len(keys)} {table.shape[1]}\n"] if header else []
    lines += [
        f"{k} " + " ".join(f"{float(v):.6f}" for v in row) + "\n"
        for k, row in zip(keys, table, strict=True)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def read_text_table(path: Path) -> np.ndarray:
    """The float32 values of a word2vec text file, parsed by NumPy (what a reader must get)."""
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    return np.array([r.split(" ")[1:] for r in rows], dtype=np.float32)


@pytest.fixture
def vectors_txt(tmp_path: Path) -> Path:
    keys, table = planted_table()
    return write_word2vec_text(tmp_path / "vectors.txt", keys, table)


@pytest.fixture
def corpus_txt(tmp_path: Path) -> Path:
    from rowbook.data.synthetic import planted_corpus

    path = tmp_path / "corpus.txt"
    path.write_text(
        "".join(" ".join(s) + "\n" for s in planted_corpus(600, seed=3)), encoding="utf-8"
    )
    return path


@pytest.fixture
def write_vectors():
    """``write_vectors(path, keys, table, header=True)``: see :func:`write_word2vec_text`."""
    return write_word2vec_text


@pytest.fixture
def read_table():
    """``read_table(path)``: see :func:`read_text_table`."""
    return read_text_table


@pytest.fixture
def one_line_error():
    """``one_line_error(result, command, *needles)``: see :func:`assert_one_line_error`."""
    return assert_one_line_error


@pytest.fixture
def planted():
    """``(keys, table)`` of :func:`planted_table`, and the NumPy reader of text files."""
    keys, table = planted_table()
    return keys, read_text_table_roundtrip(table)


def read_text_table_roundtrip(table: np.ndarray) -> np.ndarray:
    """The values as the text file holds them (6 decimals), as float32."""
    return np.array([[f"{float(v):.6f}" for v in row] for row in table], dtype=np.float32)
