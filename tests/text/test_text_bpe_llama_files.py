"""Llama 2 / Mistral (byte-fallback BPE) and Llama 3 / Qwen 2 (byte-level BPE) ``tokenizer.json``
files, built with ``tokenizers`` itself: rowbook's ids, tokens and offsets equal its own,
the files written back give ``tokenizers`` the same ids, and ``load_tokenizer`` tells them
apart by content."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from tokenizers import (
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from rowbook.text import ByteFallbackBPE, ByteLevelBPE, load_tokenizer
from rowbook.text.bpe.fallback_files import from_document
from rowbook.text.loading import identify

from .conftest import HARD_TEXT

BYTES = [f"<0x{b:02X}>" for b in range(256)]
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
EXTRA = ["<s>hello</s> world", "  double  space ", "x", "\u00e9t\u00e9 e\u0301te\u0301 \u2126"]


def _llama2(corpus, style: str, unk: bool = True, byte_fallback: bool = True, fuse: bool = True):
    """A Llama 2 style tokenizer: trained with a splitting Metaspace, then given the
    normalizer (``legacy``) or the Metaspace pre-tokenizer (``metaspace``) of the files."""
    model = models.BPE(
        unk_token="<unk>" if unk else None, byte_fallback=byte_fallback, fuse_unk=fuse
    )
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=True)
    specials = ["<unk>", "<s>", "</s>"] + (BYTES if byte_fallback else [])
    trainer = trainers.BpeTrainer(
        vocab_size=1200, special_tokens=specials, limit_alphabet=70, show_progress=False
    )
    tok.train_from_iterator(corpus, trainer)
    if style == "legacy":
        tok.pre_tokenizer = None
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    document = json.loads(tok.to_str())
    document["added_tokens"] = document["added_tokens"][:3]  # byte pieces: vocabulary only
    return Tokenizer.from_str(json.dumps(document))


def _byte_level(corpus, style: str):
    """A Llama 3 (template, ignore_merges) or Qwen 2 (NFC) style byte-level tokenizer."""
    tok = Tokenizer(models.BPE(ignore_merges=style == "llama3"))
    split = pre_tokenizers.Split(Regex(LLAMA3 if style == "llama3" else QWEN2), "isolated")
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    if style == "qwen2":
        tok.normalizer = normalizers.NFC()
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    byte_level = processors.ByteLevel(trim_offsets=False)
    if style == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        template = processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
            special_tokens=[("<|begin_of_text|>", bos)],
        )
        tok.post_processor = processors.Sequence([byte_level, template])
    else:
        tok.post_processor = byte_level
    return tok


def _same(ours, theirs, texts, offsets: bool = True) -> None:
    for add in (True, False):
        for text in texts:
            got = ours.encode(text, add_special_tokens=add)
            expected = theirs.encode(text, add_special_tokens=add)
            assert got.ids == expected.ids, (add, text)
            assert got.tokens == expected.tokens, (add, text)
            assert got.special_tokens_mask == expected.special_tokens_mask, (add, text)
            if offsets:
                assert got.offsets == expected.offsets, (add, text)
    batch = ours.encode_batch(texts, workers=1)
    assert [e.ids for e in batch] == [e.ids for e in theirs.encode_batch(texts)]


@pytest.mark.parametrize("style", ["legacy", "metaspace"])
@pytest.mark.parametrize(
    "options",
    [{}, {"byte_fallback": False}, {"byte_fallback": False, "fuse": False}],
    ids=["byte-fallback", "unk-fused", "unk"],
)
def test_byte_fallback_files_equal_tokenizers(corpus, hard_strings, tmp_path, style, options):
    theirs = _llama2(corpus, style, **options)
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(ours, ByteFallbackBPE)
    texts = [*hard_strings, *corpus[:150], *EXTRA]
    _same(ours, theirs, texts)
    for text in texts:
        ids = theirs.encode(text).ids
        assert ours.decode(ids) == theirs.decode(ids), text
    if not options:  # the byte pieces are used: CJK and emoji are outside the alphabet
        assert "<0xE6>" in ours.encode("日本語").tokens


def test_byte_fallback_files_written_back(corpus, hard_strings, tmp_path):
    theirs = _llama2(corpus, "legacy")
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = ByteFallbackBPE.from_tokenizer_json(tmp_path / "tokenizer.json")
    ours.to_tokenizer_json(tmp_path / "back.json")
    back = Tokenizer.from_file(str(tmp_path / "back.json"))
    ours.save(tmp_path / "rowbook.json")
    again = load_tokenizer(tmp_path / "rowbook.json")
    texts = [*hard_strings, *corpus[:100], *EXTRA]
    for text in texts:
        expected = theirs.encode(text).ids
        assert back.encode(text).ids == expected == again.encode(text).ids, text
    assert identify(tmp_path / "rowbook.json").kind == "rowbook"


def test_dropped_characters_without_unk(corpus):
    """No unk_token and no byte fallback: tokenizers drops unknown characters (ids equal;
    its offsets then shift, rowbook's point at the characters)."""
    theirs = _llama2(corpus, "metaspace", unk=False, byte_fallback=False)
    ours = from_document(ByteFallbackBPE, json.loads(theirs.to_str()), "test")
    for text in ["héllo wörld ✓ 日本語", *corpus[:50]]:
        assert ours.encode(text).ids == theirs.encode(text).ids, text


def test_byte_fallback_bad_fields(corpus, tmp_path):
    doc = json.loads(_llama2(corpus, "legacy").to_str())
    cases = [
        ({"dropout": 0.1}, "dropout"),
        ({"end_of_word_suffix": "</w>"}, "end_of_word_suffix"),
        ({"merges": [["▁", "not-a-token"]]}, "not-a-token"),
        ({"vocab": {"a": 5}}, "ids run from 0"),
        ({"byte_fallback": "yes"}, "byte_fallback must be true or false"),
    ]
    for change, message in cases:
        bad = {**doc, "model": {**doc["model"], **change}}
        with pytest.raises(ValueError, match=message):
            from_document(ByteFallbackBPE, bad, "test")
    with pytest.raises(ValueError, match="ByteFallbackBPE"):
        path = tmp_path / "t.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        ByteLevelBPE.from_tokenizer_json(path)


@pytest.mark.parametrize("style", ["llama3", "qwen2"])
def test_llama3_and_qwen2_files_equal_tokenizers(corpus, hard_strings, tmp_path, style):
    theirs = _byte_level(corpus, style)
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(ours, ByteLevelBPE)
    texts = [*hard_strings, *corpus[:150], *EXTRA, "<|begin_of_text|>a<|end_of_text|>\u0338"]
    # offsets: NFC joins "e" + U+0301 into one character, whose span rowbook gives whole
    _same(ours, theirs, texts, offsets=style == "llama3")
    ours.to_tokenizer_json(tmp_path / "back.json")
    back = Tokenizer.from_file(str(tmp_path / "back.json"))
    ours.save(tmp_path / "rowbook.json")
    again = ByteLevelBPE.load(tmp_path / "rowbook.json")
    for text in texts:
        expected = theirs.encode(text).ids
        assert back.encode(text).ids == expected == again.encode(text).ids, text
    if style == "llama3":
        assert ours.encode("hi").ids[0] == theirs.token_to_id("<|begin_of_text|>")


def test_qwen2_offsets_point_into_the_original_text(corpus, tmp_path):
    """With NFC, offsets index the original text: a composed character covers both of its
    code points; tokens elsewhere have tokenizers' offsets."""
    theirs = _byte_level(corpus, "qwen2")
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    text = "cafe\u0301 au lait, e\u0301te\u0301"
    got, expected = ours.encode(text), theirs.encode(text)
    assert got.tokens == expected.tokens
    for token, (a, b), theirs_span in zip(got.tokens, got.offsets, expected.offsets, strict=True):
        if "\u0301" in text[a:b]:
            assert b == theirs_span[1] + 1 or theirs_span == (a, b)
        else:
            assert (a, b) == theirs_span, token


def test_byte_fallback_bpe_in_a_text_pipeline(corpus, tmp_path):
    from rowbook.text import TextPipeline

    theirs = _llama2(corpus, "metaspace")
    theirs.save(str(tmp_path / "tokenizer.json"))
    pipe = TextPipeline(tokenizer=load_tokenizer(tmp_path / "tokenizer.json")).fit(["x"])
    pipe.save(tmp_path / "pipe.json")
    again = TextPipeline.load(tmp_path / "pipe.json")
    assert isinstance(again.tokenizer, ByteFallbackBPE)
    text = "Größe 日本語 ok"
    assert again.tokenizer.encode(text).ids == theirs.encode(text).ids


@pytest.fixture(scope="module")
def llama2_pair(corpus, tmp_path_factory):
    theirs = _llama2(corpus, "legacy")
    path = tmp_path_factory.mktemp("llama2") / "tokenizer.json"
    theirs.save(str(path))
    return load_tokenizer(path), theirs


@settings(max_examples=150, deadline=None)
@given(HARD_TEXT)
def test_byte_fallback_on_any_text(llama2_pair, text):
    ours, theirs = llama2_pair
    got, expected = ours.encode(text), theirs.encode(text)
    assert got.ids == expected.ids
    assert got.offsets == expected.offsets
    assert ours.decode(got.ids) == theirs.decode(expected.ids)


@pytest.fixture(scope="module")
def llama3_pair(corpus, tmp_path_factory):
    theirs = _byte_level(corpus, "llama3")
    path = tmp_path_factory.mktemp("llama3") / "tokenizer.json"
    theirs.save(str(path))
    return load_tokenizer(path), theirs


@settings(max_examples=150, deadline=None)
@given(HARD_TEXT)
def test_llama3_on_any_text(llama3_pair, text):
    ours, theirs = llama3_pair
    for add in (True, False):
        got, expected = (
            ours.encode(text, add_special_tokens=add),
            theirs.encode(text, add_special_tokens=add),
        )
        assert got.ids == expected.ids
        assert got.offsets == expected.offsets


def test_unknown_run_waits_behind_byte_pieces(tmp_path):
    """Some byte pieces missing: a character spelled in bytes is written before the unknown
    run waiting to be fused, as tokenizers' merge_word writes it (ids and tokens; the
    offsets tokenizers gives there are its byte positions, not compared)."""
    vocab = {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "a": 3, "b": 4, "ab": 5}
    for fuse in (True, False):
        model = models.BPE(
            vocab, [("a", "b")], unk_token="<unk>", byte_fallback=True, fuse_unk=fuse
        )
        theirs = Tokenizer(model)
        theirs.save(str(tmp_path / "t.json"))
        ours = ByteFallbackBPE.from_tokenizer_json(tmp_path / "t.json")
        for text in ["a☃☃éb", "☃é☃", "ab☃", "é"]:
            got, expected = ours.encode(text), theirs.encode(text)
            assert (got.ids, got.tokens) == (expected.ids, expected.tokens), (fuse, text)
        first = ["a", "<0xC3>", "<0xA9>", "<unk>"] if fuse else ["a", "<unk>", "<0xC3>", "<0xA9>"]
        assert ours.encode("a☃☃éb").tokens[:4] == first
