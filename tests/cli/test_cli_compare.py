"""rowbook compare A B: the summary and lists are those of rowbook.vectors.compare."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rowbook.vectors import Vectors, compare


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path, Vectors, Vectors]:
    rng = np.random.default_rng(0)
    keys = [f"w{i}" for i in range(120)]
    X = rng.standard_normal((120, 6)).astype(np.float32)
    Y = X @ np.linalg.qr(rng.standard_normal((6, 6)))[0] + 0.05 * rng.standard_normal((120, 6))
    Y[[3, 40]] = rng.standard_normal((2, 6))  # two words changed on purpose
    a, b = Vectors(keys, X), Vectors(keys[::-1], Y[::-1].astype(np.float32))  # b in another order
    a.save_word2vec_format(tmp_path / "a.txt")
    b.save(tmp_path / "b.npz")
    return tmp_path / "a.txt", tmp_path / "b.npz", a, b


def test_json_is_the_comparison(run, two_files) -> None:
    path_a, path_b, a, b = two_files
    result = run("compare", path_a, path_b, "--top", 3, "--k", 5, "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    expected = compare(a, b, k=5)
    summary = expected.summary()
    assert report["summary"].pop("dims") == summary.pop("dims") == [6, 6]
    assert report["summary"] == pytest.approx(summary)
    assert [r["word"] for r in report["most_moved"]] == [w for w, _ in expected.most_moved(3)]
    assert {r["word"] for r in report["most_moved"][:2]} == {"w3", "w40"}
    assert report["flagged"] == expected.flagged() and set(report["flagged"]) == {"w3", "w40"}
    first = report["most_moved"][0]
    assert first["nearest_a"] == [k for k, _ in a.most_similar(first["word"], topn=3)]
    assert first["nearest_b"] == [k for k, _ in b.most_similar(first["word"], topn=3)]
    assert [r["word"] for r in report["least_moved"]] == [w for w, _ in expected.least_moved(3)]


def test_tables_and_picture(run, two_files, tmp_path: Path) -> None:
    path_a, path_b, a, b = two_files
    result = run("compare", path_a, path_b, "--top", 4, "--plot", tmp_path / "moved.png")
    assert result.code == 0 and result.err == "", result
    lines = result.out.splitlines()
    s = compare(a, b).summary()
    assert lines[0] == "a.txt against b.npz"
    assert lines[1].startswith("shared words: 120 (0 only in a.txt, 0 only in b.npz)")
    assert f"error {s['alignment_error']:.4f}" in lines[2]
    assert f"overlap@10: mean {s['mean_overlap']:.4f}" in lines[4]
    assert lines[5] == "flagged: 2 words moved far more than the rest"
    header = lines.index("most moved (lowest cosine after alignment):")
    assert lines[header + 1].split()[:3] == ["rank", "word", "cosine"]
    assert {lines[header + 2].split()[1], lines[header + 3].split()[1]} == {"w3", "w40"}
    assert (tmp_path / "moved.png").stat().st_size > 10_000
    assert lines[-1] == f"wrote {tmp_path / 'moved.png'}: the 4 most-moved words"


def test_errors(run, one_line_error, two_files, tmp_path: Path) -> None:
    path_a, path_b, _, _ = two_files
    assert_one_line_error = one_line_error
    assert_one_line_error(
        run("compare", path_a, path_b, "--k", 500),
        "compare",
        "--k must be smaller than the 120 shared keys",
    )
    assert_one_line_error(
        run("compare", path_a, path_b, "--plot", tmp_path / "x.jpg"),
        "compare",
        "--plot draws a PNG",
    )
    assert_one_line_error(
        run("compare", path_a, tmp_path / "missing.txt"), "compare", "missing.txt"
    )
    assert_one_line_error(
        run("compare", path_a, path_b, "--sample", "many"),
        "compare",
        "expected a number of words, 'auto' or 'all'",
    )
    assert_one_line_error(run("compare", path_a, path_b, "--top", -1), "compare", "--top")
