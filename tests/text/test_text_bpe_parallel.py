"""Counting BPE's words on several processes gives the serial count, and so the same merges."""

from __future__ import annotations

import numpy as np
import pytest
from tokenizers import ByteLevelBPETokenizer

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import count as bpe_count


@pytest.fixture(scope="module")
def texts():
    rng = np.random.default_rng(11)
    words = ["the", "cat", "sat", "naïve", "日本語", "don't", "42", "  ", "end."] + [
        f"w{i}" for i in range(200)
    ]
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    return [" ".join(rng.choice(words, size=rng.integers(1, 40), p=p)) for _ in range(3000)]


def test_parallel_count_equals_the_serial_count_in_order(texts, monkeypatch):
    monkeypatch.setattr(bpe_count, "BATCH_CHARS", 5_000)  # many batches
    serial = ByteLevelBPE().count_words(texts, special_tokens=["<s>"])
    parallel = ByteLevelBPE().count_words(texts, special_tokens=["<s>"], workers=2)
    assert parallel == serial
    assert list(parallel) == list(serial)  # first-sighting order, which ties may depend on


def test_parallel_training_matches_tokenizers(texts, monkeypatch, tmp_path):
    monkeypatch.setattr(bpe_count, "BATCH_CHARS", 20_000)
    ours = ByteLevelBPE().fit(texts, 400, workers=2)
    theirs = ByteLevelBPETokenizer()
    theirs.train_from_iterator(texts, vocab_size=400, min_frequency=2, show_progress=False)
    assert ours.merges == [tuple(m.split(" ")) for m in _merges(theirs, tmp_path)]
    assert ours.merges == ByteLevelBPE().fit(texts, 400, workers=1).merges


def _merges(tokenizer, folder):
    tokenizer.save_model(str(folder))
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#version")]


def test_workers_is_checked():
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        ByteLevelBPE().count_words(["a"], workers=0)
