"""Hugging Face checkpoints both ways: tiny random ``GPT2LMHeadModel`` and ``LlamaForCausalLM``
built here with ``transformers`` (no download), their logits equal rowbook's to 1e-5 in float32
after ``from_hf``, and again after rowbook's ``save_hf`` is loaded back by ``transformers``."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rowbook.models import TransformerLM  # noqa: E402
from rowbook.models.language_model.hf_checkpoint import hf_vectors  # noqa: E402
from rowbook.text import ByteLevelBPE  # noqa: E402

V = 96


def _gpt2(**extra):
    config = transformers.GPT2Config(
        vocab_size=V,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=48,
        bos_token_id=0,
        eos_token_id=0,
        **extra,
    )
    return transformers.GPT2LMHeadModel(config)


def _llama(**extra):
    settings = {
        "vocab_size": V,
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 48,
        "bos_token_id": 0,
        "eos_token_id": 0,
    } | extra
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**settings))


CHECKPOINTS = {
    "gpt2": lambda: _gpt2(),
    "gpt2_untied": lambda: _gpt2(tie_word_embeddings=False),
    "gpt2_gelu_inner": lambda: _gpt2(activation_function="gelu", n_inner=40),
    "llama_gqa": lambda: _llama(),
    "llama_mqa_tied": lambda: _llama(num_key_value_heads=1, tie_word_embeddings=True),
    "llama_mha_bias": lambda: _llama(num_key_value_heads=4, attention_bias=True, mlp_bias=True),
    "llama3_rope": lambda: _llama(
        rope_theta=500000.0,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 16,
        },
    ),
}


def _random(model):
    """Norm gains and biases away from their 1 and 0, so that a swapped tensor shows."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(torch.randn_like(p) * 0.2)
    return model.eval()


def _logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor(ids)).logits.numpy()


IDS = np.random.default_rng(0).integers(0, V, (2, 17))


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_from_hf_and_save_hf_give_transformers_logits(name, tmp_path):
    torch.manual_seed(1)
    theirs = _random(CHECKPOINTS[name]())
    theirs.save_pretrained(tmp_path / "hf")
    lm = TransformerLM.from_hf(tmp_path / "hf")
    ours = lm.net_(IDS).data
    np.testing.assert_allclose(ours, _logits(theirs, IDS), atol=1e-5)
    lm.save_hf(tmp_path / "back")
    again = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "back").eval()
    assert type(again) is type(theirs)
    np.testing.assert_allclose(_logits(again, IDS), ours, atol=1e-5)
    assert lm.config_.tie_embeddings == theirs.config.tie_word_embeddings


def test_a_model_trained_by_rowbook_opens_in_transformers_with_its_tokenizer(tmp_path):
    texts = ["the cat sat on the mat", "the dog sat on the log"] * 10
    for family in ("gpt2", "llama"):
        lm = TransformerLM(
            family=family,
            vocab_size=280,
            d_model=16,
            n_layers=1,
            n_heads=2,
            context=16,
            epochs=1,
            seed=2,
        ).fit(texts)
        lm.save_hf(tmp_path / family)
        theirs = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / family).eval()
        ids = lm.encode("the cat sat")[None, :]
        np.testing.assert_allclose(_logits(theirs, ids), lm.net_(ids).data, atol=1e-5)
        tokenizer = transformers.PreTrainedTokenizerFast(
            tokenizer_file=str(tmp_path / family / "tokenizer.json")
        )
        assert tokenizer("the cat sat")["input_ids"] == lm.encode("the cat sat").tolist()
        back = TransformerLM.from_hf(tmp_path / family)
        assert back.generate("the cat", 5, temperature=0) == lm.generate(
            "the cat", 5, temperature=0
        )


def test_greedy_generation_with_the_cache_equals_transformers_generate(tmp_path):
    theirs = _random(_llama())
    theirs.save_pretrained(tmp_path / "hf")
    lm = TransformerLM.from_hf(tmp_path / "hf")
    prompt = IDS[0, :5]
    with torch.no_grad():
        expected = theirs.generate(
            torch.tensor(prompt[None]),
            max_new_tokens=12,
            do_sample=False,
            use_cache=True,
            eos_token_id=None,
            pad_token_id=0,
        )
    ours = lm.generate(prompt, 12, temperature=0, stop_at_eos=False)
    np.testing.assert_array_equal(ours, expected[0].numpy())


def test_sharded_half_precision_checkpoints_are_read(tmp_path):
    theirs = _random(_gpt2())
    theirs.to(torch.bfloat16).save_pretrained(tmp_path / "bf16", max_shard_size="20KB")
    assert (tmp_path / "bf16" / "model.safetensors.index.json").exists()
    lm = TransformerLM.from_hf(tmp_path / "bf16")
    reference = _random(_gpt2())
    reference.load_state_dict(theirs.float().state_dict())
    np.testing.assert_allclose(lm.net_(IDS).data, _logits(reference, IDS), atol=1e-5)
    theirs.to(torch.float16).save_pretrained(tmp_path / "f16")
    table = hf_vectors(tmp_path / "f16")
    np.testing.assert_array_equal(
        table.vectors, theirs.transformer.wte.weight.float().detach().numpy()
    )
    assert table.index_to_key[:2] == ("id:0", "id:1")


def test_hf_vectors_reads_the_table_alone_with_the_tokens_as_keys(tmp_path):
    bpe = ByteLevelBPE().fit(["the cat sat on the mat"] * 5, 280, special_tokens=["<|endoftext|>"])
    theirs = _random(_llama(vocab_size=300))  # a table with more rows than tokens
    theirs.save_pretrained(tmp_path / "hf")
    bpe.to_tokenizer_json(tmp_path / "hf" / "tokenizer.json")
    table = hf_vectors(tmp_path / "hf")
    assert table.index_to_key[0] == "<|endoftext|>" and table.index_to_key[-1] == "id:299"
    assert table.index_to_key[len(bpe) - 1] == bpe.id_to_token(len(bpe) - 1)
    np.testing.assert_array_equal(table.vectors, theirs.model.embed_tokens.weight.detach().numpy())
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["model_type"] == "llama"
