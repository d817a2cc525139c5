"""LSTM and LSTMCell against torch.nn.LSTM / LSTMCell (float64), and a numerical gradcheck."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rowbook.autograd import Tensor
from rowbook.autograd.gradcheck import gradcheck
from rowbook.nn.recurrent import LSTM, LSTMCell, lengths_to_mask

B, T, D, H = 3, 5, 4, 6


def _pair(num_layers=1, bias=True, batch_first=True, seed=0):
    """A rowbook LSTM and a torch LSTM with the same (torch-initialised) weights."""
    torch.manual_seed(seed)
    ref = torch.nn.LSTM(D, H, num_layers=num_layers, bias=bias, batch_first=batch_first).double()
    ours = LSTM(D, H, num_layers=num_layers, bias=bias, batch_first=batch_first, dtype=np.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    return ours, ref


def _loss_weights(rng, out_shape, state_shape):
    return (
        rng.standard_normal(out_shape),
        rng.standard_normal(state_shape),
        rng.standard_normal(state_shape),
    )


def _compare(ours, ref, x, ref_run, our_run, rng):
    """Forward values, then gradients of one random projection of (output, h_n, c_n)."""
    xt = torch.tensor(x, requires_grad=True)
    xr = Tensor(x.copy(), requires_grad=True)
    out_t, (h_t, c_t) = ref_run(ref, xt)
    out_r, (h_r, c_r) = our_run(ours, xr)
    np.testing.assert_allclose(out_r.data, out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h_r.data, h_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c_r.data, c_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    wo, wh, wc = _loss_weights(rng, out_r.shape, h_r.shape)
    loss_t = (
        (out_t * torch.tensor(wo)).sum()
        + (h_t * torch.tensor(wh)).sum()
        + (c_t * torch.tensor(wc)).sum()
    )
    loss_t.backward()
    ((out_r * wo).sum() + (h_r * wh).sum() + (c_r * wc).sum()).backward()
    np.testing.assert_allclose(xr.grad, xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad, ref_params[name].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name
        )


def _plain(model, x):
    return model(x)


@pytest.mark.parametrize("num_layers, bias", [(1, True), (2, True), (1, False)])
def test_lstm_matches_torch_forward_and_gradients(num_layers, bias):
    ours, ref = _pair(num_layers, bias)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, D))
    _compare(ours, ref, x, _plain, _plain, rng)


def test_lstm_with_initial_state_matches_torch():
    ours, ref = _pair(num_layers=2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((B, T, D))
    h0, c0 = rng.standard_normal((2, 2, B, H))
    _compare(
        ours,
        ref,
        x,
        lambda m, v: m(v, (torch.tensor(h0), torch.tensor(c0))),
        lambda m, v: m(v, (h0, c0)),
        rng,
    )


def test_time_major_layout_matches_torch_default():
    ours, ref = _pair(batch_first=False)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((T, B, D))
    _compare(ours, ref, x, _plain, _plain, rng)


@pytest.mark.parametrize("num_layers", [1, 2])
def test_masked_lstm_matches_pack_padded_sequence(num_layers):
    ours, ref = _pair(num_layers)
    rng = np.random.default_rng(4)
    lengths = np.array([3, 5, 1])
    x = rng.standard_normal((B, T, D))

    def torch_packed(model, v):
        packed = pack_padded_sequence(
            v, torch.tensor(lengths), batch_first=True, enforce_sorted=False
        )
        out, state = model(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        return out, state

    _compare(ours, ref, x, torch_packed, lambda m, v: m(v, lengths=lengths), rng)


def test_mask_and_lengths_agree_and_padding_is_ignored():
    ours, _ = _pair()
    rng = np.random.default_rng(5)
    lengths = np.array([2, 5, 4])
    x = rng.standard_normal((B, T, D))
    out_l, (h_l, _) = ours(x, lengths=lengths)
    out_m, (h_m, _) = ours(x, mask=lengths_to_mask(lengths, T))
    np.testing.assert_array_equal(out_l.data, out_m.data)
    np.testing.assert_array_equal(h_l.data, h_m.data)
    garbage = x.copy()
    garbage[0, 2:] = 1e3  # whatever sits in the padding changes nothing
    out_g, (h_g, _) = ours(garbage, lengths=lengths)
    np.testing.assert_array_equal(h_g.data, h_l.data)
    np.testing.assert_array_equal(out_g.data, out_l.data)
    # the final state of each row is the unmasked run over its own prefix
    _, (h_short, _) = ours(x[:1, :2])
    np.testing.assert_allclose(h_l.data[0, 0], h_short.data[0, 0], rtol=1e-12)


def test_lstm_cell_matches_torch():
    torch.manual_seed(0)
    ref = torch.nn.LSTMCell(D, H).double()
    ours = LSTMCell(D, H, dtype=np.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    rng = np.random.default_rng(6)
    x, h0, c0 = (
        rng.standard_normal((B, D)),
        rng.standard_normal((B, H)),
        rng.standard_normal((B, H)),
    )
    xt = torch.tensor(x, requires_grad=True)
    h_t, c_t = ref(xt, (torch.tensor(h0), torch.tensor(c0)))
    xr = Tensor(x.copy(), requires_grad=True)
    h_r, c_r = ours(xr, (h0, c0))
    np.testing.assert_allclose(h_r.data, h_t.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(c_r.data, c_t.detach().numpy(), rtol=1e-10)
    wh, wc = rng.standard_normal((B, H)), rng.standard_normal((B, H))
    ((h_t * torch.tensor(wh)).sum() + (c_t * torch.tensor(wc)).sum()).backward()
    ((h_r * wh).sum() + (c_r * wc).sum()).backward()
    np.testing.assert_allclose(xr.grad, xt.grad.numpy(), rtol=1e-9)
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(
            getattr(ours, name).grad, p.grad.numpy(), rtol=1e-9, err_msg=name
        )


def test_gradcheck_tiny_masked_lstm():
    lstm = LSTM(2, 3, num_layers=2, dtype=np.float64, rng=0)
    rng = np.random.default_rng(7)
    x = Tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    h0 = Tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    c0 = Tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    params = [p for _, p in lstm.named_parameters()]

    def run(x, h0, c0, *weights):
        out, (h, c) = lstm(x, (h0, c0), lengths=[3, 2])
        return out, h, c

    assert gradcheck(run, [x, h0, c0, *params])


def test_float32_default_and_errors():
    lstm = LSTM(D, H, rng=0)
    assert all(p.dtype == np.float32 for p in lstm.parameters())
    out, _ = lstm(np.zeros((B, 0, D), dtype=np.float32))
    assert out.shape == (B, 0, H)
    with pytest.raises(ValueError, match=r"shape \(B, T, 4\)"):
        lstm(np.zeros((B, T, D + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="either mask or lengths"):
        lstm(np.zeros((B, T, D)), mask=np.ones((B, T), bool), lengths=[1, 1, 1])
    with pytest.raises(ValueError, match="lengths must be in"):
        lstm(np.zeros((B, T, D)), lengths=[1, 9, 1])
    with pytest.raises(ValueError, match="mask must have shape"):
        lstm(np.zeros((B, T, D)), mask=np.ones((B, T + 1), bool))
    with pytest.raises(TypeError, match="float64 input"):
        lstm(Tensor(np.zeros((B, T, D))))
    with pytest.raises(ValueError, match="hidden_size must be an integer >= 1"):
        LSTM(D, 0)
    with pytest.raises(ValueError, match="num_layers"):
        LSTM(D, H, num_layers=0)
