"""count-vs-neural: the library's experiment on the command line, errors in one line."""

from __future__ import annotations

import json

import pytest

from rowbook.demo.texts import toy_sentences
from rowbook.models import NGramLM

from .conftest import assert_one_line_error

FALLBACK = ["--discount-fallback", 0.5, 1, 1.5]


def test_count_vs_neural_prints_what_the_library_computes(run, tmp_path):
    lines = toy_sentences(300, seed=0)
    (tmp_path / "s.txt").write_text("\n".join(lines))
    result = run("count-vs-neural", tmp_path / "s.txt", "--epochs", 1, *FALLBACK, "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    train = [line for i, line in enumerate(lines) if i % 10]
    held = lines[::10]
    counts = NGramLM(n=3, min_count=2, discount_fallback=(0.5, 1, 1.5)).fit(train)
    assert report["perplexity"]["kneser_ney"] == pytest.approx(counts.perplexity(held))
    assert report["predictions"] == len(counts.windows(held)) and len(report["nplm_epochs"]) == 1
    table = run("count-vs-neural", tmp_path / "s.txt", "--epochs", 1, *FALLBACK)
    assert "held-out perplexity" in table.out and "modified Kneser-Ney" in table.out


def test_count_vs_neural_errors_are_one_line(run, tmp_path):
    (tmp_path / "s.txt").write_text("\n".join(toy_sentences(100, seed=0)))
    result = run("count-vs-neural", tmp_path / "s.txt", "--epochs", 1)
    assert_one_line_error(result, "count-vs-neural", "discount_fallback")
    (tmp_path / "one.txt").write_text("just one line\n")
    result = run("count-vs-neural", tmp_path / "one.txt")
    assert_one_line_error(result, "count-vs-neural", "--held-out")
