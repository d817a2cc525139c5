"""The HTML view: its embedded data equals the projection, it reaches for no network, labels
cannot break out of the data block; optionally, headless Chromium runs the viewer."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from rowbook.vectors import Vectors
from rowbook.vectors.neighbors import unit_rows
from rowbook.viz import embedding_html, project, write_html
from rowbook.viz.columns import metadata_columns
from rowbook.viz.labels import visible_label
from rowbook.viz.project import describe_projection

NASTY = ["</script><b>x", "a & b", "<!-- c", "\"quoted\" 'single'", "</SCRIPT >", "é\u2028ü"]


class _Scripts(HTMLParser):
    """Collect every element's tag and attributes, and each script's text, as a browser would."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._open = dict(attrs)
            self.scripts.append((self._open, ""))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def _parse(page: str) -> tuple[_Scripts, dict]:
    parser = _Scripts()
    parser.feed(page)
    parser.close()
    blocks = [text for attrs, text in parser.scripts if attrs.get("id") == "rowbook-data"]
    assert len(blocks) == 1
    return parser, json.loads(blocks[0])


@pytest.fixture
def table() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.standard_normal((len(NASTY) + 4, 5)) * np.array([3.0, 2.0, 1.5, 0.5, 0.1])


@pytest.mark.parametrize("dims", [2, 3])
def test_embedded_data_is_the_projection(tmp_path: Path, table: np.ndarray, dims: int) -> None:
    labels = [f"w{i}" for i in range(len(table))]
    out = write_html(table, tmp_path / "space.html", labels=labels, dims=dims)
    _, data = _parse(out.read_text(encoding="utf-8"))
    coords, axes = project(table, dims)
    assert data["dims"] == dims and data["axes"] == axes and data["labels"] == labels
    np.testing.assert_allclose(data["points"], coords, rtol=1e-6, atol=1e-12)
    # and the projection is PCA: the covariance's top eigenvectors, up to sign
    values, vectors = np.linalg.eigh(np.cov(table, rowvar=False))
    reference = (table - table.mean(0)) @ vectors[:, np.argsort(values)[::-1][:dims]]
    signs = np.sign(np.sum(reference * np.asarray(data["points"]), axis=0))
    np.testing.assert_allclose(data["points"], reference * signs, rtol=1e-6, atol=1e-9)
    assert data["format"] == "rowbook-embedding-view" and data["version"] == 2


def test_no_network_anywhere(table: np.ndarray) -> None:
    page = embedding_html(table, groups=[i % 2 for i in range(len(table))])
    parser, _ = _parse(page)
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|url\(|@import", page, re.I)
    linked = [(tag, a) for tag, a in parser.tags if {"src", "href"} & set(a)]
    assert linked == []
    assert {tag for tag, _ in parser.tags} >= {"canvas", "script", "style"}


def test_labels_cannot_break_out(table: np.ndarray) -> None:
    labels = NASTY + ["ok"] * (len(table) - len(NASTY))
    page = embedding_html(table, labels, title="<i>my</i> & space")
    parser, data = _parse(page)
    assert data["labels"] == labels
    assert [tag for tag, _ in parser.tags].count("script") == 4  # error hook, data, rows, viewer
    assert "b" not in [tag for tag, _ in parser.tags] and "i" not in [tag for tag, _ in parser.tags]
    assert page.lower().count("</script") == 4 and "<!--" not in page
    assert "<title>&lt;i&gt;my&lt;/i&gt; &amp; space, PCA 3-D, " in page
    assert "<h1>&lt;i&gt;my&lt;/i&gt; &amp; space</h1>" in page
    assert data["title"] == "<i>my</i> & space"


def test_vectors_groups_and_colors() -> None:
    rng = np.random.default_rng(1)
    vectors = Vectors([f"k{i}" for i in range(6)], rng.standard_normal((6, 4)))
    _, data = _parse(
        embedding_html(vectors, words=["k5", "k0", "k3"], groups=["a", "b", "a"], dims=2)
    )
    assert data["labels"] == ["k5", "k0", "k3"] and data["groups"] == ["a", "b", "a"]
    assert (
        data["legend"][0][0] == "a" and data["colors"][0] == data["colors"][2] != data["colors"][1]
    )
    np.testing.assert_allclose(
        data["points"], project(vectors[["k5", "k0", "k3"]], 2)[0], rtol=1e-6
    )
    _, data = _parse(embedding_html(vectors, colors=["#A0B0C0"] * 6, dims=3))
    assert data["colors"] == ["#a0b0c0"] * 6 and data["groups"] is None
    with pytest.raises(KeyError, match="'nope'"):
        embedding_html(vectors, words=["nope"])


def test_errors(table: np.ndarray) -> None:
    with pytest.raises(ValueError, match="dims must be 2 or 3, got 4"):
        embedding_html(table, dims=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dims=3 needs at least 3 rows and 3 columns, .*\(6, 2\)"):
        embedding_html(table[:6, :2], dims=3)
    with pytest.raises(ValueError, match="NaN"):
        embedding_html(np.array([[1.0, np.inf], [0.0, 1.0], [1.0, 1.0]]), dims=2)


# -- optional: run the viewer in headless Chromium -------------------------------------------


def _chromium() -> str | None:
    found = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    if os.environ.get("ROWBOOK_BROWSER_TESTS") == "1":
        assert found, "ROWBOOK_BROWSER_TESTS=1 but no chromium on PATH"
        return found
    return found if Path("/usr/bin/chromium").exists() else None


BROWSER = _chromium()
browser = pytest.mark.skipif(
    BROWSER is None, reason="needs /usr/bin/chromium or ROWBOOK_BROWSER_TESTS=1"
)


def _run_chromium(page: Path, profile: Path, *extra: str, fragment: str = "") -> str:
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=800,600",
        *extra,
        page.as_uri() + fragment,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def _root_and_body(dom: str) -> tuple[str, str]:
    """The <html ...> and <body ...> start tags of a dumped DOM (where the markers go)."""
    return re.search(r"<html[^>]*>", dom).group(0), re.search(r"<body[^>]*>", dom).group(0)


@browser
@pytest.mark.parametrize("dims", [2, 3])
def test_viewer_runs_in_chromium(tmp_path: Path, table: np.ndarray, dims: int) -> None:
    labels = NASTY + [f"w{i}" for i in range(len(table) - len(NASTY))]
    page = write_html(table, tmp_path / "space.html", labels=labels, dims=dims)
    dom = _run_chromium(page, tmp_path / "profile", "--dump-dom", fragment="#selftest")
    root, body = _root_and_body(dom)
    assert f'data-ready="{len(table)}"' in body and f'data-mode="{dims}d"' in body
    assert "data-error" not in root
    parser, data = _parse(dom)  # the DOM as the browser built it
    assert data["labels"] == labels and "b" not in [tag for tag, _ in parser.tags]
    # hovering the first point shows its label verbatim; a drag rotates (3-D) or pans (2-D)
    body_attrs = next(attrs for tag, attrs in parser.tags if tag == "body")
    report = json.loads(body_attrs["data-selftest"])
    assert report["hover"] == labels[0] and report["moved"] and report["zoomed"]
    assert report["rotated"] is (dims == 3)  # 2-D pans instead
    shares = data["variance"]
    heading = f"{len(table)} points"
    summary = describe_projection("pca", dims, shares)
    button = "Show 2-D" if dims == 3 else "2-D only"
    shown, n = report["labelsAuto"], len(table)
    assert 0 < shown <= n
    hidden = f" \u00b7 {n - shown} of {n} labels hidden (no room; hover or zoom)"
    assert report["header"] == [summary + hidden * (shown < n), button, f"{heading}, {summary}"]
    if dims == 3:  # the header follows the switch, and the button names the next action
        flat = describe_projection("pca", 2, shares)
        assert report["switched"][0].split(" \u00b7 ")[0] == flat
        assert report["switched"][1:] == ["Show 3-D", f"{heading}, {flat}", "2d"]
        assert flat != summary
    # the labels menu: none writes no label, all writes every one
    assert (report["labelsNone"], report["labelsAll"]) == (0, len(table))
    assert report["axesClear"] is True


@browser
def test_chromium_reports_a_broken_viewer(tmp_path: Path, table: np.ndarray) -> None:
    page = embedding_html(table).replace(
        "var n = data.labels.length", "var n = data.labels.length("
    )
    (tmp_path / "broken.html").write_text(page, encoding="utf-8")
    root, body = _root_and_body(
        _run_chromium(tmp_path / "broken.html", tmp_path / "profile", "--dump-dom")
    )
    assert 'data-error="Uncaught SyntaxError' in root and "data-ready" not in body


@browser
def test_viewer_draws_the_points(tmp_path: Path) -> None:
    from matplotlib import image as mpimg

    X = np.random.default_rng(3).standard_normal((30, 3))
    page = write_html(X, tmp_path / "red.html", colors=["#ff0000"] * 30, dims=3)
    _run_chromium(page, tmp_path / "profile", f"--screenshot={tmp_path / 'shot.png'}")
    pixels = mpimg.imread(tmp_path / "shot.png")[..., :3]  # (H, W, 3)
    red = (pixels[..., 0] > 0.9) & (pixels[..., 1] < 0.2) & (pixels[..., 2] < 0.2)
    assert red.sum() > 30 * 20  # thirty discs of radius ~5 px


def test_page_structure_labels_control_and_header(table: np.ndarray) -> None:
    labels = [" ", "\t", "a"] + [f"w{i}" for i in range(len(table) - 3)]
    page = embedding_html(table, labels, dims=3, show_labels="all", subject="my table")
    parser, data = _parse(page)
    assert data["show_labels"] == "all" and data["labels"] == labels
    assert data["shown"] == [visible_label(label) for label in labels][:3] + labels[3:]
    values = np.linalg.eigvalsh(np.cov(table, rowvar=False))[::-1]
    np.testing.assert_allclose(data["variance"], values[:3] / values.sum(), rtol=1e-9)
    tags = dict((attrs.get("id"), (tag, attrs)) for tag, attrs in parser.tags if attrs.get("id"))
    assert tags["labels"][0] == "select" and tags["mode"][0] == "button"
    options = [attrs["value"] for tag, attrs in parser.tags if tag == "option"]
    assert options == ["auto", "all", "none"]
    summary = describe_projection("pca", 3, data["variance"])
    assert f'<span id="summary">{summary}</span>' in page and "<h1>my table</h1>" in page
    assert f"<title>my table, {summary}</title>" in page and ">Show 2-D</button>" in page
    with pytest.raises(ValueError, match="show_labels must be one of"):
        embedding_html(table, show_labels="some")


@browser
def test_crowded_view_in_chromium(tmp_path: Path) -> None:
    X = np.random.default_rng(4).standard_normal((150, 8))
    labels = [f"word{i}" for i in range(150)]
    page = write_html(X, tmp_path / "crowd.html", labels=labels, dims=3)
    dom = _run_chromium(page, tmp_path / "profile", "--dump-dom", fragment="#selftest")
    parser, _ = _parse(dom)
    report = json.loads(next(a for tag, a in parser.tags if tag == "body")["data-selftest"])
    assert 0 < report["labelsAuto"] < 150 and report["labelsAll"] == 150
    assert report["labelsNone"] == 0 and report["axesClear"] is True
    assert f"{150 - report['labelsAuto']} of 150 labels hidden" in report["header"][0]


# -- search, neighbours, metadata ----------------------------------------------------------------


def _rows(page: str) -> np.ndarray | None:
    parser, data = _parse(page)
    blocks = [text for attrs, text in parser.scripts if attrs.get("id") == "rowbook-vectors"]
    if not blocks:
        return None
    assert data["neighbors"] is not None
    shape = (data["neighbors"]["rows"], data["neighbors"]["dim"])
    return np.frombuffer(base64.b64decode(blocks[0]), dtype="<f4").reshape(shape)


def test_the_rows_are_embedded_for_the_neighbour_panel(table: np.ndarray) -> None:
    rows = _rows(embedding_html(table))
    np.testing.assert_array_equal(rows, unit_rows(table.astype(np.float32))[1])
    _, data = _parse(embedding_html(table, neighbors=False))
    assert _rows(embedding_html(table, neighbors=False)) is None and data["neighbors"] is None
    wide = np.zeros((2, 5000))
    wide[:, 0] = [1.0, 2.0]
    with pytest.MonkeyPatch.context() as patch:  # the defaults, made small for the test
        patch.setattr("rowbook.viz.html.NEIGHBORS_BY_DEFAULT", 100)
        patch.setattr("rowbook.viz.html.MAX_EMBEDDED_VALUES", 5000)
        assert _rows(embedding_html(wide, dims=2)) is None  # too many values: off by default
        with pytest.raises(
            ValueError,
            match="neighbors=True would embed 2 x 5,000 = 10,000 values, more than 5,000",
        ):
            embedding_html(wide, dims=2, neighbors=True)


def test_metadata_columns_and_counts() -> None:
    rng = np.random.default_rng(2)
    vectors = Vectors(
        [f"k{i}" for i in range(6)], rng.standard_normal((6, 4)), counts=[60, 50, 40, 3, 2, 1]
    )
    page = embedding_html(
        vectors, words=["k5", "k0", "k3"], metadata={"pos": ["n", None, "n"]}, color_by="pos"
    )
    _, data = _parse(page)
    assert [c["name"] for c in data["metadata"]] == ["count", "pos"]
    assert data["metadata"][0] == {
        "name": "count",
        "kind": "number",
        "values": [1.0, 60.0, 3.0],
        "log": False,
    }
    assert data["metadata"][1] == {
        "name": "pos",
        "kind": "category",
        "categories": ["n", "(missing)"],
        "codes": [0, 1, 0],
    }
    assert data["color_by"] == "pos"
    columns = metadata_columns(
        {"zipf": [1e5, 10, 1], "mixed": [1, "a", None], "flag": [True, False, True]}, 3
    )
    assert columns[0]["kind"] == "number" and columns[0]["log"] is True  # 5 orders of magnitude
    assert columns[1] == {
        "name": "mixed",
        "kind": "category",
        "categories": ["1", "a", "(missing)"],
        "codes": [0, 1, 2],
    }
    assert columns[2]["kind"] == "category" and columns[2]["categories"] == ["True", "False"]
    with pytest.raises(ValueError, match="color_by='kind' is not a metadata column"):
        embedding_html(vectors, color_by="kind")
    with pytest.raises(ValueError, match="metadata column 'pos' must hold one value per point"):
        embedding_html(vectors, metadata={"pos": ["n"]})


def _selftest(tmp_path: Path, page: Path) -> dict:
    dom = _run_chromium(page, tmp_path / "profile", "--dump-dom", fragment="#selftest")
    root, _ = _root_and_body(dom)
    assert "data-error" not in root, root
    parser, _ = _parse(dom)
    return json.loads(next(a for tag, a in parser.tags if tag == "body")["data-selftest"])


def _cosine_top(X: np.ndarray, i: int, k: int) -> list[int]:
    unit = unit_rows(X.astype(np.float32))[1].astype(np.float64)
    scores = unit @ unit[i]
    scores[i] = -np.inf
    return np.argsort(-scores, kind="stable")[:k].tolist()


@browser
@pytest.mark.parametrize("n", [60, 3000])  # the arcs, and the pixels of a large table
def test_search_neighbours_and_colours_in_chromium(tmp_path: Path, n: int) -> None:
    rng = np.random.default_rng(5)
    X = rng.standard_normal((n, 8)) * np.linspace(2, 0.5, 8)
    labels = [f"w{i}" for i in range(n - 1)] + ["last\tone"]
    kinds = [["noun", "verb", "adj"][i % 3] for i in range(n)]
    page = write_html(
        X,
        tmp_path / "space.html",
        labels=labels,
        dims=3,
        metadata={"kind": kinds, "count": list(range(n, 0, -1))},
    )
    report = _selftest(tmp_path, page)
    # a click lists the point's true cosine neighbours (of the rows, not of the screen)
    i = report["selected"]
    assert i >= 0 and report["hover"] == visible_label(labels[i])
    panel = report["panel"]
    assert panel["title"] == visible_label(labels[i])
    assert panel["indices"] == _cosine_top(X, i, 10)
    unit = unit_rows(X.astype(np.float32))[1]
    expected = [round(float(unit[i] @ unit[j]), 3) for j in panel["indices"]]
    assert [score for _, score in panel["neighbours"]] == pytest.approx(expected, abs=1e-3)
    assert [name for name, _ in panel["neighbours"]] == [
        visible_label(labels[j]) for j in panel["indices"]
    ]
    # the search finds the last label (typed whole), selects it and centres the view on it
    assert report["found"] == n - 1 and report["centred"] is True
    assert report["matches"][0] == visible_label(labels[-1])
    # colour by each column: categories with their colours, counts on a scale
    assert report["legends"]["kind"] == ["noun", "verb", "adj"]
    assert report["legends"]["count"][0].startswith("1") and report["legends"]["count"][-1] == str(
        n
    )
    assert report["moved"] and report["rotated"] and report["zoomed"]
