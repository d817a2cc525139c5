"""Attention against torch 2.13: ``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention``
with copied weights, forward and backward in float64; grouped-query heads; the KV cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook import nn
from rowbook.autograd import Tensor, gradcheck, no_grad
from rowbook.nn import functional as F
from rowbook.nn.activation import dropout_mask
from rowbook.nn.attention import padding_mask

RNG = np.random.default_rng(0)


def _qkv(B, H, Hkv, L, S, E, Ev=None):
    arrays = (
        RNG.standard_normal((B, H, L, E)),
        RNG.standard_normal((B, Hkv, S, E)),
        RNG.standard_normal((B, Hkv, S, Ev or E)),
    )
    ours = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _check(ours_out, theirs_out, ours_in, theirs_in, atol=1e-12):
    np.testing.assert_allclose(ours_out.data, theirs_out.detach().numpy(), atol=atol)
    g = RNG.standard_normal(ours_out.shape)
    ours_out.backward(g)
    theirs_out.backward(torch.tensor(g))
    for a, b in zip(ours_in, theirs_in, strict=True):
        np.testing.assert_allclose(a.grad, b.grad.numpy(), atol=atol)


CASES = [  # (B, H, H_kv, L, S, E, options)
    (2, 3, 3, 5, 5, 4, {}),
    (2, 3, 3, 5, 5, 4, {"is_causal": True}),
    (1, 2, 2, 4, 7, 3, {"is_causal": True}),  # L < S: torch's top-left triangle
    (1, 2, 2, 7, 4, 3, {"is_causal": True}),  # L > S
    (2, 4, 2, 6, 6, 8, {"is_causal": True, "enable_gqa": True}),
    (2, 4, 1, 3, 5, 8, {"enable_gqa": True, "scale": 0.3}),
    (1, 2, 2, 4, 6, 4, {"attn_mask": "bool"}),
    (1, 2, 2, 4, 6, 4, {"attn_mask": "float"}),
    (2, 2, 2, 3, 4, 4, {"attn_mask": "keys"}),
]


@pytest.mark.parametrize(("B", "H", "Hkv", "L", "S", "E", "options"), CASES)
def test_sdpa_equals_torch(B, H, Hkv, L, S, E, options):
    (q, k, v), (tq, tk, tv) = _qkv(B, H, Hkv, L, S, E, Ev=E + 1)
    options = dict(options)
    kind = options.pop("attn_mask", None)
    if kind == "bool":
        mask = RNG.random((L, S)) > 0.4
        mask[1] = False  # a query that sees nothing: zeros and no gradient, as torch
        options["attn_mask"] = mask
    elif kind == "float":
        options["attn_mask"] = RNG.standard_normal((H, L, S))
    elif kind == "keys":
        options["attn_mask"] = RNG.random((B, 1, 1, S)) > 0.3
    torch_options = {
        k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()
    }
    out = F.scaled_dot_product_attention(q, k, v, **options)
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **torch_options)
    _check(out, expected, (q, k, v), (tq, tk, tv))


def test_sdpa_takes_three_and_two_dimensional_inputs_and_passes_gradcheck():
    q, k, v = (Tensor(RNG.standard_normal((3, 2)), requires_grad=True) for _ in range(3))
    assert gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [q, k, v]
    )
    (q3, k3, v3), (tq, tk, tv) = _qkv(1, 3, 3, 4, 4, 2)
    out = F.scaled_dot_product_attention(q3[0], k3[0], v3[0], is_causal=True)
    expected = torch.nn.functional.scaled_dot_product_attention(tq[0], tk[0], tv[0], is_causal=True)
    _check(out, expected, (q3, k3, v3), (tq, tk, tv))


def test_sdpa_dropout_drops_weights_with_a_seeded_mask():
    (q, k, v), _ = _qkv(1, 2, 2, 6, 6, 4)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, rng=7).data
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, rng=7).data
    clean = F.scaled_dot_product_attention(q, k, v).data
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, clean)
    keep = dropout_mask((1, 2, 6, 6), 0.5, 7, np.float64)
    scores = q.data @ np.swapaxes(k.data, -1, -2) / 2.0
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(first, (weights * keep) @ v.data, atol=1e-12)
    assert gradcheck(
        lambda q: F.scaled_dot_product_attention(q, k.detach(), v.detach(), dropout_p=0.5, rng=7),
        [Tensor(q.data.copy(), requires_grad=True)],
    )


def test_sdpa_bad_input_names_the_fix():
    x = np.ones((1, 2, 4, 8))
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=np.ones((4, 4), bool), is_causal=True)
    with pytest.raises(ValueError, match="enable_gqa=True"):
        F.scaled_dot_product_attention(x, np.ones((1, 1, 4, 8)), np.ones((1, 1, 4, 8)))
    with pytest.raises(
        ValueError, match=r"query heads \(2\) must be a multiple of the key/value heads \(3\)"
    ):
        F.scaled_dot_product_attention(
            x, np.ones((1, 3, 4, 8)), np.ones((1, 3, 4, 8)), enable_gqa=True
        )
    with pytest.raises(ValueError, match="does not broadcast"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="implementation='tiled' takes causal and key masks"):
        F.scaled_dot_product_attention(
            x, x, x, attn_mask=np.ones((4, 4), bool), implementation="tiled"
        )


def _torch_mha(ours, **kwargs):
    theirs = torch.nn.MultiheadAttention(
        ours.embed_dim, ours.num_heads, batch_first=True, dtype=torch.float64, **kwargs
    )
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    return theirs


@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_equals_torch_with_padding_and_causal_masks(bias):
    ours = nn.MultiheadAttention(12, 3, bias=bias, dtype=np.float64, rng=1)
    theirs = _torch_mha(ours, bias=bias)
    x = RNG.standard_normal((2, 6, 12))
    ids = np.array([[4, 5, 6, 7, 0, 0], [3, 4, 5, 6, 7, 8]])
    kpm = padding_mask(ids, padding_idx=0)
    causal = np.triu(np.ones((6, 6), bool), 1)  # torch's MHA mask: True is left out
    X, tx = Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    out, weights = ours(X, key_padding_mask=kpm, attn_mask=causal, is_causal=True)
    t_out, t_weights = theirs(
        tx,
        tx,
        tx,
        key_padding_mask=torch.tensor(kpm),
        attn_mask=torch.tensor(causal),
        is_causal=True,
    )
    np.testing.assert_allclose(weights.data, t_weights.detach().numpy(), atol=1e-12)
    _check(out, t_out, (X,), (tx,))
    torch_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad, torch_params[name].grad.numpy(), atol=1e-12, err_msg=name
        )


def test_multihead_attention_sequence_first_and_cross_attention_equal_torch():
    ours = nn.MultiheadAttention(8, 2, batch_first=False, dtype=np.float64, rng=2)
    theirs = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    q, kv = RNG.standard_normal((3, 2, 8)), RNG.standard_normal((5, 2, 8))  # (T, B, d)
    out, w = ours(q, kv, kv, average_attn_weights=False)
    t_out, t_w = theirs(
        torch.tensor(q), torch.tensor(kv), torch.tensor(kv), average_attn_weights=False
    )
    np.testing.assert_allclose(out.data, t_out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(w.data, t_w.detach().numpy(), atol=1e-12)


def test_grouped_query_attention_equals_repeated_key_heads_in_torch():
    ours = nn.MultiheadAttention(16, 4, n_kv_heads=2, dtype=np.float64, rng=3)
    Wq, Wk, Wv = np.split(ours.in_proj_weight.data, [16, 24])
    bq, bk, bv = np.split(ours.in_proj_bias.data, [16, 24])
    x = RNG.standard_normal((2, 5, 16))
    X, tx = Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    out, _ = ours(X, is_causal=True, need_weights=False)

    def heads(W, b, h):
        return (tx @ torch.tensor(W).T + torch.tensor(b)).reshape(2, 5, h, 4).transpose(1, 2)

    k = heads(Wk, bk, 2).repeat_interleave(2, dim=1)  # head h reads key head h // 2
    v = heads(Wv, bv, 2).repeat_interleave(2, dim=1)
    o = torch.nn.functional.scaled_dot_product_attention(heads(Wq, bq, 4), k, v, is_causal=True)
    expected = torch.nn.functional.linear(
        o.transpose(1, 2).reshape(2, 5, 16),
        torch.tensor(ours.out_proj.weight.data),
        torch.tensor(ours.out_proj.bias.data),
    )
    _check(out, expected, (X,), (tx,))


def test_heads_that_do_not_divide_are_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"d_model must be divisible by n_heads \(3\)"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match=r"n_kv_heads must be a divisor of n_heads \(4\), got 3"):
        nn.MultiheadAttention(8, 4, n_kv_heads=3)


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_kv_cache_gives_the_full_recompute_and_holds_exactly_its_bytes(n_kv_heads):
    rope = nn.RotaryEmbedding(4)
    mha = nn.MultiheadAttention(16, 4, n_kv_heads=n_kv_heads, rotary=rope, rng=4)
    x = RNG.standard_normal((2, 9, 16)).astype(np.float32)
    with no_grad():
        full, _ = mha(x, is_causal=True, need_weights=False)
        cache = nn.KVCache(n_layers=1, batch=2, n_kv_heads=n_kv_heads, head_dim=4, max_length=9)
        steps = []
        for start, stop in ((0, 5), (5, 6), (6, 9)):  # a prompt, then one token, then three
            out, _ = mha(x[:, start:stop], is_causal=True, need_weights=False, cache=cache)
            cache.advance(stop - start)
            steps.append(out.data)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full.data, atol=1e-5)
    assert cache.nbytes == 2 * 1 * 9 * n_kv_heads * 4 * 2 * 4
    with pytest.raises(ValueError, match="holds 9 positions and already has 9"):
        cache.store(
            0,
            np.zeros((2, n_kv_heads, 1, 4), np.float32),
            np.zeros((2, n_kv_heads, 1, 4), np.float32),
        )
