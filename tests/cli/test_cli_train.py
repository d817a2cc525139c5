"""train word2vec / glove / nplm: the same tables as the library's API, files other tools read,
interruption and resume, and one-line errors."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rowbook.models import NPLM, GloVe, Word2Vec

W2V = ["--vector-size", 12, "--min-count", 2, "--epochs", 3, "--workers", 1, "--seed", 7]
W2V_API = dict(vector_size=12, min_count=2, epochs=3, workers=1, seed=7)


def sentences(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()]


@pytest.mark.parametrize("suffix", [".txt", ".bin", ".npz"])
def test_word2vec_equals_the_api_and_gensim_reads_it(run, corpus_txt, tmp_path, suffix):
    from gensim.models import KeyedVectors

    out = tmp_path / f"vectors{suffix}"
    result = run(
        "train", "word2vec", corpus_txt, "-o", out, *W2V, "--architecture", "cbow", "--quiet"
    )
    assert result.code == 0 and result.out == "" and result.err == "", result
    api = Word2Vec(**W2V_API, architecture="cbow").fit(sentences(corpus_txt)).vectors
    if suffix == ".npz":
        from rowbook import Vectors

        got = Vectors.load(out)
        assert got.index_to_key == api.index_to_key
        np.testing.assert_array_equal(got.vectors, api.vectors)
        np.testing.assert_array_equal(got.counts, api.counts)
    else:
        kv = KeyedVectors.load_word2vec_format(str(out), binary=suffix == ".bin")
        assert tuple(kv.index_to_key) == api.index_to_key
        np.testing.assert_array_equal(kv.vectors, api.vectors)  # shortest round-trip decimals


def test_word2vec_kernel_option_equals_the_api(run, corpus_txt, tmp_path):
    out = tmp_path / "vectors.npz"
    result = run("train", "word2vec", corpus_txt, "-o", out, *W2V, "--kernel", "batched", "--quiet")
    assert result.code == 0, result
    from rowbook import Vectors

    api = Word2Vec(**W2V_API, kernel="batched").fit(sentences(corpus_txt)).vectors
    np.testing.assert_array_equal(Vectors.load(out).vectors, api.vectors)


def test_word2vec_summary_and_stdin(run, corpus_txt, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(corpus_txt.read_text().upper()))
    out = tmp_path / "v.txt"
    result = run("train", "word2vec", "-", "-o", out, *W2V)  # lower-cased by default
    assert result.code == 0, result
    n_words = len(corpus_txt.read_text().split())
    assert (
        result.out.startswith("word2vec: ")
        and f"from {n_words:,} corpus words, 3 epochs" in result.out
    )
    assert "epoch 3/3: lr " in result.err and " words/s" in result.err  # progress: a line per epoch
    api = Word2Vec(**W2V_API).fit(sentences(corpus_txt)).vectors
    assert out.read_text().splitlines()[0] == f"{len(api)} 12"
    assert [line.split()[0] for line in out.read_text().splitlines()[1:]] == list(api.index_to_key)


def test_glove_equals_the_api(run, corpus_txt, tmp_path):
    out = tmp_path / "g.npz"
    argv = [
        "--vector-size",
        8,
        "--window",
        4,
        "--min-count",
        2,
        "--epochs",
        4,
        "--workers",
        1,
        "--seed",
        2,
    ]
    result = run("train", "glove", corpus_txt, "-o", out, *argv, "--x-max", 10, "--lr", 0.1)
    assert result.code == 0, result
    api = GloVe(
        vector_size=8, window=4, min_count=2, epochs=4, workers=1, seed=2, x_max=10.0, lr=0.1
    )
    expected = api.fit(sentences(corpus_txt)).vectors
    from rowbook import Vectors

    got = Vectors.load(out)
    assert got.index_to_key == expected.index_to_key
    np.testing.assert_array_equal(got.vectors, expected.vectors)
    assert f"{api.n_records_:,} co-occurrence records" in result.out


def test_nplm_table_and_sample(run, tmp_path):
    lines = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 4
    corpus = tmp_path / "lines.txt"
    corpus.write_text("\n".join(lines) + "\n\n")
    out = tmp_path / "lm.npz"
    argv = [
        "--context",
        2,
        "--dim",
        4,
        "--hidden",
        8,
        "--epochs",
        2,
        "--seed",
        3,
        "--sample-length",
        30,
    ]
    result = run("train", "nplm", corpus, "-o", out, *argv, "--quiet")
    assert result.code == 0, result
    lm = NPLM(context=2, dim=4, hidden=8, epochs=2, seed=3).fit(lines)
    from rowbook import Vectors

    table = Vectors.load(out)
    assert list(table.index_to_key) == lm.vocab_.itos
    np.testing.assert_array_equal(table.vectors, lm.vectors.vectors)
    assert result.out == lm.sample(30, temperature=0.8, seed=3) + "\n"
    word = tmp_path / "lm.txt"
    result = run("train", "nplm", corpus, "-o", word, "--level", "word", *argv)
    assert result.code == 0 and result.out.startswith("nplm: word level")
    assert (
        word.read_text().splitlines()[0] == f"{len(set(' '.join(lines).split())) + 2} 4"
    )  # + <s>, <unk>


def test_nplm_reports_held_out_perplexity_and_resumes(run, tmp_path):
    import rowbook

    lines = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 10
    corpus, out, ck = tmp_path / "lines.txt", tmp_path / "lm.npz", tmp_path / "lm.ckpt.npz"
    corpus.write_text("\n".join(lines) + "\n")
    argv = [
        "train",
        "nplm",
        corpus,
        "-o",
        out,
        "--context",
        2,
        "--dim",
        4,
        "--hidden",
        8,
        "--seed",
        3,
        "--sample-length",
        0,
        "--val-fraction",
        0.2,
        "--checkpoint",
        ck,
    ]
    result = run(*argv, "--epochs", 2)
    assert result.code == 0, result
    lm = NPLM(context=2, dim=4, hidden=8, epochs=2, seed=3, val_fraction=0.2).fit(lines)
    last = lm.history_.epochs[-1]
    assert f"training loss {last['loss']:.4f}, perplexity {last['perplexity']:.3f}" in result.out
    assert (
        f"held-out loss {last['val_loss']:.4f}, perplexity {last['val_perplexity']:.3f}"
        in result.out
    )
    assert "epoch 2/2: loss" in result.err and "val_perplexity" in result.err  # one line per epoch
    assert isinstance(rowbook.load(ck), NPLM)  # the checkpoint is a saved model

    result = run(*argv, "--epochs", 3, "--resume")
    assert result.code == 0 and f"3 epochs (continued from {ck})" in result.out, result
    assert "resumed at epoch 3 of 3" in result.err
    full = NPLM(context=2, dim=4, hidden=8, epochs=3, seed=3, val_fraction=0.2).fit(lines)
    np.testing.assert_array_equal(rowbook.Vectors.load(out).vectors, full.vectors.vectors)
    result = run(*argv, "--val-fraction", 1.5)
    assert (
        result.code == 2
        and "--val-fraction must be a finite number in [0.0, 1.0), got 1.5" in result.err
    )


def test_train_errors(run, one_line_error, corpus_txt, tmp_path, monkeypatch):
    out = tmp_path / "v.txt"
    for model in ("word2vec", "glove", "nplm"):
        one_line_error(
            run("train", model, tmp_path / "none.txt", "-o", tmp_path / "v.npz"),
            f"train {model}",
            "none.txt",
            "does not exist",
        )
    (tmp_path / "empty.txt").write_text("\n\n")
    for model in ("word2vec", "glove", "nplm"):
        one_line_error(
            run("train", model, tmp_path / "empty.txt", "-o", tmp_path / "v.npz"),
            f"train {model}",
            "is empty",
        )
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    one_line_error(
        run("train", "word2vec", "-", "-o", out), "train word2vec", "standard input is empty"
    )
    one_line_error(
        run("train", "word2vec", corpus_txt, "-o", out, "--min-count", 10**6, "--quiet"),
        "train word2vec",
        "--min-count must be at most the count of the most frequent word, got 1000000",
    )
    one_line_error(
        run(
            "train", "nplm", corpus_txt, "-o", tmp_path / "lm.npz", "--min-count", 10**6, "--quiet"
        ),
        "train nplm",
        "--min-count must be at most the count of the most frequent token, got 1000000",
    )
    one_line_error(
        run("train", "glove", corpus_txt, "-o", out, "--vector-size", 0),
        "train glove",
        "--vector-size must be an integer >= 1, got 0",
    )
    for argv, message in [
        (["--lr", 0], "--lr must be a finite number in (0.0, inf) or None, got 0.0"),
        (["--min-lr", 0.04], "--min-lr must be a finite number in [0.0, 0.025], got 0.04"),
        (["--negative", 0], "--negative must be an integer >= 1 unless hierarchical softmax is on"),
        (["--epochs", 0], "--epochs must be an integer >= 1, got 0"),
    ]:
        one_line_error(
            run("train", "word2vec", corpus_txt, "-o", out, *argv), "train word2vec", message
        )
    one_line_error(
        run("train", "word2vec", corpus_txt, "-o", tmp_path / "v.vectors"),
        "train word2vec",
        ".vectors",
    )
    one_line_error(
        run("train", "word2vec", corpus_txt, "-o", tmp_path / "no" / "v.txt"),
        "train word2vec",
        "folder",
    )
    one_line_error(run("train", "nplm", corpus_txt, "-o", out), "train nplm", ".npz")
    one_line_error(
        run("train", "word2vec", corpus_txt, "-o", out, "--resume"),
        "train word2vec",
        "--checkpoint",
    )
    (tmp_path / "ck.npz").write_bytes(b"not a checkpoint")
    one_line_error(
        run(
            "train",
            "word2vec",
            corpus_txt,
            "-o",
            out,
            "--checkpoint",
            tmp_path / "ck.npz",
            "--resume",
        ),
        "train word2vec",
        "ck.npz",
    )
    one_line_error(run("train", "word2vec", corpus_txt), "train word2vec", "-o/--output")
    one_line_error(run("train", "bert", corpus_txt, "-o", out), "train", "invalid choice")


def test_resume_continues_a_stopped_run(run, corpus_txt, tmp_path):
    """A run stopped after 2 of 4 epochs and resumed by the CLI ends with the uninterrupted table."""
    from rowbook import Vectors

    ck, out = tmp_path / "ck.npz", tmp_path / "v.npz"
    settings = dict(vector_size=12, min_count=2, workers=1, epochs=4)

    def stop_after_two(progress):
        if progress.epoch == 2:
            raise KeyboardInterrupt  # what Ctrl-C does, after the epoch's checkpoint is written

    with pytest.raises(KeyboardInterrupt):
        Word2Vec(**settings).fit(sentences(corpus_txt), callback=stop_after_two, checkpoint=ck)
    argv = [
        "train",
        "word2vec",
        corpus_txt,
        "-o",
        out,
        "--vector-size",
        12,
        "--min-count",
        2,
        "--workers",
        1,
        "--epochs",
        4,
        "--checkpoint",
        ck,
        "--resume",
    ]
    result = run(*argv)
    assert result.code == 0 and f"4 epochs (continued from {ck})" in result.out, result
    expected = Word2Vec(**settings).fit(sentences(corpus_txt)).vectors
    np.testing.assert_array_equal(Vectors.load(out).vectors, expected.vectors)

    fresh = tmp_path / "fresh.npz"
    result = run(*argv[:-3], "--checkpoint", fresh, "--resume")  # nothing to resume: start afresh
    assert result.code == 0 and f"no checkpoint {fresh} yet; starting at epoch 1" in result.err
    np.testing.assert_array_equal(Vectors.load(out).vectors, expected.vectors)
    assert fresh.exists()


def test_ctrl_c_keeps_the_checkpoint_and_exits_130(tmp_path):
    """SIGINT to a real `rowbook train` process: status 130, one line, a resumable checkpoint."""
    from rowbook.data.synthetic import planted_corpus

    corpus, ck, out = tmp_path / "c.txt", tmp_path / "ck.npz", tmp_path / "v.txt"
    corpus.write_text("".join(" ".join(s) + "\n" for s in planted_corpus(3000, seed=1)))
    argv = [
        "train",
        "word2vec",
        str(corpus),
        "-o",
        str(out),
        "--vector-size",
        16,
        "--epochs",
        60,
        "--workers",
        1,
        "--checkpoint",
        str(ck),
        "--quiet",
    ]
    argv = [str(a) for a in argv]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rowbook.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 600  # the first epoch compiles; a busy machine is slow
    while not ck.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert stderr.strip().splitlines() == [
        f"rowbook train word2vec: interrupted; {ck} holds the last finished epoch; add --resume to "
        "the same command to continue"
    ]
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # no half-written file
    from rowbook.cli import main

    assert main([*argv, "--resume"]) == 0
    expected = Word2Vec(vector_size=16, epochs=60, workers=1).fit(str(corpus)).vectors
    from rowbook import Vectors

    np.testing.assert_array_equal(Vectors.load_word2vec_format(out).vectors, expected.vectors)


def test_word2vec_reads_several_compressed_files_and_folders(run, corpus_txt, tmp_path):
    import bz2
    import gzip

    lines = corpus_txt.read_text().splitlines(keepends=True)
    third = len(lines) // 3
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress("".join(lines[:third]).encode()))
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "b.bz2").write_bytes(bz2.compress("".join(lines[third : 2 * third]).encode()))
    (folder / "c.txt").write_text("".join(lines[2 * third :]))
    plain, parts = tmp_path / "plain.npz", tmp_path / "parts.npz"
    assert run("train", "word2vec", corpus_txt, "-o", plain, *W2V, "--quiet").code == 0
    result = run("train", "word2vec", tmp_path / "a.txt.gz", folder, "-o", parts, *W2V, "--quiet")
    assert result.code == 0, result
    from rowbook import Vectors

    a, b = Vectors.load(plain), Vectors.load(parts)
    assert a.index_to_key == b.index_to_key
    np.testing.assert_array_equal(a.vectors, b.vectors)


def test_a_fifo_corpus_is_refused_in_one_line(run, one_line_error, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for argv, command in (
        (["train", "word2vec", fifo, "-o", tmp_path / "v.txt"], "train word2vec"),
        (["vocab", fifo, "-o", tmp_path / "v.json"], "vocab"),
    ):
        one_line_error(run(*argv), command, "is a FIFO", "'-'")


def test_abbreviations_are_not_options(run, one_line_error, corpus_txt, tmp_path):
    out = tmp_path / "v.txt"
    for argv in (["--vector", 12], ["--to", "whitespace"], ["--min", 2]):
        result = run("train", "word2vec", corpus_txt, "-o", out, *argv)
        assert result.code == 2 and "unrecognized arguments" in result.err, result
    assert not out.exists()


def test_default_reading_is_lowercase_words_and_raw_is_one_option_away(run, tmp_path):
    """Default: lower-cased words, punctuation dropped; --tokenizer whitespace --keep-case: as written."""
    from rowbook import Vectors

    text = "The whale, the Whale's eye. THE WHALE!\n" * 20 + "A ship; the ship's whale.\n" * 20
    corpus = tmp_path / "moby.txt"
    corpus.write_text(text, encoding="utf-8")
    argv = ["--vector-size", 6, "--min-count", 1, "--epochs", 1, "--workers", 1, "--quiet"]
    out = tmp_path / "v.npz"
    assert run("train", "word2vec", corpus, "-o", out, *argv).code == 0
    words = [[w.strip(",.!;").lower() for w in line.split()] for line in text.splitlines()]
    expected = Word2Vec(vector_size=6, min_count=1, epochs=1, workers=1).fit(words).vectors
    got = Vectors.load(out)
    assert got.index_to_key == expected.index_to_key and "whale" in got and "whale," not in got
    np.testing.assert_array_equal(got.vectors, expected.vectors)
    assert (
        run(
            "train",
            "word2vec",
            corpus,
            "-o",
            out,
            *argv,
            "--tokenizer",
            "whitespace",
            "--keep-case",
        ).code
        == 0
    )
    raw = Word2Vec(vector_size=6, min_count=1, epochs=1, workers=1).fit(sentences(corpus)).vectors
    assert Vectors.load(out).index_to_key == raw.index_to_key and "Whale's" in raw


@pytest.mark.parametrize("model", ["word2vec", "glove"])
def test_save_model_then_init_continues_like_the_api(run, corpus_txt, tmp_path, model):
    """--save-model keeps the whole model; --init loads it, adds the new words and trains
    --epochs more: the same tables as load + build_vocab(update=True) + train in the library."""
    import rowbook

    saved, out = tmp_path / "m.model.npz", tmp_path / "v.npz"
    argv = ["--vector-size", 8, "--min-count", 2, "--epochs", 2, "--workers", 1, "--seed", 4]
    result = run("train", model, corpus_txt, "-o", out, *argv, "--save-model", saved)
    assert result.code == 0 and f"model -> {saved}" in result.out, result
    first = rowbook.load(saved)
    np.testing.assert_array_equal(first.vectors.vectors, rowbook.Vectors.load(out).vectors)
    more = tmp_path / "more.txt"
    more.write_text(
        "zebra okapi king zebra okapi queen\n" * 5 + corpus_txt.read_text(), encoding="utf-8"
    )
    result = run(
        "train",
        model,
        more,
        "-o",
        out,
        "--init",
        saved,
        "--epochs",
        1,
        "--workers",
        1,
        "--save-model",
        tmp_path / "next.model.npz",
    )
    assert result.code == 0 and f"1 epochs (more, on a model loaded from {saved})" in result.out, (
        result
    )
    expected = rowbook.load(saved)
    expected.build_vocab(sentences(more), update=True)
    assert "zebra" in expected.index_to_key_
    expected.train(sentences(more), epochs=1)
    got = rowbook.Vectors.load(out)
    assert got.index_to_key == expected.vectors.index_to_key
    np.testing.assert_array_equal(got.vectors, expected.vectors.vectors)
    assert len(rowbook.load(tmp_path / "next.model.npz").history_) == 3


def test_init_errors(run, one_line_error, corpus_txt, tmp_path):
    saved, out = tmp_path / "g.model.npz", tmp_path / "v.txt"
    argv = ["--vector-size", 4, "--min-count", 2, "--epochs", 1, "--workers", 1, "--quiet"]
    assert run("train", "glove", corpus_txt, "-o", out, *argv, "--save-model", saved).code == 0
    one_line_error(
        run("train", "word2vec", corpus_txt, "-o", out, "--init", saved),
        "train word2vec",
        "holds a GloVe model, not a Word2Vec",
    )
    one_line_error(
        run("train", "glove", corpus_txt, "-o", out, "--init", saved, "--window", 3),
        "train glove",
        "--window: a model continued with --init keeps its own parameters",
    )
    one_line_error(
        run(
            "train",
            "glove",
            corpus_txt,
            "-o",
            out,
            "--init",
            saved,
            "--checkpoint",
            saved,
            "--resume",
        ),
        "train glove",
        "give one",
    )
    one_line_error(
        run("train", "glove", corpus_txt, "-o", out, "--init", saved, "--workers", 0),
        "train glove",
        "--workers must be an integer >= 1, got 0",
    )
    one_line_error(
        run("train", "glove", corpus_txt, "-o", out, "--init", tmp_path / "none.npz"),
        "train glove",
        "none.npz",
    )


def _other_value(kwargs: dict, default: object) -> tuple[list[str], object]:
    """Command-line words for a value of the option other than ``default``, and that value."""
    if "choices" in kwargs:
        value = next(c for c in kwargs["choices"] if c != default)
        return [str(value)], value
    if kwargs.get("action") == "store_const":
        return [], kwargs["const"]
    if kwargs["type"] is int:
        value = 2 if default is None else default + 1
    else:
        value = 0.01 if default is None else default / 2
    return [str(value)], value


@pytest.mark.parametrize("command", ["word2vec", "glove", "nplm"])
def test_every_option_sets_the_model_parameter_of_its_name(command):
    """The options come from the model's signature: each one given reaches that parameter."""
    import inspect

    from rowbook.cli import build_parser
    from rowbook.cli.options import OPTIONS, model_options

    parser = build_parser()
    cls = parser.parse_args(["train", command, "c.txt", "-o", "v.npz"]).model_class
    signature = inspect.signature(cls.__init__).parameters
    options = model_options(cls)
    assert set(options) == set(signature) & set(OPTIONS)
    for name, (flag, kwargs) in options.items():
        words, value = _other_value(kwargs, signature[name].default)
        args = parser.parse_args(["train", command, "c.txt", "-o", "v.npz", flag, *words])
        given = {k: getattr(args, k) for k in args.flags if getattr(args, k) is not None}
        assert given == {name: value}, flag
        assert getattr(cls(**given), name) == value
