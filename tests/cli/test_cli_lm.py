"""train lm, generate, size, vocab-sweep: the library's results, files other tools read, and
one-line errors in the command's own words."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rowbook.models import TransformerLM, load
from rowbook.sizing import preset

from .conftest import assert_one_line_error

LINES = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met at noon"] * 15
SMALL = [
    "--vocab-size",
    300,
    "--d-model",
    16,
    "--layers",
    1,
    "--heads",
    2,
    "--context",
    24,
    "--epochs",
    2,
    "--seed",
    3,
]
SMALL_API = dict(vocab_size=300, d_model=16, n_layers=1, n_heads=2, context=24, epochs=2, seed=3)


@pytest.fixture
def lines_txt(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_train_lm_equals_the_api_and_every_command_reads_its_file(run, lines_txt, tmp_path):
    out = tmp_path / "lm.npz"
    result = run(
        "train",
        "lm",
        lines_txt,
        "-o",
        out,
        *SMALL,
        "--save-hf",
        tmp_path / "hf",
        "--sample-length",
        5,
        "--quiet",
    )
    assert result.code == 0 and result.err == "", result
    api = TransformerLM(**SMALL_API).fit(LINES)
    saved = load(out)
    np.testing.assert_array_equal(saved.vectors.vectors, api.vectors.vectors)
    assert (tmp_path / "hf" / "config.json").exists() and (
        tmp_path / "hf" / "tokenizer.json"
    ).exists()
    expected = api.generate("the cat", 6, temperature=0)
    for model in (out, tmp_path / "hf"):  # a saved model, and a Hugging Face folder
        generated = run("generate", model, "the cat", "--max-new-tokens", 6, "--temperature", 0)
        assert generated.code == 0 and generated.out.rstrip("\n") == expected, generated
        neighbors = run("neighbors", model, "Ġcat", "--topn", 2, "--json")
        assert neighbors.code == 0, neighbors
        assert len(json.loads(neighbors.out)["Ġcat"]) == 2


def test_generate_takes_ids_and_says_the_flag_in_its_errors(run, lines_txt, tmp_path):
    out = tmp_path / "lm.npz"
    assert (
        run("train", "lm", lines_txt, "-o", out, *SMALL, "--quiet", "--sample-length", 0).code == 0
    )
    ids = run("generate", out, "5 6 7", "--ids", "--max-new-tokens", 3, "--no-stop", "--seed", 1)
    assert ids.code == 0 and ids.out.split()[:3] == ["5", "6", "7"] and len(ids.out.split()) == 6
    for flags in (["--no-cache"], ["--cache-dtype", "float16"]):  # the same tokens
        again = run(
            "generate",
            out,
            "5 6 7",
            "--ids",
            "--max-new-tokens",
            3,
            "--no-stop",
            "--seed",
            1,
            *flags,
        )
        assert again.code == 0 and again.out == ids.out, (flags, again)
    assert_one_line_error(
        run(
            "generate",
            out,
            "5",
            "--ids",
            "--max-new-tokens",
            3,
            "--no-cache",
            "--cache-dtype",
            "int8",
        ),
        "generate",
        "--cache-dtype must be None with use_cache=False",
    )
    assert_one_line_error(
        run("generate", out, "the cat", "--max-new-tokens", 100),
        "generate",
        "--max-new-tokens must be at most 22",
    )
    assert_one_line_error(run("generate", out, "the", "--top-p", 0), "generate", "--top-p must be")
    assert_one_line_error(
        run("generate", out, "x y", "--ids"), "generate", "--ids: the prompt must be token ids"
    )


def test_train_lm_names_its_flags_in_errors(run, lines_txt, tmp_path):
    out = tmp_path / "lm.npz"
    assert_one_line_error(
        run("train", "lm", lines_txt, "-o", out, "--d-model", 10, "--heads", 3),
        "train lm",
        "--d-model must be divisible by n_heads (3)",
    )
    assert_one_line_error(
        run("train", "lm", lines_txt, "-o", out, "--optimizer", "sparse_adam"),
        "train lm",
        "--optimizer must be 'adamw' with tie_embeddings=True",
    )
    assert_one_line_error(
        run("train", "lm", lines_txt, "-o", tmp_path / "lm.txt"), "train lm", "is saved as .npz"
    )


def test_size_prints_presets_configs_and_dimensions(run, tmp_path):
    shown = run("size", "--preset", "llama-2-7b", "--lengths", "4096,8192", "--json")
    assert shown.code == 0, shown
    data = json.loads(shown.out)
    assert data["kv_cache_bytes"] == {"4096": 2 * 2**30, "8192": 4 * 2**30}
    assert data["parameters"] == preset("llama-2-7b").parameters
    text = run(
        "size",
        "--vocab-size",
        50257,
        "--d-model",
        768,
        "--layers",
        12,
        "--heads",
        12,
        "--context",
        1024,
    )
    assert text.code == 0 and "124,439,808" in text.out and "tying saves" in text.out
    config = {
        "model_type": "gpt2",
        "vocab_size": 50257,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "n_positions": 1024,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert "124,439,808" in run("size", tmp_path / "config.json").out
    assert_one_line_error(run("size"), "size", "give one of CONFIG")
    assert_one_line_error(
        run("size", "--preset", "gpt2", "--lengths", "0"), "size", "integers >= 1"
    )


def test_vocab_sweep_prints_the_table_and_draws_it(run, lines_txt, tmp_path):
    picture = tmp_path / "sweep.png"
    result = run("vocab-sweep", lines_txt, "--sizes", "260,300", "--plot", picture, "--json")
    assert result.code == 0, result
    rows = json.loads(result.out)
    assert [r["vocab_size"] for r in rows] == [260, 283]  # the text has pairs for 283 entries
    assert rows[0]["tokens_per_char"] > rows[1]["tokens_per_char"]
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_one_line_error(
        run("vocab-sweep", lines_txt, "--sizes", "100", "--plot", ""),
        "vocab-sweep",
        "--sizes must be an integer >= 257",
    )


def test_vocab_sweep_compares_schemes(run, lines_txt, tmp_path):
    picture = tmp_path / "sweep.png"
    argv = ["--sizes", "30,300", "--plot", picture, "--json", "--d-model", "8"]
    result = run("vocab-sweep", lines_txt, "--model", "wordpiece,unigram", *argv)
    assert result.code == 0, result
    rows = json.loads(result.out)
    models = [r["model"] for r in rows]  # a size the text cannot reach is reported once
    assert models[:2] == ["wordpiece"] * 2 and set(models[2:]) == {"unigram"}
    assert all(r["table_parameters"] == 8 * r["vocab_size"] for r in rows)
    assert all(0 <= r["unknown_share"] <= 1 for r in rows)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_one_line_error(
        run("vocab-sweep", lines_txt, "--model", "wordpiece,bert", "--sizes", "30"),
        "vocab-sweep",
        "--model",
    )
