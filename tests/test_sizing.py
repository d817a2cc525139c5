"""rowbook.sizing: the published table sizes and KV caches, and exact agreement with the
parameters and cache bytes of rowbook's own TransformerLM."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.models.transformer import TransformerNet
from rowbook.models.transformer_config import TransformerConfig
from rowbook.sizing import ModelSize, model_size, preset
from rowbook.text import ByteLevelBPE
from rowbook.vocab_sweep import vocab_sweep, vocab_table


@pytest.mark.parametrize(
    ("name", "V", "d", "parameters"),
    [
        ("word2vec", 3_000_000, 300, 900_000_000),
        ("BERT-base", 30_522, 768, 23_440_896),
        ("GPT-2", 50_257, 768, 38_597_376),
        ("GPT-3", 50_257, 12_288, 617_558_016),
        ("LLaMA-2-7B", 32_000, 4_096, 131_072_000),
        ("LLaMA-3", 128_256, 4_096, 525_336_576),
        ("Gemma-2-9B", 256_128, 3_584, 917_962_752),
    ],
)
def test_the_table_of_embedding_sizes(name, V, d, parameters):
    assert model_size(V, d, 0, 1).embedding_parameters == parameters
    published = {
        "word2vec": "900M",
        "BERT-base": "23.4M",
        "GPT-2": "38.6M",
        "GPT-3": "617.6M",
        "LLaMA-2-7B": "131.1M",
        "LLaMA-3": "525.3M",
        "Gemma-2-9B": "918.0M",
    }
    shown = f"{parameters / 1e6:.1f}M" if name != "word2vec" else f"{parameters / 1e6:.0f}M"
    assert shown == published[name]


def test_the_presets_give_the_published_totals_and_what_tying_saves():
    gpt2 = preset("gpt2")
    assert gpt2.parameters == 124_439_808  # GPT-2 small, tied
    assert gpt2.tying_saves == 38_597_376 and 0.30 < gpt2.tying_saves / gpt2.parameters < 0.32
    assert preset("llama-2-7b").parameters == 6_738_415_616
    assert preset("llama-3-8b").parameters == 8_030_261_248
    llama = preset("llama-2-7b")
    assert (llama.d_model, llama.n_heads, llama.head_dim) == (4096, 32, 128)


def test_the_kv_cache_of_llama_2_7b():
    llama = preset("llama-2-7b")  # L = 32, d = 4096, float16
    assert llama.kv_cache_bytes(4096, "float16") == 2 * 2**30
    assert llama.kv_cache_bytes(8192, "float16") == 4 * 2**30
    assert (
        llama.kv_cache_bytes(8192, "float16") == 2 * 32 * 8192 * 4096 * 2
    )  # 2 x L x T x d x bytes
    grouped = preset("llama-3-8b")  # 8 key/value heads of 32: a quarter of the cache
    assert grouped.kv_cache_bytes(8192, "bfloat16") == 2**30


def test_attention_costs_grow_with_the_square_of_the_length():
    gpt2 = preset("gpt2")
    assert gpt2.attention_flops(2048) == 4 * gpt2.attention_flops(1024)
    assert gpt2.attention_flops(1024, causal=True) * 2 == gpt2.attention_flops(1024)
    assert gpt2.attention_bytes(8192) == 12 * 8192 * 8192 * 4
    assert gpt2.attention_bytes(8192, tiled=True) == 12 * 8192 * 4
    text = gpt2.table((1024,))
    assert "tying saves" in text and "T=1,024: KV cache" in text


CONFIGS = [
    {"family": "gpt2"},
    {"family": "gpt2", "tie_embeddings": False, "d_ff": 40},
    {"family": "llama", "n_kv_heads": 2},
    {"family": "llama", "n_kv_heads": 1, "tie_embeddings": False},
    {"family": "llama", "n_kv_heads": 2, "bias": True, "head_dim": 6},
]


@pytest.mark.parametrize("settings", CONFIGS)
def test_model_size_is_exactly_what_transformer_lm_allocates(settings):
    config = TransformerConfig(
        vocab_size=77, d_model=16, n_layers=3, n_heads=4, context=24, **settings
    )
    net = TransformerNet(config, rng=0)
    size = model_size(
        77,
        16,
        3,
        4,
        config.n_kv_heads,
        config.d_ff,
        24,
        config.tie_embeddings,
        batch=2,
        family=config.family,
        head_dim=config.head_dim,
        bias=config.bias,
    )
    assert size.parameters == sum(p.size for p in net.parameters())
    assert size.embedding_parameters == net.embedding.weight.size
    assert size.layer_parameters == sum(p.size for p in net.blocks[0].parameters())
    assert size.bytes("float32") == sum(p.data.nbytes for p in net.parameters())
    for T in (1, 24, 1000):
        assert size.kv_cache_bytes(T) == net.new_cache(2, T).nbytes


def test_model_size_from_a_hugging_face_config(tmp_path):
    import json

    config = {
        "model_type": "llama",
        "vocab_size": 128256,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    size = model_size.from_hf(tmp_path / "config.json", dtype="bfloat16")
    assert size.table() == preset("llama-3-8b").table()  # every count (RoPE base aside)
    assert model_size.from_hf(tmp_path).parameters == 8_030_261_248


def test_bad_sizes_name_the_parameter():
    with pytest.raises(ValueError, match=r"d_model must be divisible by n_heads \(32\)"):
        model_size(100, 1000, 2, 32)
    with pytest.raises(ValueError, match="dtype must be one of"):
        model_size(100, 64, 2, 4, dtype="float8")


def _zipf_texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), rng.integers(2, 9)))
        for _ in range(1500)
    ]
    p = 1 / np.arange(1, 1501) ** 1.1
    return [" ".join(rng.choice(words, 10, p=p / p.sum())) for _ in range(n)]


def test_a_smaller_vocabulary_is_the_prefix_of_a_larger_one():
    texts = _zipf_texts(1500, 0)
    big = ByteLevelBPE().fit(texts, 1500, special_tokens=["<|endoftext|>"])
    for size in (300, 700, 1200):
        small = ByteLevelBPE().fit(texts, size, special_tokens=["<|endoftext|>"])
        cut = big.truncated(size)
        assert cut.merges == small.merges and cut.vocab == small.vocab
        assert cut.encode(texts[7]).ids == small.encode(texts[7]).ids


def test_vocab_sweep_trades_table_size_for_sequence_length():
    texts = _zipf_texts(1500, 1)
    rows = vocab_sweep(texts, [400, 300, 1200], d_model=64, characters=1000)
    assert [r.vocab_size for r in rows] == [300, 400, 1200]
    rates = [r.tokens_per_char for r in rows]
    assert rates == sorted(rates, reverse=True)  # more entries: fewer tokens per character
    for r in rows:
        assert r.table_parameters == r.vocab_size * 64 and r.table_bytes == 4 * r.table_parameters
        assert r.sequence_length == round(1000 * r.tokens_per_char)
        assert r.attention_flops == 4 * r.sequence_length**2 * 64
    held = texts[:50]
    direct = ByteLevelBPE().fit(texts[50:], 400, special_tokens=["<|endoftext|>"])
    again = vocab_sweep(texts[50:], [400, 1200], held_out=held, d_model=64)
    tokens = sum(len(direct.encode(t).ids) for t in held)
    assert again[0].tokens_per_char == tokens / sum(len(t) for t in held)
    assert "tokens/char" in vocab_table(rows)


@pytest.mark.parametrize("model", ["wordpiece", "unigram"])
def test_vocab_sweep_of_the_other_schemes_is_their_own_training(model):
    from rowbook.text import Unigram, WordPiece

    texts = _zipf_texts(400, 2)
    train, held = texts[40:], texts[:40]
    rows = vocab_sweep(train, [300, 900], model=model, held_out=held, d_model=16, workers=1)
    assert [r.model for r in rows] == [model, model]
    assert rows[0].vocab_size < rows[1].vocab_size
    if model == "wordpiece":  # more entries, shorter sequences (Unigram's pieces need not
        assert rows[0].tokens_per_char > rows[1].tokens_per_char  # nest, nor its lengths fall)
    assert all(r.table_parameters == r.vocab_size * 16 for r in rows)
    options = {"min_count": 0} if model == "wordpiece" else {"special_tokens": ["<unk>"]}
    direct = (WordPiece if model == "wordpiece" else Unigram)().fit(
        train, 900, workers=1, **options
    )
    tokens = sum(len(direct.encode(t, add_special_tokens=False).ids) for t in held)
    assert rows[1].vocab_size == len(direct)
    assert rows[1].tokens_per_char == tokens / sum(len(t) for t in held)


def test_vocab_sweep_counts_unknown_and_partial_byte_tokens():
    texts = _zipf_texts(300, 3)  # a-z only: no other character is in any vocabulary
    (wordpiece,) = vocab_sweep(texts, [200], model="wordpiece", held_out=["☃ ☂"], workers=1)
    assert wordpiece.unknown_share == 1.0  # [UNK] [UNK]
    (wordpiece,) = vocab_sweep(texts, [200], model="wordpiece", held_out=texts[:9], workers=1)
    assert wordpiece.unknown_share == 0.0  # every letter is in the alphabet
    (bpe,) = vocab_sweep(texts, [300], held_out=["日本"], workers=1)
    assert bpe.unknown_share == 1.0  # six bytes, none a whole character
    rows = vocab_sweep(texts, [300], model=["bpe", "unigram"], held_out=["abc"], workers=1)
    assert [(r.model, r.unknown_share) for r in rows] == [("bpe", 0.0), ("unigram", 0.0)]
    assert "unknown %" in vocab_table(rows)
    with pytest.raises(ValueError, match="model must be one of 'bpe', 'wordpiece', 'unigram'"):
        vocab_sweep(texts, [300], model="sentencepiece")


def test_the_settings_are_stated_once_in_transformer_config():
    """TransformerLM's architecture parameters are the config's fields, and sizing reads the
    config itself: a new setting added to TransformerConfig fails here until both take it."""
    import inspect

    from rowbook.models import TransformerLM
    from rowbook.models.transformer_config import architecture_names

    params = inspect.signature(TransformerLM).parameters
    assert set(architecture_names()) <= set(params)
    for name in architecture_names():
        if name != "vocab_size":
            assert params[name].default == TransformerConfig.__dataclass_fields__[name].default
    lm = TransformerLM(vocab_size=300, d_model=16, n_layers=1, n_heads=2, norm="rmsnorm")
    assert lm._config(300).norm == "rmsnorm"


@pytest.mark.parametrize(
    "settings",
    [
        {"n_layers": 0},
        {"n_layers": 0, "family": "llama"},
        {"family": "gpt2", "bias": False},
        {"family": "gpt2", "mlp": "swiglu", "norm": "rmsnorm"},
        {"family": "llama", "positions": "learned", "bias": True},
    ],
)
def test_model_size_from_config_counts_what_the_settings_allocate(settings):
    config = TransformerConfig(vocab_size=50, d_model=8, n_heads=2, context=12, **settings)
    allocated = sum(p.size for p in TransformerNet(config, rng=0).parameters())
    assert ModelSize.from_config(config).parameters == allocated
