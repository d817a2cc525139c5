"""The tokenizer inside a GGUF file: ids equal to ``tokenizers`` (byte-level BPE with GPT-2's,
Llama-3's and Qwen-2's pre-tokenizers) and to ``sentencepiece`` (BPE with byte fallback),
each tokenizer trained in the test and written into the file field by field."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from rowbook.gguf.tokenizer import LLAMA3_PATTERN, QWEN2_PATTERN, gguf_tokenizer

gguf = pytest.importorskip("gguf")
tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")
from tokenizers import Regex, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

CORPUS = [
    "The cat sat on the mat. It's 2024-11-27, and we'll pay 3.14159 for 12345 apples!",
    "naïve café résumé über straße 日本語のテキスト 🙂🙃 — ‘quotes’ «guillemets»",
    "don't WE'LL they've I'M\n\nnew   paragraph\twith\ttabs\r\nand windows lines",
    "def f(x):\n    return x ** 2  # a comment with <tags> & symbols $%^",
] * 20
TEXTS = [
    "The cat sat on the mat.",
    "It's 2024-11-27; we'LL pay 3.14159 for 1234567 apples!!",
    "naïve café 日本語 🙂 and an unseen 字 character",
    "  leading spaces\n\n\ttabs\r\n trailing   ",
    "a <|endoftext|> in the middle<|endoftext|>",
    "",
]
SPECIALS = ["<|endoftext|>", "<|begin_of_text|>"]


def _byte_level(pattern: str | None, ignore_merges: bool) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if pattern is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _write_byte_level(path, tok, pre: str, add_bos: bool) -> None:
    vocab = tok.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    merges = json.loads(tok.to_str())["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in SPECIALS else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab["<|begin_of_text|>"])
    writer.add_eos_token_id(vocab["<|endoftext|>"])
    writer.add_add_bos_token(add_bos)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


@pytest.mark.parametrize(
    ("pre", "pattern", "ignore_merges", "add_bos"),
    [
        ("gpt-2", None, False, False),
        ("llama-bpe", LLAMA3_PATTERN, True, True),
        ("qwen2", QWEN2_PATTERN, False, False),
    ],
)
def test_byte_level_ids_equal_tokenizers(pre, pattern, ignore_merges, add_bos, tmp_path):
    tok = _byte_level(pattern, ignore_merges)
    if add_bos:
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)]
        )
    path = tmp_path / f"{pre}.gguf"
    _write_byte_level(path, tok, pre, add_bos)
    ours = gguf_tokenizer(path)
    assert ours.model == "gpt2" and ours.pre == pre and ours.add_bos == add_bos
    for text in TEXTS:
        expected = tok.encode(text).ids
        assert ours.encode(text) == expected, text
        assert ours.decode(expected) == tok.decode(expected), text


def test_the_three_patterns_split_digits_differently(tmp_path):
    """The pre-tokenizer is read from the name: GPT-2 keeps digit runs, Llama-3 cuts them in
    threes, Qwen-2 in ones (an oracle check that the names are not mixed up)."""
    counts = {}
    for pre in ("gpt-2", "llama-bpe", "qwen2"):
        path = tmp_path / f"{pre}.gguf"
        _write_byte_level(path, _byte_level(None, False), pre, False)
        counts[pre] = len(gguf_tokenizer(path).encode("1234567"))
    assert counts["gpt-2"] < counts["llama-bpe"] < counts["qwen2"] == 7


def _sentencepiece_model() -> spm.SentencePieceProcessor:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS),
        model_writer=model,
        model_type="bpe",
        vocab_size=400,
        byte_fallback=True,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        split_digits=True,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def _piece_type(sp: spm.SentencePieceProcessor, i: int) -> int:
    checks = ((sp.is_unknown, 2), (sp.is_control, 3), (sp.is_unused, 5), (sp.is_byte, 6))
    return next((kind for check, kind in checks if check(i)), 1)


def test_llama_ids_equal_sentencepiece(tmp_path):
    sp = _sentencepiece_model()
    n = sp.get_piece_size()
    writer = gguf.GGUFWriter(tmp_path / "spm.gguf", "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([sp.id_to_piece(i) for i in range(n)])
    writer.add_token_scores([sp.get_score(i) for i in range(n)])
    writer.add_token_types([_piece_type(sp, i) for i in range(n)])
    writer.add_bos_token_id(sp.bos_id())
    writer.add_eos_token_id(sp.eos_id())
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    ours = gguf_tokenizer(tmp_path / "spm.gguf")
    assert ours.model == "llama" and ours.add_bos and ours.add_eos
    for text in TEXTS:
        expected = sp.encode(text, add_bos=True, add_eos=True)
        assert ours.encode(text) == expected, text
        assert ours.decode(expected) == sp.decode(expected), text
    assert np.count_nonzero([_piece_type(sp, i) == 6 for i in range(n)]) == 256


def test_an_unknown_pre_tokenizer_is_named(tmp_path):
    path = tmp_path / "odd.gguf"
    _write_byte_level(path, _byte_level(None, False), "falcon", False)
    with pytest.raises(ValueError, match=r"tokenizer.ggml.pre 'falcon' names a pre-tokenizer"):
        gguf_tokenizer(path)


def test_a_model_s_pipeline_is_the_file_s_sentencepiece_tokenizer(tmp_path):
    """``from_gguf`` on a llama whose tokenizer is SentencePiece's: ``encode`` gives
    ``sentencepiece``'s ids (without the begin-of-text id) and the table its pieces."""
    from rowbook.models import TransformerLM

    sp = _sentencepiece_model()
    n, d = sp.get_piece_size(), 32
    writer = gguf.GGUFWriter(tmp_path / "m.gguf", "llama")
    writer.add_context_length(32)
    writer.add_embedding_length(d)
    writer.add_block_count(1)
    writer.add_feed_forward_length(64)
    writer.add_head_count(4)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([sp.id_to_piece(i) for i in range(n)])
    writer.add_token_scores([sp.get_score(i) for i in range(n)])
    writer.add_token_types([_piece_type(sp, i) for i in range(n)])
    rng = np.random.default_rng(0)
    shapes = {"token_embd": (n, d), "output_norm": (d,)}
    block = {"attn_norm": (d,), "ffn_norm": (d,), "attn_q": (d, d), "attn_k": (d, d)}
    block |= {"attn_v": (d, d), "attn_output": (d, d), "ffn_gate": (64, d), "ffn_up": (64, d)}
    block |= {"ffn_down": (d, 64)}
    shapes |= {f"blk.0.{k}": v for k, v in block.items()}
    for name, shape in shapes.items():
        writer.add_tensor(f"{name}.weight", rng.standard_normal(shape).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    lm = TransformerLM.from_gguf(tmp_path / "m.gguf")
    for text in TEXTS[:4]:
        assert lm.encode(text).tolist() == sp.encode(text), text
    assert list(lm.vectors.index_to_key) == [sp.id_to_piece(i) for i in range(n)]
