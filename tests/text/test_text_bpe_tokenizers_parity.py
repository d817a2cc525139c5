"""What ``tokenizers`` users reach for, against ``tokenizers`` itself on the same inputs.

Encodings (ids, tokens, character offsets, masks), GPT-2-style vocab.json + merges.txt
files, tokens added after training, the BpeTrainer options, BPE-dropout and the
byte-level decoder.
"""

from __future__ import annotations

import pytest
from tokenizers import ByteLevelBPETokenizer, Tokenizer, decoders, models, pre_tokenizers, trainers

from rowbook.text import ByteLevelBPE

SPECIALS = ["<pad>", "<|endoftext|>"]


def _texts(corpus, hard):
    return [*hard[:5], *corpus[:150]]


@pytest.fixture(scope="module")
def trained(corpus):
    ours = ByteLevelBPE().fit(corpus, 600, min_count=2, special_tokens=SPECIALS)
    theirs = ByteLevelBPETokenizer()
    theirs.train_from_iterator(
        corpus, 600, min_frequency=2, special_tokens=SPECIALS, show_progress=False
    )
    return ours, theirs


@pytest.fixture(scope="module")
def gpt2_files(trained, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2")
    vocab, merges = trained[1].save_model(str(folder))
    return vocab, merges


def test_encodings_match_byte_level_bpe_tokenizer(trained, corpus, hard_strings, same_encodings):
    ours, theirs = trained
    assert ours.vocab == theirs.get_vocab()
    same_encodings(ours, theirs, _texts(corpus, hard_strings))
    texts = _texts(corpus, hard_strings)[:40]
    batch = ours.encode_batch(texts)
    assert [e.offsets for e in batch] == [e.offsets for e in theirs.encode_batch(texts)]


def test_offsets_point_into_the_original_text(trained):
    ours, _ = trained
    text = "héllo wörld ✓ 日本語 <pad>"
    encoding = ours.encode(text)
    for token, (start, end) in zip(encoding.tokens, encoding.offsets, strict=True):
        assert 0 <= start <= end <= len(text)
        assert token == "<pad>" or ours.detokenize([token]).strip(" \ufffd") in text[start:end]


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_from_files_matches_byte_level_bpe_tokenizer(
    gpt2_files, corpus, add_prefix_space, hard_strings, same_encodings
):
    vocab, merges = gpt2_files
    ours = ByteLevelBPE.from_files(vocab, merges, add_prefix_space=add_prefix_space)
    theirs = ByteLevelBPETokenizer(vocab, merges, add_prefix_space=add_prefix_space)
    assert ours.vocab == theirs.get_vocab()
    same_encodings(ours, theirs, _texts(corpus, hard_strings))


def test_merges_txt_errors_name_the_line(gpt2_files, tmp_path):
    vocab, _ = gpt2_files
    bad = tmp_path / "merges.txt"
    bad.write_text("#version: 0.2\nĠ t\nthree parts here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"merges.txt, line 3: expected 'left right'"):
        ByteLevelBPE.from_files(vocab, bad)


def test_decode_skips_special_tokens_by_default_as_tokenizers(trained):
    ours, theirs = trained
    ids = ours.encode("a <pad>b<|endoftext|> ✓").ids
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(
        ids, skip_special_tokens=False
    )


def test_added_tokens_match_tokenizers_and_survive_tokenizer_json(
    trained, corpus, tmp_path, hard_strings, same_encodings
):
    base, theirs_base = trained
    path = tmp_path / "base.json"
    base.save(path)
    ours = ByteLevelBPE.load(path)
    theirs = Tokenizer.from_str(theirs_base._tokenizer.to_str())
    plain, special = ["héllo wörld", "☃", "the", "sat on"], ["<mask>", "<pad>"]
    assert ours.add_tokens(plain) == theirs.add_tokens(plain)
    assert ours.add_special_tokens(special) == theirs.add_special_tokens(special)
    assert ours.vocab == theirs.get_vocab()
    texts = [
        "the cat sat on the mat ☃",
        "héllo wörld<mask>héllo wörld",
        *hard_strings[:5],
        *corpus[:60],
    ]
    same_encodings(ours, theirs, texts)
    ids = ours.encode("a ☃ <mask> the<pad>").ids
    assert ours.decode(ids) == theirs.decode(ids)
    assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(
        ids, skip_special_tokens=False
    )
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    same_encodings(ours, Tokenizer.from_file(str(tmp_path / "tokenizer.json")), texts)
    for again in (
        ByteLevelBPE.from_tokenizer_json(tmp_path / "tokenizer.json"),
        _saved(ours, tmp_path),
    ):
        assert again.vocab == ours.vocab and again.special_tokens == ours.special_tokens
        same_encodings(again, theirs, texts)


def _saved(bpe, tmp_path):
    bpe.save(tmp_path / "bpe.json")
    return ByteLevelBPE.load(tmp_path / "bpe.json")


def _hf_train(corpus, **options):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    extra = options.pop("initial_alphabet", [])
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        min_frequency=2,
        special_tokens=SPECIALS,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() + extra,
        **options,
    )
    tok.train_from_iterator(corpus, trainer)
    return tok


@pytest.mark.parametrize(
    "options",
    [
        {"max_token_length": 2},
        {"max_token_length": 4},
        {"max_token_length": 7},
        {"initial_alphabet": ["☃", "€uro", "a"]},
        {"limit_alphabet": 300},
        {"limit_alphabet": 258, "initial_alphabet": ["☃", "☂"], "max_token_length": 5},
    ],
)
def test_trainer_options_learn_the_same_merges_as_bpe_trainer(
    corpus, options, hard_strings, same_encodings
):
    theirs = _hf_train(corpus, **dict(options))
    ours = ByteLevelBPE().fit(corpus, 700, min_count=2, special_tokens=SPECIALS, **options)
    expected = Tokenizer.from_str(theirs.to_str())
    assert ours.vocab == expected.get_vocab()
    same_encodings(ours, expected, hard_strings[:3])


def test_trainer_options_are_checked(corpus):
    with pytest.raises(ValueError, match="limit_alphabet=100 is below the 256 characters"):
        ByteLevelBPE().fit(corpus[:5], 300, limit_alphabet=100)
    with pytest.raises(ValueError, match="max_token_length must be None or an int >= 1"):
        ByteLevelBPE().fit(corpus[:5], 300, max_token_length=0)
    quiet = ByteLevelBPE().fit(corpus, 400, show_progress=False)
    shown = ByteLevelBPE().fit(corpus, 400, show_progress=True)
    assert quiet.merges == shown.merges


def test_dropout_is_seeded_and_bounded_by_the_deterministic_encodings(gpt2_files, corpus):
    vocab, merges = gpt2_files
    plain = ByteLevelBPE.from_files(vocab, merges)
    texts = corpus[:40]
    runs = [ByteLevelBPE.from_files(vocab, merges, dropout=0.3, seed=seed) for seed in (7, 7, 8)]
    first, again, other = ([b.encode(t).ids for t in texts] for b in runs)
    assert first == again and first != other
    for text, ids in zip(texts, first, strict=True):
        assert plain.decode(ids) == text
        assert len(ids) >= len(plain.encode(text).ids)
    none = ByteLevelBPE.from_files(vocab, merges, dropout=0.0, seed=1)
    assert [none.encode(t).ids for t in texts] == [plain.encode(t).ids for t in texts]
    every = ByteLevelBPE.from_files(vocab, merges, dropout=1.0)
    theirs = ByteLevelBPETokenizer(vocab, merges, dropout=1.0)  # deterministic: no merge at all
    assert [every.encode(t).ids for t in texts] == [theirs.encode(t).ids for t in texts]


def test_byte_level_decoder_passes_other_characters_through_as_tokenizers(trained):
    ours, _ = trained
    tokens = ["caf", "Ã", "©", "Ġ☃", "<pad>", "ĠÃ", "plain☂text", "ðŁ", "ĳ"]
    assert ours.detokenize(tokens) == decoders.ByteLevel().decode(tokens)
