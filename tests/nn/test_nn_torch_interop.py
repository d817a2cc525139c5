"""What PyTorch users reach for: Module.to(dtype) / .half(), and state files both ways.

Each rowbook layer is checked against the torch module with the same weights: after
``.half()`` / ``.double()`` on both, and after its state went through a safetensors file
from rowbook to torch (``safetensors.torch.load_file`` + ``load_state_dict``) and back.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from rowbook import nn, optim
from rowbook.io import load_safetensors, save_safetensors

IDS = np.array([1, 4, 2, 2, 7, 0, 9, 4])
OFFSETS = np.array([0, 3, 3, 5])


def _layers():
    """(name, rowbook module, torch module, run) with the layer's call on one input."""
    rng = np.random.default_rng(0)
    x2, x3 = rng.standard_normal((3, 8)), rng.standard_normal((2, 4, 8))
    return [
        (
            "embedding",
            nn.Embedding(10, 8, padding_idx=2),
            torch.nn.Embedding(10, 8, padding_idx=2),
            lambda m, t: m(torch.tensor(IDS)) if t else m(IDS),
        ),
        (
            "bag_mean",
            nn.EmbeddingBag(10, 8),
            torch.nn.EmbeddingBag(10, 8),
            lambda m, t: m(torch.tensor(IDS), torch.tensor(OFFSETS)) if t else m(IDS, OFFSETS),
        ),
        (
            "bag_sum_pad",
            nn.EmbeddingBag(10, 8, mode="sum", padding_idx=4),
            torch.nn.EmbeddingBag(10, 8, mode="sum", padding_idx=4),
            lambda m, t: m(torch.tensor(IDS), torch.tensor(OFFSETS)) if t else m(IDS, OFFSETS),
        ),
        (
            "bag_max",
            nn.EmbeddingBag(10, 8, mode="max"),
            torch.nn.EmbeddingBag(10, 8, mode="max"),
            lambda m, t: m(torch.tensor(IDS), torch.tensor(OFFSETS)) if t else m(IDS, OFFSETS),
        ),
        ("linear", nn.Linear(8, 5), torch.nn.Linear(8, 5), lambda m, t: m(_input(x2, m, t))),
        (
            "lstm",
            nn.LSTM(8, 6, num_layers=2),
            torch.nn.LSTM(8, 6, num_layers=2, batch_first=True),
            lambda m, t: m(_input(x3, m, t))[0],
        ),
        (
            "lstm_cell",
            nn.LSTMCell(8, 6),
            torch.nn.LSTMCell(8, 6),
            lambda m, t: m(_input(x2, m, t))[1],
        ),
    ]


def _input(x, module, is_torch):
    dtype = next(iter(module.parameters())).dtype
    if is_torch:
        return torch.tensor(x).to(dtype)
    return x.astype(dtype)


def _numpy(out):
    return out.detach().numpy() if isinstance(out, torch.Tensor) else out.data


LAYERS = [name for name, *_ in _layers()]


def _layer(name):
    return next(layer for layer in _layers() if layer[0] == name)


@pytest.mark.parametrize("name", LAYERS)
def test_state_through_safetensors_loads_into_torch_with_the_same_outputs(tmp_path, name):
    _, ours, theirs, run = _layer(name)
    path = tmp_path / "state.safetensors"
    save_safetensors(path, ours.state_dict())
    state = load_file(path)  # torch's side: no rowbook involved
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()
    }
    theirs.load_state_dict(state)
    np.testing.assert_allclose(
        _numpy(run(ours, False)), _numpy(run(theirs, True)), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("name", LAYERS)
def test_torch_state_through_safetensors_loads_into_rowbook(tmp_path, name):
    _, ours, theirs, run = _layer(name)
    torch.manual_seed(1)
    for param in theirs.parameters():
        torch.nn.init.normal_(param)
    path = tmp_path / "torch.safetensors"
    save_file(theirs.state_dict(), path)
    tensors, _ = load_safetensors(path)
    ours.load_state_dict(tensors)
    np.testing.assert_allclose(
        _numpy(run(ours, False)), _numpy(run(theirs, True)), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("name", LAYERS)
def test_half_matches_torch_half(name):
    _, ours, theirs, run = _layer(name)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    assert ours.half() is ours
    theirs.half()
    assert all(p.dtype == np.float16 for p in ours.parameters())
    got, expected = _numpy(run(ours, False)), _numpy(run(theirs, True))
    assert got.dtype == expected.dtype == np.float16
    if name.startswith("lstm"):  # torch rounds after each op in float16; rowbook once, at the end
        np.testing.assert_allclose(got, expected, atol=2e-3)
    else:  # float32 arithmetic rounded once to float16: the same bits
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["embedding", "bag_mean", "bag_sum_pad", "linear"])
def test_half_gradients_match_torch(name):
    _, ours, theirs, run = _layer(name)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    ours.half()
    theirs.half()
    out, tout = run(ours, False), run(theirs, True)
    seed = np.linspace(-1, 1, out.size).reshape(out.shape).astype(np.float16)
    out.backward(seed)
    tout.backward(torch.tensor(seed))
    for (key, param), (_, tparam) in zip(
        ours.named_parameters(), theirs.named_parameters(), strict=True
    ):
        assert param.grad.dtype == np.float16, key
        np.testing.assert_allclose(
            param.grad, tparam.grad.numpy(), rtol=2e-3, atol=2e-3, err_msg=key
        )


def test_to_float_and_double_round_trip_and_optimizer_state_follows():
    layer = nn.Linear(4, 3)
    original = {k: v.copy() for k, v in layer.state_dict().items()}
    weight = layer.weight
    opt = optim.Adam(layer.parameters(), lr=0.01)
    (layer(np.ones((2, 4), np.float32)) ** 2).sum().backward()
    opt.step()
    layer.double()
    assert layer.weight is weight and weight.dtype == np.float64 and weight.grad.dtype == np.float64
    opt.zero_grad()
    (layer(np.ones((2, 4))) ** 2).sum().backward()
    opt.step()
    assert {v.dtype for v in opt.state[weight].values() if isinstance(v, np.ndarray)} == {
        np.dtype(np.float64)
    }
    layer.float()
    assert all(p.dtype == np.float32 for p in layer.parameters())
    assert not np.array_equal(layer.weight.data, original["weight"])  # it trained
    with pytest.raises(TypeError, match="floating type"):
        layer.to(np.int32)


def test_to_converts_buffers_like_torch():
    encoding = nn.SinusoidalPositionalEncoding(8, max_len=16)
    encoding.half()
    assert encoding.table.dtype == np.float16
    assert encoding(np.zeros((2, 5, 8), np.float16)).dtype == np.float16


def test_save_safetensors_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(TypeError, match="metadata must map str to str"):
        save_safetensors(tmp_path / "a.safetensors", {"w": np.ones(2)}, {"n": 3})
    with pytest.raises(TypeError, match="dtype <U1"):
        save_safetensors(tmp_path / "a.safetensors", {"w": np.array(["a"])})
    (tmp_path / "bad.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        load_safetensors(tmp_path / "bad.safetensors")
