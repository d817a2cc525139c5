"""WordPiece against Hugging Face ``tokenizers``: BERT's normalizer and pre-tokenizer on every code
point, encodings (ids, tokens, offsets, masks), decoding, training and the files both ways."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import (
    BertWordPieceTokenizer,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from rowbook.text import WordPiece
from rowbook.text import subword_pipeline as subword_module
from rowbook.text import word_counts as word_counts_module
from rowbook.text.aligned import Aligned
from rowbook.text.bert import BertNormalizer, BertPreTokenizer
from rowbook.text.postprocess import WordPieceDecoder
from rowbook.text.word_counts import count_words
from rowbook.text.wordpiece import learn_wordpiece
from rowbook.text.wordpiece.model import encode_word_reference, encode_words

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MORE_HARD = [
    "İstanbul ΣΑΣ ǅ ﬁ",
    "ctrl\x00\x07\x1b[0m\u2028end\ufffd",
    "a" + " " * 40 + "b",
    "[CLS] hi [SEP]x[MASK]",
    "don't , do not !",
    "x" * 120,
    "naïve café 中文字 한국어 ١٢٣",
]


def _hf_train(corpus, vocab_size=800, *, lowercase=True, min_frequency=2):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        min_frequency=min_frequency,
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    ids = tok.get_vocab()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]
    )
    return tok


@pytest.fixture(scope="module")
def hf(corpus):
    return _hf_train(corpus)


@pytest.fixture(scope="module")
def ours(hf, tmp_path_factory):
    path = tmp_path_factory.mktemp("wp") / "tokenizer.json"
    hf.save(str(path))
    return WordPiece.from_tokenizer_json(path)


def _texts(corpus, hard):
    return [*hard, *MORE_HARD, *corpus[:200]]


def test_bert_normalizer_and_pre_tokenizer_agree_with_tokenizers_on_the_unicode_planes():
    """Chunks of 512 code points: the normalized text and the words. Every code point of the
    planes where Unicode assigns characters (0-3 and 14); of planes 4-13 (unassigned) and
    15-16 (private use), where every code point has one category, one in 61."""
    theirs, pre = normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer()
    ours, our_pre = BertNormalizer(), BertPreTokenizer()
    planes = np.arange(0x110000) >> 16
    points = np.flatnonzero(np.isin(planes, (0, 1, 2, 3, 14)) | (np.arange(0x110000) % 61 == 0))
    points = np.setdiff1d(points, np.arange(0xD800, 0xE000))  # (P,) no surrogates
    for chunk in np.array_split(points, len(points) // 512):
        text = "a" + "b".join(map(chr, chunk.tolist())) + "Σ"
        assert ours(text) == theirs.normalize_str(text), hex(chunk[0])
        assert our_pre.words(text) == [w for w, _ in pre.pre_tokenize_str(text)], hex(chunk[0])


def test_aligned_normalization_gives_the_same_text(hard_strings):
    norm = BertNormalizer()
    points = np.setdiff1d(np.arange(0, 0x30000, 7), np.arange(0xD800, 0xE000))
    texts = [
        *hard_strings,
        *MORE_HARD,
        *("".join(map(chr, c)) for c in np.array_split(points, 400)),
    ]
    for text in texts:
        aligned = norm.aligned(Aligned.of(text))
        assert aligned.text == norm(text)
        assert all(
            0 <= s < e <= len(text) for s, e in zip(aligned.starts, aligned.ends, strict=True)
        )


def test_encodings_match_tokenizers(ours, hf, corpus, hard_strings, same_encodings):
    same_encodings(ours, hf, _texts(corpus, hard_strings))
    texts = _texts(corpus, hard_strings)
    batch = ours.encode_batch(texts)
    assert [e.ids for e in batch] == [e.ids for e in hf.encode_batch(texts)]
    assert [e.offsets for e in batch[:40]] == [e.offsets for e in hf.encode_batch(texts[:40])]
    plain = ours.encode("Hello, world!", add_special_tokens=False)
    assert plain.ids == hf.encode("Hello, world!", add_special_tokens=False).ids


def test_decode_matches_tokenizers_and_gives_the_normalized_words(ours, hf, corpus, hard_strings):
    pre, norm = BertPreTokenizer(), BertNormalizer()
    for text in _texts(corpus, hard_strings):
        ids = ours.encode(text).ids
        assert ours.decode(ids) == hf.decode(ids)
        assert ours.decode(ids, skip_special_tokens=False) == hf.decode(
            ids, skip_special_tokens=False
        )
        plain = ours.token_to_id("[UNK]") not in ids and not any(t in text for t in SPECIALS)
        if plain:  # the documented normalized form
            assert ours.decode(ids) == WordPieceDecoder()(pre.words(norm(text)))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_text_encodes_as_tokenizers(ours, hf, data, hard_text):
    text = data.draw(hard_text)
    got, expected = ours.encode(text), hf.encode(text)
    assert (got.ids, got.tokens, got.offsets) == (expected.ids, expected.tokens, expected.offsets)


def test_kernel_equals_the_reference_loop():
    rng = np.random.default_rng(3)
    vocab = ["[UNK]", "a", "b", "ab", "abc", "##a", "##b", "##c", "##bc", "##cab", "c", "é", "##é"]
    index = {t: i for i, t in enumerate(vocab)}
    tries = WordPiece.from_vocab_list(vocab)._tries
    words = ["".join(rng.choice(list("abcéd"), size=rng.integers(1, 12))) for _ in range(500)]
    ids, lengths, bounds = encode_words(words, tries, 0, 9)
    for w, word in enumerate(words):
        expected = encode_word_reference(word, index, "[UNK]", "##", 9)
        got = ids[bounds[w] : bounds[w + 1]].tolist()
        assert got == [index[t] for t, _, _ in expected], word
        assert lengths[bounds[w] : bounds[w + 1]].tolist() == [b - a for _, a, b in expected]


def _continuation_order(theirs, counts, specials):
    """The ids tokenizers gave its ``"##c"`` symbols (hash-map order), read from its vocabulary."""
    alphabet = {c for word in counts for c in word}
    tokens = [t for t, _ in sorted(theirs.get_vocab().items(), key=lambda kv: kv[1])]
    order = []
    for token in tokens[len(specials) + len(alphabet) :]:
        if not (token.startswith("##") and len(token) == 3):
            break
        order.append(token)
    return order


@pytest.mark.parametrize(
    "vocab_size, min_frequency, lowercase", [(800, 2, True), (400, 0, True), (1500, 3, False)]
)
def test_training_learns_the_vocabulary_of_tokenizers(corpus, vocab_size, min_frequency, lowercase):
    theirs = _hf_train(corpus, vocab_size, lowercase=lowercase, min_frequency=min_frequency)
    wp = WordPiece(normalizer=BertNormalizer(lowercase=lowercase))
    counts = count_words(corpus, wp._training_words)
    order = _continuation_order(theirs, counts, SPECIALS)
    tokens = learn_wordpiece(
        counts,
        vocab_size,
        min_count=min_frequency,
        special_tokens=SPECIALS,
        continuation_order=order,
    )
    assert {t: i for i, t in enumerate(tokens)} == theirs.get_vocab()
    fitted = wp.fit(corpus, vocab_size, min_count=min_frequency, workers=1)
    assert len(fitted) == len(tokens) and fitted.token_to_id("[CLS]") == 2
    overlap = len(set(fitted.vocab) & set(tokens)) / len(tokens)
    assert overlap > 0.9  # the ids of "##c" differ (first sighting here, hash order there)


def test_training_on_two_workers_equals_one(corpus, monkeypatch):
    monkeypatch.setattr(word_counts_module, "BATCH_CHARS", 5_000)  # many batches
    one = WordPiece().fit(corpus, 600, workers=1)
    two = WordPiece().fit(corpus, 600, workers=2)
    assert one.vocab == two.vocab


def test_vocab_txt_reads_as_bert_word_piece_tokenizer(
    ours, hf, corpus, hard_strings, tmp_path, same_encodings
):
    ours.save_vocab(tmp_path / "vocab.txt")
    theirs = BertWordPieceTokenizer(str(tmp_path / "vocab.txt"))
    again = WordPiece.from_vocab(tmp_path / "vocab.txt")
    assert again.vocab == theirs.get_vocab() == ours.vocab
    same_encodings(again, theirs, _texts(corpus, hard_strings))


def test_files_round_trip_and_load_in_tokenizers(
    ours, hf, corpus, hard_strings, tmp_path, same_encodings
):
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    theirs = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    texts = _texts(corpus, hard_strings)[:80]
    same_encodings(ours, theirs, texts)
    ours.save(tmp_path / "wp.json")
    again = WordPiece.load(tmp_path / "wp.json")
    assert json.loads((tmp_path / "wp.json").read_text())["format"] == "rowbook.WordPiece"
    same_encodings(again, hf, texts)


def test_added_tokens_match_tokenizers(hf, tmp_path, corpus, same_encodings):
    hf.save(str(tmp_path / "t.json"))
    ours = WordPiece.from_tokenizer_json(tmp_path / "t.json")
    theirs = Tokenizer.from_file(str(tmp_path / "t.json"))
    assert ours.add_special_tokens(["<extra>"]) == theirs.add_special_tokens(["<extra>"])
    for token in ("naïveté", "hello"):  # tokenizers matches a plain added token after normalizing
        theirs.add_tokens([__import__("tokenizers").AddedToken(token, normalized=False)])
        ours.add_tokens([token])
    assert ours.vocab == theirs.get_vocab()
    same_encodings(ours, theirs, ["x<extra>naïveté hello", "Hello naïveté", *corpus[:20]])
    ours.to_tokenizer_json(tmp_path / "again.json")
    same_encodings(
        WordPiece.from_tokenizer_json(tmp_path / "again.json"), theirs, ["x<extra>naïveté"]
    )


def test_encode_batch_on_processes_equals_one_process(ours, corpus, monkeypatch):
    monkeypatch.setattr(subword_module, "POOL_CHARS", 1000)
    monkeypatch.setattr(subword_module, "BATCH_CHARS", 2000)
    texts = corpus[:600]
    assert [e.ids for e in ours.encode_batch(texts, workers=2)] == [
        ours.encode(t).ids for t in texts
    ]


def test_unknown_words_and_bad_input(ours):
    assert ours.encode("x" * 120, add_special_tokens=False).tokens == ["[UNK]"]
    with pytest.raises(TypeError, match="text must be a str"):
        ours.encode(3)
    with pytest.raises(TypeError, match="encode_batch expects a sequence of str"):
        ours.encode_batch("abc")
    with pytest.raises(IndexError, match="out of range"):
        ours.decode([len(ours)])
    with pytest.raises(ValueError, match="not fitted"):
        WordPiece().encode("a")
    no_unk = WordPiece.from_vocab_list(["a", "b"], unk_token="[UNK]")
    with pytest.raises(
        ValueError, match="cannot be split and unk_token '\\[UNK\\]' is not in the vocabulary"
    ):
        no_unk.encode("abc")
    with pytest.raises(ValueError, match="vocab_size must be an integer >= 5"):
        WordPiece().fit(["a"], 3)
