"""fastText's n-grams and hashing, held to the ``fasttext`` package on hard strings."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.text.char_ngrams import (
    char_ngrams,
    fasttext_hash,
    subword_ids,
    subword_table,
    subword_table_reference,
)

fasttext = pytest.importorskip("fasttext")

IN_CORPUS = ["naïve", "café", "日本語", "😀👍", "a", "é", "ok", "the", "Ωmega", "e\u0301"]
UNSEEN = [
    "whalebone",
    "zé",
    "",
    "x",
    "中",
    "🐳",
    "ß",
    "a\u0301b",
    "</s>",
    "<",
    ">",
    "<>",
    "naïv",
    "ÿÿÿ",
    "\U0001f600" * 3,
    "Σίσυφος",
]
SETTINGS = [(3, 6, 2_000_000), (1, 4, 1_000), (2, 2, 97), (5, 5, 10)]


@pytest.fixture(
    scope="module", params=SETTINGS, ids=lambda s: f"minn{s[0]}-maxn{s[1]}-bucket{s[2]}"
)
def trained(request, tmp_path_factory, train_fasttext):
    minn, maxn, bucket = request.param
    path = tmp_path_factory.mktemp("ft") / "corpus.txt"
    path.write_text((" ".join(IN_CORPUS) + "\n") * 5, encoding="utf-8")
    model = train_fasttext(
        path, model="skipgram", dim=4, minn=minn, maxn=maxn, bucket=bucket, minCount=1, epoch=1
    )
    return model, minn, maxn, bucket


@pytest.mark.parametrize("word", IN_CORPUS + UNSEEN)
def test_ngrams_and_ids_equal_fasttext(trained, word):
    model, minn, maxn, bucket = trained
    words = model.words
    theirs, their_ids = model.get_subwords(word)
    word_id = words.index(word) if word in words else None
    ours = char_ngrams(word, minn, maxn)
    ids = subword_ids(word, minn=minn, maxn=maxn, bucket=bucket, nwords=len(words), word_id=word_id)
    assert ([word] if word_id is not None else []) + ours == theirs
    assert ids.tolist() == their_ids.tolist()


def test_vocabulary_table_equals_fasttext_and_the_reference(trained):
    model, minn, maxn, bucket = trained
    words = model.words
    starts, ids = subword_table(words, minn=minn, maxn=maxn, bucket=bucket)
    ref_starts, ref_ids = subword_table_reference(words, minn=minn, maxn=maxn, bucket=bucket)
    np.testing.assert_array_equal(starts, ref_starts)
    np.testing.assert_array_equal(ids, ref_ids)
    for i, w in enumerate(words):
        assert ids[starts[i] : starts[i + 1]].tolist() == model.get_subwords(w)[1].tolist()


def test_hash_equals_fasttext_subword_id(trained):
    model, _, _, bucket = trained
    nwords = len(model.words)
    for text in ["<wh", "é>", "日本", "😀", "\x7f\x80", "ÿ", "a" * 40]:
        assert model.get_subword_id(text) == nwords + fasttext_hash(text) % bucket


def test_sign_extension_changes_the_hash_of_high_bytes():
    # plain FNV-1a of b"\xe9" differs: fastText xors 0xffffffe9, not 0xe9
    plain = ((2166136261 ^ 0xE9) * 16777619) & 0xFFFFFFFF
    assert fasttext_hash(b"\xe9") != plain
    assert fasttext_hash(b"\xe9") == ((2166136261 ^ 0xFFFFFFE9) * 16777619) & 0xFFFFFFFF


def test_no_ngrams_when_maxn_is_zero():
    starts, ids = subword_table(["ab", "cd"], minn=3, maxn=0, bucket=10)
    assert starts.tolist() == [0, 1, 2] and ids.tolist() == [0, 1]
    assert subword_ids("ab", minn=3, maxn=0, bucket=10, nwords=2).size == 0
