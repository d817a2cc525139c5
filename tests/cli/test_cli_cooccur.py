"""``rowbook cooccur`` writes GloVe's counts; ``rowbook train glove counts.npz`` trains on them."""

from __future__ import annotations

import numpy as np


def _corpus(n: int = 300) -> list[list[str]]:
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 81)
    return [
        [f"w{i}" for i in rng.choice(80, size=rng.integers(2, 15), p=p / p.sum())] for _ in range(n)
    ]


def test_cli_cooccur_then_train_glove_on_the_file(run, one_line_error, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(" ".join(s) + "\n" for s in _corpus()), encoding="utf-8")
    counts, options = (
        tmp_path / "counts.npz",
        ["--workers", 1, "--seed", 2, "--epochs", 3, "--quiet"],
    )
    counting = ["--window", 4, "--min-count", 2]
    made = run("cooccur", corpus, "-o", counts, *counting)
    assert made.code == 0 and "non-zero counts (window 4)" in made.out, made
    assert run("train", "glove", counts, "-o", tmp_path / "a.txt", *options).code == 0
    assert run("train", "glove", corpus, "-o", tmp_path / "b.txt", *options, *counting).code == 0
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    one_line_error(
        run("train", "glove", counts, "-o", tmp_path / "c.txt", "--window", 3),
        "train glove",
        "--window does not go with a co-occurrence file",
    )
    one_line_error(run("cooccur", corpus, "-o", tmp_path / "c.txt"), "cooccur", "name it c.npz")
    one_line_error(
        run("cooccur", corpus, "-o", counts, "--window", 0),
        "cooccur",
        "--window must be an integer >= 1, got 0",
    )


def test_a_counted_file_trains_within_a_memory_budget_to_the_same_vectors(run, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(" ".join(s) + "\n" for s in _corpus()), encoding="utf-8")
    counts, options = (
        tmp_path / "counts.npz",
        ["--workers", 1, "--seed", 2, "--epochs", 2, "--quiet"],
    )
    assert run("cooccur", corpus, "-o", counts, "--window", 4, "--quiet").code == 0
    spill = tmp_path / "spill"
    spill.mkdir()
    assert run("train", "glove", counts, "-o", tmp_path / "a.txt", *options).code == 0
    budgeted = run(
        "train",
        "glove",
        counts,
        "-o",
        tmp_path / "b.txt",
        *options,
        "--memory",
        0.001,
        "--spill-dir",
        spill,
    )
    assert budgeted.code == 0, budgeted
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert list(spill.iterdir()) == []
