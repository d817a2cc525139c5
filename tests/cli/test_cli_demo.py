"""`rowbook demo`: it finishes, writes every file it promises, and what it wrote is right
(checked with NumPy, gensim, Hugging Face tokenizers and the BPE paper)."""

from __future__ import annotations

import contextlib
import io
import json
import struct

import numpy as np
import pytest

from rowbook.demo import HAND_TABLE, OUTPUTS
from rowbook.demo._context import Context
from rowbook.demo.lookup import TARGETS, lookup_walkthrough
from rowbook.demo.subwords import bpe_merges
from rowbook.demo.texts import PARAGRAPH

# Sennrich, Haddow & Birch (2016), the merges of their toy example, in order.
PAPER_MERGES = ["es", "est", "est</w>", "lo", "low", "ne", "new", "newest</w>", "low</w>", "wi"]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    from rowbook.cli import main

    out = tmp_path_factory.mktemp("demo") / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["demo", "--quiet", "--out", str(out)])
    assert code == 0, stderr.getvalue()
    assert stdout.getvalue() == f"rowbook demo: wrote {len(OUTPUTS)} files to {out}/\n"
    assert stderr.getvalue() == ""  # --quiet: no progress bars either
    return out


def test_demo_writes_every_promised_file(demo_dir):
    assert sorted(p.name for p in demo_dir.iterdir()) == sorted(OUTPUTS)
    for name in OUTPUTS:
        data = (demo_dir / name).read_bytes()
        assert data, name
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24])[0] >= 400
        if name.endswith(".json"):
            json.loads(data)
        if name.endswith(".html"):
            assert b'id="rowbook-data"' in data and b"<script src" not in data


def test_demo_lookup_numbers(demo_dir):
    result = json.loads((demo_dir / "01_lookup.json").read_text())
    ids = np.array(result["ids"])
    E = HAND_TABLE.astype(np.float64)
    residual = E[ids] - TARGETS[:, None]  # (6, 4)
    assert result["loss"] == pytest.approx(np.mean(residual**2), rel=1e-6)
    assert round(result["loss"], 4) == 0.1977  # the cat sat on the mat example
    grad = np.zeros_like(E)
    np.add.at(grad, ids, 2 * residual / residual.size)
    for token, row in result["gradient_rows"].items():
        np.testing.assert_allclose(row, grad[result["vocab"][token]], rtol=1e-5)
    assert set(result["gradient_rows"]) == {"the", "cat", "sat", "on", "mat"}
    np.testing.assert_allclose(
        result["gradient_rows"]["the"], [0.0333, 0.0167, 0.0083, 0.05], atol=1e-4
    )
    assert result["lookup_equals_matmul"] is True


def test_demo_colour_harmony(demo_dir):
    result = json.loads((demo_dir / "02_color_harmony.json").read_text())
    assert result["accuracy"] == 1.0
    table = np.array(result["table"])
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    np.testing.assert_allclose(result["cosine"], unit @ unit.T, atol=1e-6)


def test_demo_word_vectors_answer_the_analogy_in_gensim(demo_dir):
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load_word2vec_format(str(demo_dir / "word_vectors.txt"))
    assert kv.most_similar(positive=["king", "woman"], negative=["man"], topn=1)[0][0] == "queen"
    assert (
        kv.most_similar(positive=["japan", "paris"], negative=["france"], topn=1)[0][0] == "tokyo"
    )
    result = json.loads((demo_dir / "03_word_vectors.json").read_text())
    score, _ = kv.evaluate_word_analogies(str(demo_dir / "planted_analogies.txt"))
    assert result["planted_accuracy"] == pytest.approx(score) and score >= 0.9
    lines = (demo_dir / "planted_corpus.txt").read_text().splitlines()
    assert len(lines) == 3000 and "king" in {w for line in lines for w in line.split()}


def test_demo_bpe_matches_the_paper_and_hugging_face(demo_dir):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    result = json.loads((demo_dir / "04_bpe.json").read_text())
    assert ["".join(m[:2]) for m in result["paper_merges"]] == PAPER_MERGES
    assert result["paper_segmentations"]["lowest"] == ["low", "est</w>"]
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    n = 256 + len(result["byte_merges"])
    trainer = trainers.BpeTrainer(
        vocab_size=n,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    hf.train_from_iterator(PARAGRAPH.splitlines(), trainer)
    hf_merges = json.loads(hf.to_str())["model"]["merges"]
    assert [list(m[:2]) for m in result["byte_merges"]] == [list(m) for m in hf_merges]
    assert result["example_tokens"] == hf.encode(result["example"]).tokens
    assert result["round_trip"] is True


def test_demo_language_model_learned(demo_dir):
    result = json.loads((demo_dir / "05_language_model.json").read_text())
    uniform = len(result["vocabulary"])  # the perplexity of a uniform guess
    assert result["epochs"][-1]["val_perplexity"] < 0.2 * uniform
    assert result["epochs"][-1]["loss"] < result["epochs"][0]["loss"]
    assert len(result["sample"]) >= 2
    assert all(set(line) <= set("".join(result["vocabulary"])) for line in result["sample"])


def test_sections_print_their_tables(tmp_path):
    printed: list[str] = []
    ctx = Context(tmp_path, echo=lambda *parts: printed.append(" ".join(map(str, parts))))
    lookup_walkthrough(ctx)
    text = "\n".join(printed)
    assert "E[ids] == one_hot(ids) @ E, bit for bit: True" in text
    the_row = next(
        line for line in text.splitlines() if line.startswith("the ") and "0.0333" in line
    )
    assert the_row.split() == ["the", "0.0333", "0.0167", "0.0083", "0.0500"]
    printed.clear()
    bpe_merges(ctx)
    text = "\n".join(printed)
    for k, token in enumerate(PAPER_MERGES, start=1):
        assert f"{k}. " in text and f"-> {token!r}" in text
    assert ctx.written == [tmp_path / "bpe.json"]


def test_demo_unseen_word_is_a_mean_bag_fasttext_agrees_with(demo_dir):
    from rowbook.text.char_ngrams import char_ngrams
    from rowbook.vectors import SubwordVectors

    result = json.loads((demo_dir / "06_unseen_words.json").read_text())
    word = result["word"]
    vectors = SubwordVectors.load_fasttext(demo_dir / "subword_model.bin")
    assert not result["in_vocabulary"] and word not in vectors
    assert [g for g, _ in result["subwords"]] == char_ngrams(word, 3, 6)
    rows = [i for _, i in result["subwords"]]
    np.testing.assert_allclose(
        vectors.vector_for(word), vectors.input_matrix[rows].mean(0), rtol=1e-5, atol=1e-7
    )
    best = [k for k, _ in vectors.most_similar(word, topn=4)]
    assert best == [k for k, _ in result["neighbors"][word]]
    assert result["stem_hits"] >= 0.9 * result["stems"]
    fasttext = pytest.importorskip("fasttext")
    theirs = fasttext.load_model(str(demo_dir / "subword_model.bin"))
    np.testing.assert_allclose(theirs.get_word_vector(word), vectors.vector_for(word), atol=1e-6)


def test_demo_prints_the_one_hot_arithmetic(demo_dir):
    result = json.loads((demo_dir / "01_lookup.json").read_text())
    one_hot, table = np.array(result["one_hot"]), np.array(result["table"])  # (6, 7), (7, 4)
    arithmetic = result["arithmetic"]
    assert (
        (arithmetic["numbers"], arithmetic["ones"]) == (one_hot.size, int(one_hot.sum())) == (42, 6)
    )
    assert arithmetic["density"] == pytest.approx(6 / 42)
    # one_hot @ table, one product per (row, column of the one-hot, column of the table)
    products = one_hot[:, :, None] * table[None, :, :]  # (6, 7, 4)
    assert arithmetic["multiply_adds"] == products.size == 168
    by_zero = (
        int((one_hot == 0).sum()) * table.shape[1]
    )  # each zero of the one-hot meets a row of 4
    assert arithmetic["multiply_adds_by_zero"] == int((products == 0).sum()) == by_zero == 144
    assert arithmetic["table_parameters"] == table.size == 28
    assert (
        arithmetic["long_sequence_bytes"]
        == np.zeros((1_000, 128_000), np.float32).nbytes
        == 512_000_000
    )
    assert (
        json.loads((demo_dir / "02_color_harmony.json").read_text())["initial"]["eval_accuracy"] < 1
    )


def test_demo_transformer_numbers(demo_dir):
    from rowbook.demo.transformer import SETTINGS
    from rowbook.sizing import model_size

    result = json.loads((demo_dir / "07_transformer.json").read_text())
    s = SETTINGS
    vocab = result["table"] // s["d_model"]
    size = model_size(vocab, s["d_model"], s["n_layers"], s["n_heads"], context=s["context"])
    assert result["parameters"] == size.parameters and result["tying_saved"] == vocab * s["d_model"]
    head_dim = s["d_model"] // s["n_heads"]
    assert (
        result["cache_bytes"]
        == 2 * s["n_layers"] * result["cache_positions"] * s["n_heads"] * head_dim * 4
    )
    perplexities = [e["val_perplexity"] for e in result["epochs"]]
    assert perplexities[-1] < perplexities[0] / 4  # it learned the sentences' grammar
    assert result["generated"].startswith(result["prompt"])
