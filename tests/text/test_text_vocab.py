"""Vocab: the cat sat on the mat example, ordering rules against a sort written out, files, errors."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rowbook.text import Vocab


def test_cat_sat_on_the_mat_example_exactly():
    tokens = "the cat sat on the mat".split()
    vocab = Vocab().fit([tokens])
    assert vocab.stoi == {"<pad>": 0, "<unk>": 1, "the": 2, "cat": 3, "sat": 4, "on": 5, "mat": 6}
    ids = vocab.encode(tokens)
    assert ids.dtype == np.int64 and ids.tolist() == [2, 3, 4, 5, 2, 6]
    assert vocab.decode(ids) == tokens
    assert vocab.counts["the"] == 2 and vocab.counts["<pad>"] == 0


def expected_order(docs, min_count, max_vocab, specials):
    """Specials, then tokens by count descending, ties by first appearance (written out)."""
    first_seen: dict[str, int] = {}
    for tok in (t for doc in docs for t in doc):
        first_seen.setdefault(tok, len(first_seen))
    counts = Counter(t for doc in docs for t in doc)
    kept = [t for t in first_seen if counts[t] >= min_count and t not in specials]
    kept.sort(key=lambda t: (-counts[t], first_seen[t]))
    room = len(kept) if max_vocab is None else max_vocab - len(specials)
    return [*specials, *kept[:room]]


@given(
    docs=st.lists(
        st.lists(st.sampled_from("a b c d e f g <unk> <eos>".split()), max_size=12), max_size=8
    ),
    min_count=st.integers(1, 3),
    max_vocab=st.one_of(st.none(), st.integers(3, 8)),
)
def test_order_min_count_max_vocab(docs, min_count, max_vocab):
    vocab = Vocab(min_count=min_count, max_vocab=max_vocab, eos_token="<eos>").fit(docs)
    assert vocab.itos == expected_order(docs, min_count, max_vocab, ["<pad>", "<unk>", "<eos>"])
    assert [vocab.stoi[t] for t in vocab.itos] == list(range(len(vocab)))
    assert vocab.eos_id == 2 and vocab.pad_id == 0 and vocab.unk_id == 1


def test_specials_and_unknown_tokens():
    vocab = Vocab(bos_token="<bos>", eos_token="<eos>", extra_specials=["<mask>"]).fit(
        [["x", "y", "x"]]
    )
    assert vocab.itos[:5] == ["<pad>", "<unk>", "<bos>", "<eos>", "<mask>"]
    assert vocab.encode(["x", "zzz"]).tolist() == [vocab.stoi["x"], 1]
    strict = Vocab(unk_token=None).fit([["x"]])
    assert strict.itos == ["<pad>", "x"]
    with pytest.raises(KeyError, match="'zzz' is not in the vocabulary and it has no unk_token"):
        strict.encode(["x", "zzz"])


def test_save_load_round_trip(tmp_path):
    vocab = Vocab(min_count=2, bos_token="<s>").fit([list("abracadabra"), list("banana")])
    vocab.save(tmp_path / "vocab.json")
    again = Vocab.load(tmp_path / "vocab.json")
    assert again.itos == vocab.itos and again.counts == vocab.counts
    assert again.min_count == 2 and again.bos_token == "<s>"
    data = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert data["format"] == "rowbook.Vocab" and data["version"] == 1
    assert data["tokens"][:4] == [["<pad>", 0], ["<unk>", 0], ["<s>", 0], ["a", 8]]


def test_files_written_before_the_renames_load(tmp_path):
    """A file holding ``max_size`` (and an older one, ``min_freq``) reads as it was written."""
    vocab = Vocab(min_count=2, max_vocab=4).fit([list("abracadabra")])
    data = vocab.to_dict()
    data["max_size"], data["min_freq"] = data.pop("max_vocab"), data.pop("min_count")
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    again = Vocab.load(tmp_path / "old.json")
    assert (again.max_vocab, again.min_count, again.itos) == (4, 2, vocab.itos)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(version=7), "version 7; this rowbook reads version 1"),
        (lambda d: d.update(format="x"), "not a rowbook Vocab"),
        (lambda d: d.pop("tokens"), "lacks the fields"),
        (lambda d: d["tokens"].append(["a", 1]), "distinct"),
        (lambda d: d["tokens"].pop(0), "start with the specials"),
        (lambda d: d["tokens"].append(["z", "many"]), r"\[token, count\] pairs"),
    ],
)
def test_corrupt_files(tmp_path, edit, message):
    Vocab().fit([["a", "b"]]).save(tmp_path / "v.json")
    data = json.loads((tmp_path / "v.json").read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "v.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        Vocab.load(tmp_path / "v.json")


def test_truncated_file(tmp_path):
    (tmp_path / "v.json").write_text(
        '{"format": "rowbook.Vocab",\n "version": 1,\n "tok', encoding="utf-8"
    )
    with pytest.raises(ValueError, match="at line 3, column"):
        Vocab.load(tmp_path / "v.json")


def test_bad_arguments():
    with pytest.raises(ValueError, match="min_count must be an integer >= 1, got 0"):
        Vocab(min_count=0)
    with pytest.raises(ValueError, match=r"max_vocab must be an integer >= 2"):
        Vocab(max_vocab=1)
    with pytest.raises(ValueError, match="distinct"):
        Vocab(pad_token="<x>", unk_token="<x>")
    with pytest.raises(TypeError, match="wrap one list of tokens in a list"):
        Vocab().fit(["the", "cat"])
    with pytest.raises(TypeError, match="tokens must be str"):
        Vocab().fit([[1, 2]])
    vocab = Vocab().fit([["a"]])
    with pytest.raises(TypeError, match="tokenize it first"):
        vocab.encode("a b")
    with pytest.raises(IndexError, match=r"token id 3 is out of range \[0, 3\)"):
        vocab.decode([0, 3])
    with pytest.raises(ValueError, match="not fitted"):
        Vocab().encode(["a"])
