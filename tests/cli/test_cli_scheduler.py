"""``--scheduler ADDRESS``: the counting steps on a Dask cluster give the same files as
counting here, with every reading option; and its errors are one line each."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from distributed import LocalCluster

import rowbook.cli._cluster as cluster_module

TRAIN = ["--vector-size", 6, "--epochs", 2, "--workers", 1, "--seed", 3]


@pytest.fixture(scope="module")
def address():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    """A file and a folder of two (one compressed): Zipf words with ties, upper case,
    punctuation and apostrophes, so that every reading option changes the counts."""
    import gzip

    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(60)] + ["The", "the", "cat,", "Cat", "it's", "(dog)", "é"]
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    root = tmp_path_factory.mktemp("corpus")
    (root / "more").mkdir()
    texts = [
        "".join(
            " ".join(rng.choice(words, size=rng.integers(0, 20), p=p)) + "\n" for _ in range(150)
        )
        for _ in range(3)
    ]
    (root / "part0.txt").write_text(texts[0], encoding="utf-8")
    (root / "more" / "a.txt").write_text(texts[1], encoding="utf-8")
    with gzip.open(root / "more" / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write(texts[2])
    return [root / "part0.txt", root / "more"]


def same_file_both_ways(run, address, tmp_path, command, options, name="out.json"):
    """Run ``command corpus -o OUT options`` without and with --scheduler; the two files' bytes."""
    files = []
    for extra in ([], ["--scheduler", address]):
        out = tmp_path / f"{len(files)}{name}"
        result = run(*command, "-o", out, *options, *extra)
        assert result.code == 0, result
        files.append(out.read_bytes())
    return files


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--lower", "--min-count", 2],
        ["--tokenizer", "whitespace", "--max-vocab", 20],
        ["--tokenizer", "char", "--lower"],
        ["--tokenizer", "bpe", "--max-vocab", 300],
        ["--tokenizer", "bpe", "--max-vocab", 290, "--lower", "--min-count", 3],
    ],
)
def test_vocab_files_are_the_same_with_and_without_scheduler(
    run, address, corpus, tmp_path, options
):
    here, there = same_file_both_ways(
        run, address, tmp_path, ["vocab", *corpus, "--quiet"], options
    )
    assert here == there


def test_vocab_summary_says_where_it_counted(run, address, corpus, tmp_path):
    here = run("vocab", *corpus, "-o", tmp_path / "a.json", "--json")
    there = run("vocab", *corpus, "-o", tmp_path / "b.json", "--json", "--scheduler", address)
    assert here.code == there.code == 0
    assert (
        here.out.replace("a.json", "b.json").replace('"lines": 450', '"lines": null') == there.out
    )
    text = run("vocab", *corpus, "-o", tmp_path / "c.json", "--scheduler", address)
    assert text.out.startswith(f"counted 3 files on Dask at {address}: ")


@pytest.mark.parametrize("model", ["word2vec", "fasttext", "glove"])
@pytest.mark.parametrize(
    "options", [["--min-count", 2, "--window", 3], ["--keep-case", "--tokenizer", "whitespace"]]
)
def test_trained_vectors_are_the_same_with_and_without_scheduler(
    run, address, corpus, tmp_path, model, options
):
    command = ["train", model, *corpus, "--quiet", *TRAIN]
    here, there = same_file_both_ways(run, address, tmp_path, command, options, "v.txt")
    assert here == there


@pytest.mark.parametrize("model", ["word2vec", "fasttext"])
def test_spill_dir_and_resume_work_with_scheduler(run, address, corpus, tmp_path, model):
    plain = tmp_path / "plain.txt"
    assert run("train", model, *corpus, "-o", plain, "--quiet", *TRAIN).code == 0
    spill, ckpt = tmp_path / "spill", tmp_path / "run.ckpt.npz"
    spill.mkdir()
    options = ["--spill-dir", spill, "--checkpoint", ckpt, "--resume", "--scheduler", address]
    first = run("train", model, *corpus, "-o", tmp_path / "a.txt", "--quiet", *TRAIN, *options)
    assert first.code == 0, first
    assert (tmp_path / "a.txt").read_bytes() == plain.read_bytes()
    # the finished run's checkpoint resumes to the same vectors: nothing is left to train
    again = run("train", model, *corpus, "-o", tmp_path / "b.txt", "--quiet", *TRAIN, *options)
    assert again.code == 0, again
    assert (tmp_path / "b.txt").read_bytes() == plain.read_bytes()
    assert list(spill.iterdir()) == []


def test_init_continues_the_same_with_and_without_scheduler(run, address, corpus, tmp_path):
    saved = tmp_path / "w2v.model.npz"
    assert (
        run(
            "train",
            "word2vec",
            corpus[0],
            "-o",
            tmp_path / "v.txt",
            "--save-model",
            saved,
            "--quiet",
            *TRAIN,
        ).code
        == 0
    )
    command = ["train", "word2vec", *corpus, "--quiet", "--init", saved, "--epochs", 1]
    here, there = same_file_both_ways(run, address, tmp_path, command, [], "v2.txt")
    assert here == there


def test_unicode_errors_read_the_same_on_the_workers(run, address, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9 au lait\nthe cat\n")
    options = ["--unicode-errors", "replace", "--quiet"]
    here, there = same_file_both_ways(run, address, tmp_path, ["vocab", bad], options)
    assert here == there
    strict = run("vocab", bad, "-o", tmp_path / "s.json", "--scheduler", address)
    assert strict.code == 2 and "bad.txt" in strict.err and "offset 3" in strict.err, strict


def test_without_dask_scheduler_says_how_to_install_it(
    run, one_line_error, corpus, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask now raises ImportError
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = run("vocab", *corpus, "-o", tmp_path / "v.json", "--scheduler", "tcp://127.0.0.1:8786")
    one_line_error(result, "vocab", "--scheduler needs Dask: pip install 'rowbook[dask]'")
    result = run("train", "glove", *corpus, "-o", tmp_path / "g.txt", "--scheduler", "local")
    one_line_error(result, "train glove", "--scheduler needs Dask")


def test_no_scheduler_at_the_address_is_one_line(
    run, one_line_error, corpus, tmp_path, monkeypatch
):
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 0.5)
    closed = "tcp://127.0.0.1:1"
    result = run("train", "word2vec", *corpus, "-o", tmp_path / "v.txt", "--scheduler", closed)
    one_line_error(result, "train word2vec", f"--scheduler {closed}", "no Dask scheduler answered")
    result = run("vocab", *corpus, "-o", tmp_path / "v.json", "--scheduler", "nonsense")
    one_line_error(result, "vocab", "--scheduler nonsense is not a scheduler address", "tcp://")
    assert not (tmp_path / "v.txt").exists() and not (tmp_path / "v.json").exists()


@pytest.mark.parametrize(
    ("model", "options", "needle"),
    [
        ("glove", ["--checkpoint", "c.npz", "--resume"], "--resume does not go with --scheduler"),
        ("word2vec", ["--max-vocab-size", 50], "--max-vocab-size does not go with --scheduler"),
        ("glove", ["--init", "g.npz"], "--init does not go with --scheduler for GloVe"),
    ],
)
def test_options_of_a_local_pass_are_refused(
    run, one_line_error, address, corpus, tmp_path, model, options, needle
):
    result = run(
        "train", model, *corpus, "-o", tmp_path / "v.txt", "--scheduler", address, *options
    )
    one_line_error(result, f"train {model}", needle)


def test_standard_input_cannot_go_to_the_workers(run, one_line_error, address, tmp_path):
    result = run("vocab", "-", "-o", tmp_path / "v.json", "--scheduler", address)
    one_line_error(result, "vocab", "standard input", "save it to a file")


def test_min_count_and_empty_corpus_errors_name_the_flag_and_file(
    run, one_line_error, address, corpus, tmp_path
):
    result = run(
        "train",
        "glove",
        *corpus,
        "-o",
        tmp_path / "g.txt",
        "--scheduler",
        address,
        "--min-count",
        10**6,
    )
    one_line_error(result, "train glove", "--min-count must be at most")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    result = run("train", "word2vec", empty, "-o", tmp_path / "v.txt", "--scheduler", address)
    one_line_error(result, "train word2vec", f"corpus {empty} is empty")


def test_help_says_the_training_stays_here(run):
    result = run("train", "word2vec", "--help")
    assert "--scheduler ADDRESS" in result.out
    assert "training epochs stay on this machine" in " ".join(result.out.split())
    assert "--scheduler ADDRESS" in run("vocab", "--help").out


def test_local_starts_worker_processes_here(run, corpus, tmp_path):
    """``--scheduler local``: the one test that starts processes (a few seconds)."""
    options = ["--lower", "--quiet"]
    here, there = same_file_both_ways(run, "local", tmp_path, ["vocab", *corpus], options)
    assert here == there


def test_cooccur_files_are_the_same_with_and_without_scheduler(run, address, corpus, tmp_path):
    options = ["--window", 3, "--min-count", 2, "--quiet"]
    here, there = same_file_both_ways(
        run, address, tmp_path, ["cooccur", *corpus], options, "c.npz"
    )
    assert here == there


def test_glove_with_scheduler_shuffles_within_memory_in_spill_dir(run, address, corpus, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    options = ["--memory", 0.001, "--spill-dir", spill]
    command = ["train", "glove", *corpus, "--quiet", *TRAIN]
    here, there = same_file_both_ways(run, address, tmp_path, command, options, "g.txt")
    assert here == there
    assert list(spill.iterdir()) == []


def test_cooccur_refuses_a_memory_budget_it_could_not_apply(
    run, one_line_error, address, corpus, tmp_path
):
    result = run(
        "cooccur", *corpus, "-o", tmp_path / "c.npz", "--scheduler", address, "--memory", 1
    )
    one_line_error(result, "cooccur", "--memory does not go with 'cooccur --scheduler'")
