"""plot and convert: pictures of the chosen words, and vector files gensim reads back identically."""

from __future__ import annotations

import importlib.util
import json
import re
import struct

import numpy as np
import pytest


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_plot_png_scatter_and_heatmap(run, vectors_txt, tmp_path):
    out = tmp_path / "people.png"
    result = run("plot", vectors_txt, "--words", "king", "queen", "man", "woman", "-o", out)
    assert result.code == 0, result
    assert result.out.strip() == f"wrote {out}: 2-D PCA view of 4 words"
    assert png_size(out) == (800, 600)
    heat = tmp_path / "cos.png"
    assert run("plot", vectors_txt, "--top", 5, "--heatmap", "-o", heat).code == 0
    assert png_size(heat)[0] > 100


def test_plot_html_holds_the_pca_of_the_words(run, vectors_txt, planted, tmp_path):
    keys, table = planted
    out = tmp_path / "space.html"
    result = run("plot", vectors_txt, "-o", out, "--top", 8, "--title", "my <space>")
    assert result.code == 0, result
    page = out.read_text(encoding="utf-8")
    assert "<title>my &lt;space&gt;, PCA 3-D, " in page and "<h1>my &lt;space&gt;</h1>" in page
    assert "http" not in page.split("<script>")[0]
    data = json.loads(
        re.search(r'<script type="application/json" id="rowbook-data">(.*?)</script>', page, re.S)[
            1
        ]
    )
    assert data["labels"] == keys[:8] and data["dims"] == 3
    X = table[:8].astype(np.float64)
    X -= X.mean(axis=0)
    _, s, _ = np.linalg.svd(X, full_matrices=False)
    coords = np.array(data["points"])
    # PCA keeps the pairwise distances of the projection onto the top 3 components
    np.testing.assert_allclose(
        np.linalg.svd(coords - coords.mean(0), compute_uv=False), s[:3], rtol=1e-5
    )


def test_plot_tsne(run, one_line_error, vectors_txt, tmp_path):
    result = run("plot", vectors_txt, "--method", "tsne", "--dims", 2, "-o", tmp_path / "t.png")
    if importlib.util.find_spec("sklearn") is None:  # the optional extra is not installed
        one_line_error(result, "plot", "scikit-learn", "rowbook[viz]")
    else:
        assert result.code == 0 and "t-SNE" in result.out, result
        assert png_size(tmp_path / "t.png") == (800, 600)


def test_plot_errors(run, one_line_error, vectors_txt, tmp_path):
    one_line_error(run("plot", vectors_txt, "-o", tmp_path / "x.svg"), "plot", ".png", ".html")
    one_line_error(
        run("plot", vectors_txt, "--dims", 3, "-o", tmp_path / "x.png"), "plot", "x.html"
    )
    one_line_error(run("plot", vectors_txt, "--heatmap", "-o", tmp_path / "x.html"), "plot", ".png")
    one_line_error(
        run("plot", vectors_txt, "--words", "king", "-o", tmp_path / "x.png"), "plot", "at least 2"
    )
    one_line_error(run("plot", vectors_txt, "-o", tmp_path / "none" / "x.png"), "plot", "folder")
    one_line_error(run("plot", vectors_txt), "plot", "-o/--output")


@pytest.mark.parametrize("target", ["v.npz", "v.txt", "v.vec", "v.bin", "glove.txt"])
def test_convert_round_trips_and_gensim_agrees(
    run, vectors_txt, planted, read_table, tmp_path, target
):
    from gensim.models import KeyedVectors

    keys, table = planted
    out = tmp_path / target
    extra = ["--to", "glove"] if target == "glove.txt" else []
    result = run("convert", vectors_txt, out, *extra)
    assert result.code == 0, result
    assert result.out.startswith(
        f"read 12 vectors x 6 dims from {vectors_txt} (word2vec text); wrote {out}"
    )
    if target != "v.npz":
        kv = KeyedVectors.load_word2vec_format(
            str(out), binary=target == "v.bin", no_header=target == "glove.txt"
        )
        assert list(kv.index_to_key) == keys
        np.testing.assert_array_equal(kv.vectors, table)
    back = tmp_path / "back.txt"
    result = run("convert", out, "-o", back)  # -o as in every command; the input by content
    assert result.code == 0, result
    np.testing.assert_array_equal(read_table(back), table)


def test_convert_errors(run, one_line_error, vectors_txt, tmp_path):
    one_line_error(run("convert", vectors_txt), "convert", "convert IN -o OUT")
    one_line_error(
        run("convert", vectors_txt, tmp_path / "a.txt", "-o", tmp_path / "b.txt"),
        "convert",
        "give one of them",
    )
    one_line_error(run("convert", vectors_txt, tmp_path / "v.xyz"), "convert", "'.xyz'", "--to")
    one_line_error(
        run("convert", tmp_path / "none.bin", tmp_path / "v.txt"),
        "convert",
        "none.bin",
        "does not exist",
    )
    one_line_error(
        run("convert", vectors_txt, tmp_path / "v.txt", "--from", "binary"),
        "convert",
        "vectors.txt",
    )
    one_line_error(
        run("convert", vectors_txt, tmp_path / "v.txt", "--to", "pickle"),
        "convert",
        "invalid choice",
    )
    spaced = tmp_path / "spaced.npz"
    from rowbook import Vectors

    Vectors(["new york", "paris"], np.eye(2, dtype=np.float32)).save(spaced)
    one_line_error(run("convert", spaced, tmp_path / "s.txt"), "convert", "'new york'")
    assert not (tmp_path / "s.txt").exists()


def test_the_content_decides_the_input_format(run, vectors_txt, planted, tmp_path):
    """A word2vec binary file named .txt and a text file named .bin are both read right."""
    _, table = planted
    binary = tmp_path / "really_binary.txt"
    assert run("convert", vectors_txt, binary, "--to", "binary").code == 0
    assert binary.read_bytes().startswith(b"12 6\nman " + table[0].astype("<f4").tobytes())
    text_bin = tmp_path / "really_text.bin"
    text_bin.write_bytes(vectors_txt.read_bytes())
    for path, name in ((binary, "word2vec binary"), (text_bin, "word2vec text")):
        result = run("convert", path, tmp_path / "out.npz")
        assert result.code == 0 and f"from {path} ({name})" in result.out, result
        from rowbook import Vectors

        np.testing.assert_array_equal(Vectors.load(tmp_path / "out.npz").vectors, table)


def test_plot_labels_option_and_titles(run, vectors_txt, tmp_path):
    out = tmp_path / "space.html"
    assert run("plot", vectors_txt, "-o", out, "--top", 8, "--labels", "none").code == 0
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="rowbook-data">(.*?)</script>', page, re.S)[1])
    assert data["show_labels"] == "none"
    assert "<h1>vectors.txt, the first 8 words of the file</h1>" in page  # no counts in the file
    from rowbook.vectors import Vectors

    counted = tmp_path / "counted.npz"
    vectors = Vectors.load_word2vec_format(vectors_txt)
    Vectors(vectors.index_to_key, vectors.vectors, list(range(100, 100 - len(vectors), -1))).save(
        counted
    )
    assert run("plot", counted, "-o", out, "--top", 5).code == 0
    assert "<h1>counted.npz, 5 most frequent words</h1>" in out.read_text(encoding="utf-8")
    assert run("plot", counted, "-o", out, "--words", "king", "queen", "man").code == 0
    assert "<h1>counted.npz, 3 chosen words</h1>" in out.read_text(encoding="utf-8")
