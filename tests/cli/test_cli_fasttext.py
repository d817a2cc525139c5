"""rowbook train fasttext, and the query commands on a fastText .bin: unseen words answered."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rowbook.models import FastText
from rowbook.vectors import SubwordVectors

FT = [
    "--vector-size",
    12,
    "--min-count",
    1,
    "--epochs",
    2,
    "--workers",
    1,
    "--bucket",
    500,
    "--minn",
    2,
    "--maxn",
    4,
]
FT_API = dict(vector_size=12, min_count=1, epochs=2, workers=1, bucket=500, minn=2, maxn=4)
STEMS = ["walk", "talk", "jump", "paint", "cook", "kick"]


@pytest.fixture
def corpus(tmp_path):
    rng = np.random.default_rng(0)
    words = [s + x for s in STEMS for x in ["", "s", "ed"]]
    path = tmp_path / "corpus.txt"
    path.write_text(
        "\n".join(" ".join(rng.choice(words, size=8)) for _ in range(200)) + "\n", encoding="utf-8"
    )
    return path


@pytest.fixture
def model_bin(run, corpus, tmp_path):
    out = tmp_path / "model.bin"
    result = run("train", "fasttext", corpus, "-o", out, *FT, "--quiet")
    assert result.code == 0 and result.out == "" and result.err == "", result
    return out


def test_train_writes_the_api_model_as_a_fasttext_bin(model_bin, corpus):
    api = FastText(**FT_API).fit([line.split() for line in corpus.read_text().splitlines()])
    read = SubwordVectors.load_fasttext(model_bin)
    assert read.index_to_key == api.vectors.index_to_key
    np.testing.assert_array_equal(read.input_matrix, api.W_in_)
    fasttext = pytest.importorskip("fasttext")
    theirs = fasttext.load_model(str(model_bin))
    np.testing.assert_allclose(
        theirs.get_word_vector("walking"), api.vectors.vector_for("walking"), atol=1e-6
    )


def test_train_to_vec_writes_the_vocabulary_vectors(run, corpus, tmp_path):
    out = tmp_path / "model.vec"
    result = run("train", "fasttext", corpus, "-o", out, *FT)
    assert (
        result.code == 0
        and "fasttext: 18 words x 12 dims" in result.out
        and "word2vec text" in result.out
    )


def test_neighbors_of_an_unseen_word_say_so(run, model_bin):
    ft = SubwordVectors.load_fasttext(model_bin)
    result = run("neighbors", model_bin, "walking", "--topn", 3, "--json")
    assert result.code == 0, result
    n = len(ft.subword_ids("walking"))
    assert (
        result.err.strip()
        == f"'walking' is not in the vocabulary; its vector is built from {n} n-grams"
    )
    got = json.loads(result.out)["walking"]
    assert [(g["word"], round(g["cosine"], 5)) for g in got] == [
        (w, round(c, 5)) for w, c in ft.most_similar("walking", topn=3)
    ]


def test_similarity_analogy_and_convert_take_a_fasttext_bin(run, model_bin, tmp_path):
    ft = SubwordVectors.load_fasttext(model_bin)
    result = run("similarity", model_bin, "walker", "walk", "--json")
    assert result.code == 0 and "'walker' is not in the vocabulary" in result.err
    assert json.loads(result.out)["cosine"] == pytest.approx(
        ft.similarity("walker", "walk"), abs=1e-6
    )
    result = run("analogy", model_bin, "walk", "walked", "jumping", "--json")
    assert result.code == 0 and "'jumping' is not in the vocabulary" in result.err
    assert (
        json.loads(result.out)["answers"][0]["word"]
        == ft.most_similar(positive=["walked", "jumping"], negative=["walk"], topn=1)[0][0]
    )
    vec = tmp_path / "model.vec"
    result = run("convert", model_bin, vec)
    assert result.code == 0 and "fastText .bin" in result.out
    from rowbook.vectors import Vectors

    np.testing.assert_array_equal(Vectors.load_word2vec_format(vec).vectors, ft.vectors)


def test_a_word_without_ngrams_is_still_an_error(run, one_line_error, model_bin, tmp_path):
    one_line_error(run("neighbors", model_bin, "</s>"), "neighbors", "'</s>'")
    one_line_error(
        run("convert", model_bin, tmp_path / "x.bin", "--to", "fasttext"),
        "convert",
        "fastText .bin",
    )


def test_evaluate_takes_a_fasttext_bin(run, model_bin, tmp_path):
    ft = SubwordVectors.load_fasttext(model_bin)
    pairs = tmp_path / "pairs.tsv"
    rows = [
        ("walk", "walked", 9.0),
        ("walk", "kick", 2.0),
        ("cook", "cooks", 8.0),
        ("paint", "jump", 1.0),
    ]
    pairs.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in rows), encoding="utf-8")
    result = run("evaluate", model_bin, "--pairs", pairs, "--json")
    assert result.code == 0, result
    expected = ft.evaluate_word_pairs(pairs)
    assert json.loads(result.out)["pairs"]["spearman"] == pytest.approx(expected[1][0])
