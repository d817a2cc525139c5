"""The command line as a whole: help with examples everywhere, the console script, exit codes,
warnings and interrupts, and ``rowbook bench``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import rowbook
from rowbook.cli import build_parser, main, misc


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every (sub-)command's parser, by its full name ("train word2vec")."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found[f"{prefix}{name}"] = sub
                    walk(sub, f"{prefix}{name} ")

    walk(build_parser(), "")
    return found


def test_every_command_is_there():
    expected = {
        "demo",
        "tokenize",
        "vocab",
        "train",
        "train word2vec",
        "train glove",
        "train fasttext",
        "train nplm",
        "train classifier",
        "predict",
        "test",
        "cooccur",
        "neighbors",
        "analogy",
        "similarity",
        "evaluate",
        "compare",
        "plot",
        "convert",
        "quantize",
        "prune",
        "bench",
        "train lm",
        "generate",
        "size",
        "vocab-sweep",
        "inspect",
    }
    assert set(command_parsers()) == expected


@pytest.mark.parametrize("name", sorted(command_parsers()))
def test_help_has_examples(run, name):
    result = run(*name.split(), "--help")
    assert result.code == 0 and result.err == ""
    assert result.out.startswith(f"usage: rowbook {name}")
    examples = result.out.split("examples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith("  ") and "rowbook " in line for line in examples)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "rowbook"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: rowbook") and "examples:" in done.stdout
    for command in ("demo", "train", "neighbors", "convert", "bench"):
        assert command in done.stdout
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == f"rowbook {rowbook.__version__}"


def test_usage_errors_are_one_line(run, one_line_error):
    result = run("frobnicate")
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith("rowbook: error: argument COMMAND: invalid choice: 'frobnicate'")
    one_line_error(
        run("neighbors", "v.txt", "king", "--topn", "many"), "neighbors", "invalid int value"
    )
    one_line_error(run("similarity", "v.txt", "king"), "similarity", "WORD2")
    result = run()
    assert (
        result.code == 2
        and result.err.startswith("rowbook: error: ")
        and result.err.count("\n") == 1
    )


def test_warnings_become_one_line(run, write_vectors, planted, tmp_path):
    keys, table = planted
    path = write_vectors(
        tmp_path / "dup.txt", [*keys[:-1], keys[0]], table
    )  # the last key repeats "man"
    result = run("neighbors", path, "king", "--topn", 1)
    assert result.code == 0
    assert result.err.startswith("rowbook neighbors: warning: ") and result.err.count("\n") == 1
    assert "duplicate" in result.err


def test_interrupt_exits_130_and_debug_shows_the_traceback(run, vectors_txt, monkeypatch):
    from rowbook.cli import query

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(query, "load_vectors", interrupted)
    result = run("neighbors", vectors_txt, "king")
    assert result.code == 130 and result.err.strip() == "rowbook neighbors: interrupted"
    monkeypatch.undo()
    monkeypatch.setenv("ROWBOOK_DEBUG", "1")
    with pytest.raises(KeyError, match="quen"):
        main(["neighbors", str(vectors_txt), "quen"])


@pytest.mark.parametrize("bug", [TypeError, KeyError, IndexError, AttributeError])
def test_a_bug_shows_its_traceback_and_asks_for_a_report(run, vectors_txt, monkeypatch, bug):
    """Plain TypeError / KeyError / IndexError come from a bug, not from the user's input:
    rowbook raises its own subclasses (rowbook.checks) on purpose, and only those are one line."""
    from rowbook.cli import query

    def broken(*args, **kwargs):
        raise bug("internal slip")

    monkeypatch.setattr(query, "load_vectors", broken)
    result = run("neighbors", vectors_txt, "king")
    assert result.code == 1, result
    assert "Traceback" in result.err and "internal slip" in result.err
    last = result.err.strip().splitlines()[-1]
    assert last.startswith("rowbook neighbors: this is a bug in rowbook") and "report" in last


def test_rowbooks_own_type_and_key_errors_stay_one_line(run, vectors_txt, one_line_error):
    from rowbook.checks import InputTypeError, UnknownKeyError

    assert issubclass(InputTypeError, TypeError) and issubclass(UnknownKeyError, KeyError)
    one_line_error(run("neighbors", vectors_txt, "quen"), "neighbors", "quen")


def test_bench_runs_the_checkout_benchmarks(tmp_path, monkeypatch, capfd):
    repo = Path(rowbook.__file__).resolve().parents[1]
    assert misc.benchmarks_dir() == (
        repo / "benchmarks" if (repo / "benchmarks" / "run.py").is_file() else None
    )
    fake = tmp_path / "benchmarks"
    fake.mkdir()
    (fake / "run.py").write_text("import sys\nprint('ran', sys.argv[1:])\nraise SystemExit(3)\n")
    monkeypatch.setattr(misc, "benchmarks_dir", lambda: fake)
    assert main(["bench", "--quick", "word2vec"]) == 3  # the benchmarks' own status
    assert capfd.readouterr().out == "ran ['--quick', 'word2vec']\n"


def test_bench_outside_a_checkout(run, one_line_error, monkeypatch):
    monkeypatch.setattr(misc, "benchmarks_dir", lambda: None)
    one_line_error(run("bench"), "bench", "source checkout", "pip install -e")
