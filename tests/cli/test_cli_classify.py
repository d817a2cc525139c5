"""train classifier / predict / test: the library's model, fastText's output, one-line errors."""

from __future__ import annotations

import random

import pytest

from rowbook.models import FastTextClassifier

from .conftest import assert_one_line_error

OPTIONS = ["--vector-size", 10, "--epochs", 5, "--word-ngrams", 2, "--bucket", 1000, "--workers", 1]


@pytest.fixture
def labelled(tmp_path):
    rng = random.Random(0)
    cues = {"sport": ["goal", "team"], "money": ["bank", "tax"]}
    lines = []
    for _ in range(300):
        label = rng.choice(list(cues))
        words = [rng.choice(["the", "a", "of"]) for _ in range(4)] + [rng.choice(cues[label])]
        lines.append(f"__label__{label} " + " ".join(words))
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text("\n".join(lines[:250]) + "\n")
    test.write_text("\n".join(lines[250:]) + "\n")
    return train, test


@pytest.mark.parametrize("suffix", [".bin", ".npz"])
def test_train_predict_test_equal_the_library(run, labelled, tmp_path, suffix):
    train, test = labelled
    out = tmp_path / f"model{suffix}"
    result = run("train", "classifier", train, "-o", out, *OPTIONS, "--quiet")
    assert result.code == 0 and result.out == "", result
    api = FastTextClassifier(vector_size=10, epochs=5, word_ngrams=2, bucket=1000, workers=1).fit(
        train
    )
    texts = [line.split(" ", 1)[1] for line in test.read_text().splitlines()]
    labels, probs = api.predict(texts, k=2)

    result = run("predict", out, test, "--k", 2, "--probs")
    assert result.code == 0, result
    want = [
        " ".join(f"{n} {p:.6g}" for n, p in zip(ls, ps, strict=True))
        for ls, ps in zip(labels, probs, strict=True)
    ]
    assert result.out.splitlines() == want

    n, precision, recall = api.test(test)
    result = run("test", out, test)
    assert result.out.splitlines() == [f"N\t{n}", f"P@1\t{precision:.3g}", f"R@1\t{recall:.3g}"]
    result = run("test", out, test, "--per-label", "--confusion")
    assert result.code == 0 and "__label__sport" in result.out and "gold" in result.out


def test_fasttext_reads_what_train_classifier_writes(run, labelled, tmp_path):
    fasttext = pytest.importorskip("fasttext")
    train, test = labelled
    run("train", "classifier", train, "-o", tmp_path / "m.bin", *OPTIONS, "--quiet")
    theirs = fasttext.load_model(str(tmp_path / "m.bin"))
    result = run("test", tmp_path / "m.bin", test)
    n, precision, _ = theirs.test(str(test))
    assert result.out.splitlines()[:2] == [f"N\t{n}", f"P@1\t{precision:.3g}"]


def test_errors_are_one_line_naming_the_option(run, labelled, tmp_path):
    train, test = labelled
    bad = tmp_path / "bad.txt"
    bad.write_text("__label__a x y\nno label here\n")
    assert_one_line_error(
        run("train", "classifier", bad, "-o", tmp_path / "m.bin"), "train classifier", "line 2"
    )
    assert_one_line_error(
        run("train", "classifier", train, "-o", tmp_path / "m.bin", "--label-prefix", "zz"),
        "train classifier",
        "--label-prefix",
    )
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert_one_line_error(
        run("train", "classifier", empty, "-o", tmp_path / "m.bin"), "train classifier", "empty"
    )
    run("train", "classifier", train, "-o", tmp_path / "m.bin", *OPTIONS, "--quiet")
    assert_one_line_error(run("predict", tmp_path / "m.bin", test, "--k", 0), "predict", "--k")
    assert_one_line_error(
        run(
            "train", "classifier", train, "-o", tmp_path / "m.bin", "--loss", "ova", "--negative", 0
        ),
        "train classifier",
        "--negative",
    )


def test_quantize_recognises_a_classifier_and_writes_an_ftz(run, labelled, tmp_path):
    train, test = labelled
    model = tmp_path / "m.bin"
    run("train", "classifier", train, "-o", model, *OPTIONS, "--quiet")
    result = run("quantize", model, "-o", tmp_path / "m.ftz", "--cutoff", 300, "--no-qnorm")
    assert result.code == 0 and "fastText .ftz" in result.err, result
    api = FastTextClassifier.load_fasttext(model).quantize(cutoff=300, qnorm=False)
    n, precision, _ = api.test(test)
    assert run("test", tmp_path / "m.ftz", test).out.splitlines()[:2] == [
        f"N\t{n}",
        f"P@1\t{precision:.3g}",
    ]
    assert_one_line_error(
        run("quantize", model, "-o", tmp_path / "x.ftz", "--retrain"), "quantize", "--input"
    )


def test_train_classifier_autotunes_against_a_validation_file(run, labelled, tmp_path):
    train, test = labelled
    FastTextClassifier(epochs=1).fit(train)  # numba compiles here, not in the 2 s of trials
    result = run(
        "train", "classifier", train, "-o", tmp_path / "m.bin", "--valid", test, "--autotune", 2
    )
    assert result.code == 0 and "autotune: best f1" in result.err, result
    assert_one_line_error(
        run("train", "classifier", train, "-o", tmp_path / "m.bin", "--autotune", 2),
        "train classifier",
        "--valid",
    )


def test_standard_input_is_read_once_for_every_figure(run, labelled, tmp_path, monkeypatch):
    """``rowbook test model -`` with --per-label and --confusion: the figures of the file."""
    import io

    train, test = labelled
    model = tmp_path / "m.bin"
    run("train", "classifier", train, "-o", model, *OPTIONS, "--quiet")
    from_file = run("test", model, test, "--per-label", "--confusion")
    monkeypatch.setattr("sys.stdin", io.StringIO(test.read_text()))
    from_stdin = run("test", model, "-", "--per-label", "--confusion")
    assert from_stdin.code == 0, from_stdin
    assert from_stdin.out == from_file.out
    assert "N\t50" in from_stdin.out


def test_a_line_longer_than_a_read_chunk_is_predicted_once(run, labelled, tmp_path):
    """A line of 1.2 MB (read in pieces) gets one line of labels, that of the whole line."""
    train, _ = labelled
    model = tmp_path / "m.bin"
    run("train", "classifier", train, "-o", model, *OPTIONS, "--quiet")
    long = " ".join(["the", "bank", "of", "a"] * 75_000)  # 1.2 MB, more than one chunk
    lines = tmp_path / "long.txt"
    lines.write_text(f"goal team\n{long}\ntax\n")
    result = run("predict", model, lines, "--probs")
    assert result.code == 0, result
    api = FastTextClassifier.load_fasttext(model)
    labels, probs = api.predict(["goal team", long, "tax"])
    assert result.out.splitlines() == [
        f"{ls[0]} {ps[0]:.6g}" for ls, ps in zip(labels, probs, strict=True)
    ]
