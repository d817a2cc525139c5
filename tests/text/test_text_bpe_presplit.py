"""GPT-2's compiled pre-split, held to ``regex``.

The pre-split must cut every text as ``regex.findall(GPT2_PATTERN, text)`` does: on the
hard strings of the BPE tests, on the multilingual corpus, and on generated text made of
the characters where the rules meet (every white-space character ``regex`` knows and the
controls it does not count as white space, contractions and lone apostrophes, combining
marks, emoji sequences, CJK, digits of several scripts). Training's word counts from it
are the counts of the pattern's words, in first-sighting order.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rowbook.text.bpe.bytelevel import GPT2_PATTERN
from rowbook.text.bpe.presplit import count_words, cut_text, split_words
from rowbook.text.bpe.pretokenize import PreTokenizer

from .conftest import SENTENCES

WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
WHITE_SPACE += "\u2028\u2029\u202f\u205f\u3000"
NOT_WHITE_SPACE = "\x1c\x1d\x1e\x1f\x00\u200b\u180e\ufeff"  # \s in some engines, not regex's
_PIECE_LIST = [
    *WHITE_SPACE,
    *NOT_WHITE_SPACE,
    *"aZéß日本語한ΩЖ",  # letters
    *"09٣४Ⅻ½",  # numbers: digits of several scripts, a letter number, a fraction
    *".,!?-$'\"()",  # other
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'x", "''",  # contractions
    "e\u0301", "\u0308", "\u200d",  # combining marks, a joiner
    "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️",  # emoji sequences
    "  ", " \n", "\n ", "\u3000 ",
]  # fmt: skip
PIECES = st.sampled_from(_PIECE_LIST)


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


@settings(max_examples=30, deadline=None)
@given(st.lists(PIECES, min_size=300, max_size=1500).map("".join))
def test_words_cut_across_windows_are_the_patterns(text):
    """Long texts are cut a window of bytes at a time (at most what the block has room for:
    from 1 byte to 1,024), so a run, a contraction or a white-space run's last character
    meets a window's end somewhere: the words stay regex's."""
    assert split_words([text, text[::-1]]) == [
        regex.findall(GPT2_PATTERN, text),
        regex.findall(GPT2_PATTERN, text[::-1]),
    ]


def test_long_generated_texts_are_cut_as_regex_does():
    """Contractions before runs of letters of every length meet a window's end too."""
    rng = np.random.default_rng(0)  # 50,000 pieces: every kind of window end, many times
    text = "".join(_PIECE_LIST[i] for i in rng.integers(0, len(_PIECE_LIST), 50_000))
    runs = " ".join(f"it'{c}{'b' * n}" for n in range(120) for c in ("s", "re", "ll", "x"))
    assert split_words([text, runs]) == [regex.findall(GPT2_PATTERN, t) for t in (text, runs)]


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=60).map("".join), st.integers(1, 12))
def test_a_text_cut_for_the_cores_has_the_words_of_the_whole(text, size):
    pieces = cut_text(text, size)
    assert "".join(pieces) == text
    words = [w for piece in split_words(pieces) for w in piece]
    assert words == regex.findall(GPT2_PATTERN, text)


def test_a_text_is_cut_only_before_a_space_after_a_character_that_is_not_white_space():
    assert cut_text("ab cd\u3000 ef  gh", 1) == ["ab", " cd\u3000 ef", "  gh"]
    assert cut_text("日本語の文章" * 10, 4) == ["日本語の文章" * 10]  # no space: whole


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
