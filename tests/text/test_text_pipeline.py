"""TextPipeline: the cat sat on the mat example end to end, batches, corpus files, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from rowbook.text import (
    ByteLevelBPE,
    CharTokenizer,
    Normalizer,
    TextPipeline,
    Vocab,
    WordTokenizer,
    iter_lines,
)


def cat_sat_pipeline() -> TextPipeline:
    return TextPipeline(Normalizer(case="lower", strip=True), WordTokenizer(), Vocab())


def test_the_cat_sat_on_the_mat_pipeline():
    pipe = cat_sat_pipeline().fit(["The cat sat on the mat"])
    assert pipe.encode("The cat sat on the mat").tolist() == [2, 3, 4, 5, 2, 6]
    assert pipe.decode(pipe.encode(" The  cat ")) == "the cat"
    assert pipe.vocab_size == 7 and pipe.pad_id == 0


def manual_batch(seqs, width, pad):
    """Padding written out with Python lists."""
    rows = [list(s[:width]) + [pad] * (width - len(s[:width])) for s in seqs]
    mask = [[1] * len(s[:width]) + [0] * (width - len(s[:width])) for s in seqs]
    return np.array(rows, dtype=np.int64).reshape(len(seqs), width), np.array(mask, bool).reshape(
        len(seqs), width
    )


@pytest.mark.parametrize(
    "max_length, padding",
    [(None, "longest"), (3, "longest"), (8, "max_length"), (2, "max_length"), (50, "longest")],
)
def test_encode_batch_padding_and_truncation(corpus, max_length, padding):
    pipe = TextPipeline(None, CharTokenizer(), Vocab()).fit(corpus)
    texts = ["abc", "", "hello world", "x"]
    seqs = [pipe.encode(t).tolist() for t in texts]
    width = max(map(len, seqs)) if padding == "longest" else max_length
    width = min(width, max_length) if max_length else width
    ids, mask = pipe.encode_batch(texts, max_length=max_length, padding=padding)
    want_ids, want_mask = manual_batch(seqs, width, pipe.pad_id)
    assert ids.dtype == np.int64 and mask.dtype == bool
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_array_equal(mask, want_mask)
    assert pipe.decode_batch(ids, mask)[0] == "abc"[:width]


def test_batch_errors():
    pipe = cat_sat_pipeline().fit(["a b c d e"])
    with pytest.raises(
        ValueError, match="text 0 has 5 tokens > max_length=2; pass truncation=True"
    ):
        pipe.encode_batch(["a b c d e", "a"], max_length=2, truncation=False)
    with pytest.raises(ValueError, match="padding='max_length' needs max_length"):
        pipe.encode_batch(["a"], padding="max_length")
    with pytest.raises(ValueError, match="padding must be"):
        pipe.encode_batch(["a"], padding="left")
    with pytest.raises(ValueError, match="max_length must be None or an int >= 1"):
        pipe.encode_batch(["a"], max_length=0)
    with pytest.raises(TypeError, match="for one text use encode"):
        pipe.encode_batch("a b")
    assert pipe.encode_batch([])[0].shape == (0, 0)


def test_bpe_pipeline_uses_bpe_ids_and_its_pad_token(corpus, tmp_path):
    pipe = TextPipeline(Normalizer(unicode_form="NFKC"), ByteLevelBPE()).fit(
        corpus, vocab_size=600, special_tokens=["<pad>"]
    )
    pipe.tokenizer_.to_tokenizer_json(tmp_path / "tokenizer.json")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "Ｆｕｌｌｗｉｄｔｈ text"
    assert pipe.encode(text).tolist() == hf.encode(Normalizer(unicode_form="NFKC")(text)).ids
    ids, mask = pipe.encode_batch(["short", "a longer text"])
    assert ids[0, mask[0].sum() :].tolist() == [0] * (~mask[0]).sum() and pipe.pad_id == 0
    assert pipe.decode_batch(ids, mask) == ["short", "a longer text"]


def test_bpe_without_pad_token_cannot_pad(corpus):
    pipe = TextPipeline(None, ByteLevelBPE()).fit(corpus, vocab_size=400)
    with pytest.raises(ValueError, match="no pad id"):
        pipe.encode_batch(["a", "a b c"])


def test_bpe_tokens_through_a_vocab(corpus):
    pipe = TextPipeline(None, ByteLevelBPE(), Vocab(min_count=3)).fit(corpus, vocab_size=500)
    text = corpus[0]
    bpe_tokens = pipe.tokenizer_.tokenize(text)
    assert pipe.encode(text).tolist() == [pipe.vocab_.token_to_id(t) for t in bpe_tokens]


def test_fitting_from_a_file_equals_fitting_from_lines(corpus, tmp_path):
    path = tmp_path / "corpus.txt"
    lines = [line.replace("\n", " ") for line in corpus]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_file = cat_sat_pipeline().fit(path, show_progress=False)
    from_list = cat_sat_pipeline().fit(lines)
    assert from_file.vocab_.itos == from_list.vocab_.itos
    bpe_file = TextPipeline(None, ByteLevelBPE(), Vocab()).fit(path, vocab_size=500)
    bpe_list = TextPipeline(None, ByteLevelBPE(), Vocab()).fit(lines, vocab_size=500)
    assert bpe_file.tokenizer_.merges == bpe_list.tokenizer_.merges


def test_invalid_utf8_in_corpus_file(tmp_path):
    raw = "line one\nzweite Zeile: Grüße\n".encode() + b"bad \xe2\x28\xa1 bytes\nend\n"
    path = tmp_path / "bad.txt"
    path.write_bytes(raw)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        offset = err.start  # where Python's own decoder stops
    with pytest.raises(ValueError, match=f"invalid UTF-8 at byte offset {offset} \\(line 3\\)"):
        cat_sat_pipeline().fit(path)
    lines = list(iter_lines(path, errors="replace"))
    assert lines == raw.decode("utf-8", errors="replace").splitlines()
    pipe = cat_sat_pipeline().fit(path, errors="replace")
    assert "\ufffd" in pipe.vocab_.stoi


def test_fit_input_errors(tmp_path):
    with pytest.raises(TypeError, match="texts is a str"):
        cat_sat_pipeline().fit("The cat sat")
    with pytest.raises(TypeError, match="texts must be str, got int"):
        cat_sat_pipeline().fit([1, 2])
    with pytest.raises(TypeError, match="one-shot iterator"):
        TextPipeline(None, ByteLevelBPE(), Vocab()).fit(iter(["a b"]), vocab_size=300)
    with pytest.raises(TypeError, match="no unfitted subword tokenizer"):
        cat_sat_pipeline().fit(["a"], vocab_size=300)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cat_sat_pipeline().fit(Path(tmp_path / "missing.txt"))
    with pytest.raises(ValueError, match="not fitted"):
        cat_sat_pipeline().encode("x")
    with pytest.raises(TypeError, match="tokenizer must be"):
        TextPipeline(None, str.split)
    assert cat_sat_pipeline().fit(iter(["one shot is fine for a vocab"])).vocab_size == 9


def test_fitted_components_are_kept(corpus):
    bpe = ByteLevelBPE().fit(corpus, 400)
    merges = bpe.merges
    TextPipeline(None, bpe, Vocab()).fit(["completely different text"] * 10)
    assert bpe.merges == merges
