"""Normalizer, WordTokenizer and CharTokenizer against the standard library and `regex`."""

from __future__ import annotations

import string
import unicodedata

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from rowbook.text import DEFAULT_WORD_PATTERN, CharTokenizer, Normalizer, WordTokenizer


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD"])
@given(text=st.text())
def test_unicode_forms_match_unicodedata(form, text):
    assert Normalizer(unicode_form=form)(text) == unicodedata.normalize(form, text)


@given(text=st.text())
def test_case_steps_match_str_methods(text):
    nfc = unicodedata.normalize("NFC", text)
    assert Normalizer(case="lower")(text) == nfc.lower()
    assert Normalizer(case="casefold")(text) == nfc.casefold()
    assert Normalizer(unicode_form=None)(text) == text


@given(text=st.text())
def test_strip_accents_drops_exactly_the_nonspacing_marks(text):
    out = Normalizer(unicode_form="NFD", strip_accents=True)(text)
    expected = "".join(
        c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
    )
    assert out == unicodedata.normalize("NFD", expected)
    assert not any(unicodedata.category(c) == "Mn" for c in out)


@given(text=st.text(alphabet=st.sampled_from(" \t\n\u00a0\u2003\u3000ab,.!?¿—«»")))
def test_whitespace_and_punctuation_steps(text):
    norm = Normalizer(
        unicode_form=None, strip_punctuation=True, collapse_whitespace=True, strip=True
    )
    no_punct = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
    assert norm(text) == " ".join(no_punct.split())  # str.split agrees with \s on this alphabet


def test_cat_sat_on_the_mat_normalization():
    assert (
        Normalizer(case="lower", strip=True)("The cat sat on the mat ") == "the cat sat on the mat"
    )


def test_normalizer_errors():
    with pytest.raises(ValueError, match="unicode_form must be one of"):
        Normalizer(unicode_form="NFX")
    with pytest.raises(ValueError, match="case must be one of"):
        Normalizer(case="upper")
    with pytest.raises(TypeError, match="expects a str, got bytes"):
        Normalizer()(b"x")
    with pytest.raises(TypeError, match="strip must be a bool"):
        Normalizer(strip="yes")


QUOTES = "\u2019\u2018\u201b\u02bc\uff07\u201c\u201d\u201e\u201f\uff02"  # ’ ‘ ‛ ʼ ＇ “ ” „ ‟ ＂
ASCII = str.maketrans(QUOTES, "'" * 5 + '"' * 5)
TEXTS = st.text(st.sampled_from("ab1 ,'\"" + QUOTES) | st.characters())


@given(text=TEXTS)
def test_word_tokenizer_matches_regex_findall_and_str_split(text):
    assert WordTokenizer()(text) == regex.findall(DEFAULT_WORD_PATTERN, text.translate(ASCII))
    assert WordTokenizer(ascii_quotes=False)(text) == regex.findall(DEFAULT_WORD_PATTERN, text)
    assert WordTokenizer(pattern=None)(text) == text.split()
    tokens = WordTokenizer()(text)
    kept = "".join(c for c in text.translate(ASCII) if not regex.match(r"\s", c))
    assert "".join(tokens) == kept  # nothing lost


def test_typographic_apostrophes_and_quotes_read_as_ascii(tmp_path):
    from rowbook.text import TextPipeline, Vocab

    pipe = TextPipeline(None, WordTokenizer(ascii_quotes=False), Vocab()).fit(["a’b"])
    pipe.save(tmp_path / "p.json")
    assert TextPipeline.load(tmp_path / "p.json").tokenizer.ascii_quotes is False
    assert WordTokenizer()("whale’s") == WordTokenizer()("whale's") == ["whale's"]
    assert WordTokenizer()("“Call me”") == ['"', "Call", "me", '"']
    assert WordTokenizer(ascii_quotes=False)("whale’s") == ["whale’s"]
    with pytest.raises(TypeError, match="ascii_quotes must be True or False"):
        WordTokenizer(ascii_quotes="yes")


def test_default_word_pattern_separates_punctuation():
    punct = [
        t for t in WordTokenizer()("Hello, world! (Yes) -- it's 'fine'.") if t in string.punctuation
    ]
    assert punct == [",", "!", "(", ")", "-", "-", "'", "'", "."]
    assert "it's" in WordTokenizer()("it's")


@given(text=st.text())
def test_char_tokenizer_round_trips(text):
    chars = CharTokenizer()(text)
    assert chars == list(text) and CharTokenizer().detokenize(chars) == text
    graphemes = CharTokenizer(graphemes=True)(text)
    assert "".join(graphemes) == text and graphemes == regex.findall(r"\X", text)


def test_tokenizer_errors():
    with pytest.raises(TypeError, match="expects a str, got int"):
        WordTokenizer()(3)
    with pytest.raises(TypeError, match="expects a str, got list"):
        CharTokenizer()(["a"])
    with pytest.raises(ValueError, match="not a valid regular expression"):
        WordTokenizer(pattern="(")
