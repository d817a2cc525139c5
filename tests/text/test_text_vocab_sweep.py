"""The vocabulary-size sweep: longer vocabularies, shorter sequences, larger tables; unknown pieces counted."""

from __future__ import annotations

import json

import pytest

from rowbook.cli import main
from rowbook.text import WordPiece
from rowbook.text.vocab_sweep import plot_sweep, sweep_table, vocab_sweep


@pytest.mark.parametrize("model", ["wordpiece", "unigram", "bpe"])
def test_more_entries_shorter_sequences_heavier_table(corpus, model):
    rows = vocab_sweep(corpus, model=model, sizes=[500, 900], dim=16, workers=1)
    assert [r.model for r in rows] == [model, model]
    assert rows[0].vocab_size < rows[1].vocab_size
    assert rows[0].tokens_per_char > rows[1].tokens_per_char
    assert all(
        r.parameters == r.vocab_size * 16 and r.table_bytes == 4 * r.parameters for r in rows
    )


def test_unknown_share_counts_the_unk_tokens(corpus):
    held_out = ["☃☃☃ snowman ☂", "the cat"]
    (row,) = vocab_sweep(corpus, model="wordpiece", sizes=[500], held_out=held_out, workers=1)
    wp = WordPiece().fit(corpus, 500, min_frequency=0, workers=1)
    ids = [i for t in held_out for i in wp.encode(t, add_special_tokens=False).ids]
    assert (
        row.unknown_share == pytest.approx(ids.count(wp.token_to_id("[UNK]")) / len(ids))
        and row.unknown_share > 0
    )


def test_table_picture_and_command(corpus, tmp_path, capsys):
    rows = vocab_sweep(corpus, model="unigram", sizes=[500], workers=1)
    assert "tokens/char" in sweep_table(rows)
    assert plot_sweep(rows, tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "c.txt").write_text("\n".join(corpus), encoding="utf-8")
    argv = ["vocab-sweep", str(tmp_path / "c.txt"), "--model", "wordpiece", "bpe", "--sizes", "500", "800", "--json",
            "-o", str(tmp_path / "p.png")]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows] == ["wordpiece", "wordpiece", "bpe", "bpe"]
    assert (tmp_path / "p.png").exists()
