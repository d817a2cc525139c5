"""GPT-2's compiled pre-split and the compiled word cache, held to ``regex`` and to ``encode``.

The pre-split must cut every text as ``regex.findall(GPT2_PATTERN, text)`` does: on the
hard strings of the BPE tests, on the multilingual corpus, and on generated text made of
the characters where the rules meet (every white-space character ``regex`` knows and the
controls it does not count as white space, contractions and lone apostrophes, combining
marks, emoji sequences, CJK, digits of several scripts). Training's word counts from it
are the counts of the pattern's words, in first-sighting order.
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch as bpe_batch
from rowbook.text.bpe.bytelevel import GPT2_PATTERN
from rowbook.text.bpe.presplit import count_words, split_words
from rowbook.text.bpe.pretokenize import PreTokenizer
from rowbook.text.bpe.word_cache import WordCache

from .conftest import SENTENCES

WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
WHITE_SPACE += "\u2028\u2029\u202f\u205f\u3000"
NOT_WHITE_SPACE = "\x1c\x1d\x1e\x1f\x00\u200b\u180e\ufeff"  # \s in some engines, not regex's
PIECES = st.sampled_from(
    [
        *WHITE_SPACE,
        *NOT_WHITE_SPACE,
        *"aZéß日本語한ΩЖ",  # letters
        *"09٣४Ⅻ½",  # numbers: digits of several scripts, a letter number, a fraction
        *".,!?-$'\"()",  # other
        "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'x", "''",  # contractions
        "e\u0301", "\u0308", "\u200d",  # combining marks, a joiner
        "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️",  # emoji sequences
        "  ", " \n", "\n ", "\u3000 ",
    ]
)  # fmt: skip


def test_the_compiled_presplit_cuts_the_hard_strings_as_regex_does(corpus, hard_strings):
    texts = [*SENTENCES, *hard_strings, *corpus, "'", "x'", "'s'", " '", "\u3000x", "  \n"]
    assert split_words(texts) == [regex.findall(GPT2_PATTERN, t) for t in texts]


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join))
def test_the_compiled_presplit_cuts_generated_text_as_regex_does(text):
    assert split_words([text, text[::-1]]) == [
        regex.findall(GPT2_PATTERN, text),
        regex.findall(GPT2_PATTERN, text[::-1]),
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(), max_size=4))
def test_the_compiled_presplit_cuts_any_text_as_regex_does(texts):
    assert split_words(texts) == [regex.findall(GPT2_PATTERN, t) for t in texts]


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_compiled_word_counts_are_the_patterns_counts_in_first_sighting_order(
    corpus, hard_strings, add_prefix_space
):
    texts = [*corpus, *hard_strings, *corpus[:100]]
    pre = PreTokenizer(add_prefix_space=add_prefix_space)
    expected: Counter[str] = Counter()
    for text in texts:
        for piece, special, _ in pre.pieces(text, regex.compile(r"<pad>"), ["<pad>"]):
            if special is None:
                expected.update(regex.findall(GPT2_PATTERN, piece))
    got = pre.count_words(texts, ["<pad>"])
    assert got == expected and list(got) == list(expected)
    assert count_words(iter(texts)) == Counter(
        w for t in texts for w in regex.findall(GPT2_PATTERN, t)
    )


@pytest.fixture(scope="module")
def plain_model(corpus):
    return ByteLevelBPE().fit(corpus, 600)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_small_cache_emptied_when_full_gives_the_same_ids(
    plain_model, corpus, hard_strings, monkeypatch, workers
):
    monkeypatch.setattr(bpe_batch, "POOL_CHARS", 8_000)
    monkeypatch.setattr(bpe_batch, "BATCH_CHARS", 2_000)
    texts = [*corpus, *hard_strings, *SENTENCES]
    small = copy.deepcopy(plain_model)
    small.cache_size = 30  # emptied every few texts, in the workers too
    assert small._encoder.plain and small._encoder.pretokenizer.compiled
    batch = small.encode_batch(texts, workers=workers)
    assert small._encoder.emptied > 0 and len(small._encoder.cache) <= 30
    assert [e.ids for e in batch] == [e.ids for e in plain_model.encode_batch(texts, workers=1)]
    assert [e.ids for e in batch] == [small.encode(t).ids for t in texts]


def test_the_cache_sends_and_takes_back_its_words_as_arrays(plain_model, corpus):
    model = copy.deepcopy(plain_model)
    model._encoder.cache.clear()
    expected = [e.ids for e in model.encode_batch(corpus[:200], workers=1)]
    cache = model._encoder.cache
    twin = WordCache()
    twin.add(cache.since(0))
    twin.add(cache.since(len(cache) // 2))  # known words are skipped
    model._encoder.cache = twin
    emptied = model._encoder.emptied
    assert [e.ids for e in model.encode_batch(corpus[:200], workers=1)] == expected
    assert len(twin) == len(cache) and model._encoder.emptied == emptied


def test_ignore_merges_on_the_plain_path_follows_tokenizers(plain_model, corpus, tmp_path):
    path = tmp_path / "tokenizer.json"
    plain_model.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    for word in ["xyz", "Ġxyz", "Ġquick"]:  # whole words no merge makes (or one already a token)
        vocab.setdefault(word, len(vocab))
    data["model"]["ignore_merges"] = True
    path.write_text(json.dumps(data), encoding="utf-8")
    ours, theirs = ByteLevelBPE.from_tokenizer_json(path), Tokenizer.from_file(str(path))
    assert ours._encoder.ignore_merges and ours._encoder.plain
    texts = [*corpus[:300], *SENTENCES, "xyz xyz, xyzzy quick"]
    got = [e.ids for e in ours.encode_batch(texts)]
    assert got == [e.ids for e in theirs.encode_batch(texts)] == [ours.encode(t).ids for t in texts]
    assert got[-1][:2] == [vocab["xyz"], vocab["Ġxyz"]]
