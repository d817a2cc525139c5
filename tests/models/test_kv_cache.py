"""What the KV cache saves and the int8 cache: generation without a cache gives the cached
tokens; int8 codes equal torch's per-channel quantisation; the int8 cache's logits stay
within a stated bound of the float cache's; its bytes against float16's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from rowbook.autograd import no_grad
from rowbook.models import TransformerLM
from rowbook.models.kv_cache import Int8KVCache, dequantize_rows, make_cache, quantize_rows
from rowbook.nn import KVCache

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 15


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def lm(request):
    model = TransformerLM(
        family=request.param,
        vocab_size=300,
        d_model=32,
        n_layers=2,
        n_heads=4,
        context=64,
        epochs=2,
        batch_size=4,
        lr=3e-3,
        seed=0,
        val_fraction=0,
    )
    return model.fit(TEXTS)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_generation_without_the_cache_gives_the_cached_tokens(lm, temperature):
    for seed in range(3):
        cached = lm.generate("the", 40, temperature=temperature, seed=seed, stop_at_eos=False)
        again = lm.generate(
            "the", 40, temperature=temperature, seed=seed, stop_at_eos=False, use_cache=False
        )
        assert cached == again


def _quantized_by_torch(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    rows = torch.tensor(x.reshape(-1, x.shape[-1]))
    scales = torch.tensor(np.where(scale > 0, scale, 1).reshape(-1).astype(np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's quantized dtypes are deprecated
        q = torch.quantize_per_channel(
            rows, scales, torch.zeros(len(scales), dtype=torch.long), 0, torch.qint8
        )
    return q.int_repr().numpy().reshape(x.shape)


def test_int8_codes_equal_torchs_per_channel_quantisation_and_round_within_half_a_step():
    rng = np.random.default_rng(0)
    magnitude = rng.choice([1e-4, 1.0, 300.0], size=(2, 3, 40, 1))  # (B, H_kv, T, 1)
    x = (rng.standard_normal((2, 3, 40, 16)) * magnitude).astype(np.float32)
    x[0, 0, 0] = 0.0
    codes, scale = quantize_rows(x)
    assert codes.dtype == np.int8 and scale.dtype == np.float16 and scale.shape == (2, 3, 40)
    np.testing.assert_array_equal(codes, _quantized_by_torch(x, scale))
    peak = np.abs(x).max(axis=-1)
    assert np.all(scale.astype(np.float64) >= peak / 127)  # rounded up: no code clipped
    assert np.abs(codes).max() <= 127 and np.all(codes[0, 0, 0] == 0)
    error = np.abs(dequantize_rows(codes, scale, np.float64) - x)
    assert np.all(error <= scale.astype(np.float64)[..., None] / 2 * (1 + 1e-6))


def test_int8_refuses_values_past_float16_scales():
    with pytest.raises(ValueError, match="cache_dtype='float32'"):
        quantize_rows(np.array([[1e9, 0.0]]))
    with pytest.raises(ValueError, match="no float16 scale"):
        quantize_rows(np.array([[np.nan, 0.0]]))


def test_int8_cache_bytes_against_float16():
    layers, batch, heads, head_dim, length = 3, 2, 4, 8, 50
    float16 = KVCache(layers, batch, heads, head_dim, length, dtype=np.float16)
    int8 = Int8KVCache(layers, batch, heads, head_dim, length)
    arrays = sum(k.nbytes + v.nbytes for k, v in zip(int8.keys, int8.values, strict=True))
    assert arrays * 2 == float16.nbytes  # the codes: exactly half
    assert int8.nbytes == 2 * layers * length * heads * batch * (head_dim + 2)
    assert int8.nbytes / float16.nbytes == (head_dim + 2) / (2 * head_dim)


def _logits_by_step(net, ids, cache):
    with no_grad():
        steps = [net(ids[None, :8], cache=cache).data[0]]
        steps += [net(ids[None, t : t + 1], cache=cache).data[0] for t in range(8, len(ids))]
    return np.concatenate(steps)  # (T, V)


def test_int8_cache_logits_stay_within_one_percent_of_the_logit_range(lm):
    # Each cached number is within s / 2 = max|x| / 254 (0.39%) of its vector's largest
    # magnitude; attention mixes values by convex weights, so each layer's output moves by a
    # share of that order. The bound allows 2.5 times the per-number worst case, as a share
    # of each position's logit range; measured: about 0.03%.
    net = lm.net_
    ids = lm.encode(" ".join(TEXTS[:6]))[:40]
    net.eval()
    float_logits = _logits_by_step(net, ids, make_cache(net, 1, len(ids)))
    int8_logits = _logits_by_step(net, ids, make_cache(net, 1, len(ids), "int8"))
    with no_grad():
        full = net(ids[None]).data[0]
    net.train()
    np.testing.assert_allclose(float_logits, full, atol=1e-5)
    spread = float_logits.max(axis=1) - float_logits.min(axis=1)  # (T,)
    change = np.abs(int8_logits - float_logits).max(axis=1)  # (T,)
    assert np.all(change <= 0.01 * spread)
    assert change.max() > 0  # the int8 cache is really in use


def test_generate_with_an_int8_cache_and_bad_cache_settings(lm):
    ids = lm.generate("the cat", 10, temperature=0, cache_dtype="int8", stop_at_eos=False)
    assert ids.startswith("the cat")
    greedy = lm.generate("the", 10, temperature=0, stop_at_eos=False)
    assert lm.generate("the", 10, temperature=0, cache_dtype="float16", stop_at_eos=False) == greedy
    with pytest.raises(
        ValueError, match="cache_dtype must be None, 'float32', 'float16' or 'int8'"
    ):
        lm.generate("the", 3, cache_dtype="int4")
    with pytest.raises(ValueError, match="cache_dtype must be None with use_cache=False"):
        lm.generate("the", 3, cache_dtype="int8", use_cache=False)


def test_one_attention_step_moves_no_more_than_the_rounding_allows():
    # With each key number within s_k / 2 of the stored one, a score q . k / sqrt(d_k) moves by
    # at most eps = max_j sum_i |q_i| s_kj / (2 sqrt(d_k)); softmax weights then move by a factor
    # within exp(+-2 eps), so each output number moves by at most
    # (exp(2 eps) - 1) sum_j p_j |v_j| + max_j s_vj / 2.
    from rowbook.autograd import Tensor
    from rowbook.nn.functional import scaled_dot_product_attention

    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, n, 16)) * 2 for n in (1, 50, 50))
    (k_codes, k_scale), (v_codes, v_scale) = quantize_rows(k), quantize_rows(v)
    k_hat, v_hat = (
        dequantize_rows(k_codes, k_scale, np.float64),
        dequantize_rows(v_codes, v_scale, np.float64),
    )
    exact = scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v)).data  # (1, 2, 1, 16)
    rounded = scaled_dot_product_attention(Tensor(q), Tensor(k_hat), Tensor(v_hat)).data
    scores = q @ np.swapaxes(k, -1, -2) / 4.0  # (1, 2, 1, 50)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    eps = (np.abs(q).sum(-1, keepdims=True) * k_scale.astype(np.float64)[:, :, None, :] / 8.0).max(
        -1
    )
    bound = np.expm1(2 * eps)[..., None] * (p @ np.abs(v)) + v_scale.max(-1)[:, :, None, None] / 2
    change = np.abs(rounded - exact)
    assert np.all(change <= bound) and change.max() > 0
