"""Module / Parameter bookkeeping, Linear against torch, and the initialisers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor
from rowbook.nn import Linear, Module, Parameter, ReLU, Sequential, init


class TwoLayer(Module):
    def __init__(self) -> None:
        self.first = Linear(3, 4, rng=0)
        self.act = ReLU()
        self.second = Linear(4, 2, bias=False, rng=1)
        self.scale = Parameter(np.ones(2, dtype=np.float32))


def test_named_parameters_match_torch_naming():
    ours = [name for name, _ in TwoLayer().named_parameters()]
    theirs = torch.nn.Module()
    theirs.first = torch.nn.Linear(3, 4)
    theirs.act = torch.nn.ReLU()
    theirs.second = torch.nn.Linear(4, 2, bias=False)
    theirs.scale = torch.nn.Parameter(torch.ones(2))
    assert sorted(ours) == sorted(name for name, _ in theirs.named_parameters())


def test_tied_parameter_is_reported_once():
    model = TwoLayer()
    model.extra = model.first  # the same module (and its parameters) under a second name
    names = [name for name, _ in model.named_parameters()]
    assert len(names) == len(set(map(id, model.parameters()))) == 4


def test_state_dict_round_trip_keeps_identity():
    source, target = TwoLayer(), TwoLayer()
    target.first.weight.data[...] = 0
    weight = target.first.weight
    target.load_state_dict(source.state_dict())
    assert target.first.weight is weight
    for (name, a), (_, b) in zip(source.named_parameters(), target.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)


def test_state_dict_is_a_copy():
    model = TwoLayer()
    state = model.state_dict()
    state["first.weight"][...] = 42
    assert not np.any(model.first.weight.data == 42)


def test_load_state_dict_errors_name_the_keys_and_shapes():
    model = TwoLayer()
    state = model.state_dict()
    del state["scale"]
    with pytest.raises(KeyError, match="scale"):
        model.load_state_dict(state)
    model.load_state_dict(state, strict=False)
    state = model.state_dict()
    state["first.weight"] = np.zeros((5, 5))
    with pytest.raises(ValueError, match=r"first\.weight.*\(5, 5\).*\(4, 3\)"):
        model.load_state_dict(state)


def test_zero_grad_and_train_eval():
    model = TwoLayer()
    out = model.second(model.act(model.first(np.ones((2, 3), dtype=np.float32))))
    out.sum().backward()
    assert model.first.weight.grad is not None
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model.eval()
    assert not model.training and not model.first.training
    model.train()
    assert model.second.training


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(dtype, bias):
    rng = np.random.default_rng(3)
    ours = Linear(5, 3, bias=bias, dtype=dtype, rng=rng)
    theirs = torch.nn.Linear(
        5, 3, bias=bias, dtype=torch.float64 if dtype == np.float64 else torch.float32
    )
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.data))
        if bias:
            theirs.bias.copy_(torch.from_numpy(ours.bias.data))
    x = rng.standard_normal((2, 4, 5)).astype(dtype)  # (B, T, in)
    out = ours(Tensor(x))
    expected = theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(out.shape).astype(dtype)
    out.backward(g)
    expected.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    if bias:
        np.testing.assert_allclose(ours.bias.grad, theirs.bias.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_linear_default_init_bound_and_reproducibility():
    a, b = Linear(100, 50, rng=7), Linear(100, 50, rng=7)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    bound = 1 / math.sqrt(100)
    assert np.abs(a.weight.data).max() <= bound
    assert np.abs(a.weight.data).max() > 0.9 * bound  # uses the whole range


def test_linear_rejects_wrong_input_width():
    with pytest.raises(ValueError, match=r"last dimension 3.*\(2, 4\)"):
        Linear(3, 2, rng=0)(np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="in_features must be an integer >= 0, got -1"):
        Linear(-1, 2)


def test_sequential_applies_in_order():
    model = Sequential(Linear(2, 3, rng=0), ReLU(), Linear(3, 1, rng=1))
    x = np.array([[1.0, -2.0]], dtype=np.float32)
    first, last = model.layers[0], model.layers[2]
    hidden = np.maximum(x @ first.weight.data.T + first.bias.data, 0)
    np.testing.assert_allclose(
        model(x).data, hidden @ last.weight.data.T + last.bias.data, rtol=1e-6
    )
    assert len(list(model.parameters())) == 4


def test_xavier_and_normal_statistics():
    w = Parameter(np.empty((400, 600)))
    init.xavier_uniform_(w, rng=0)
    bound = math.sqrt(6 / 1000)
    assert np.abs(w.data).max() <= bound
    np.testing.assert_allclose(w.data.std(), bound / math.sqrt(3), rtol=0.02)
    init.xavier_normal_(w, gain=2.0, rng=0)
    np.testing.assert_allclose(w.data.std(), 2.0 * math.sqrt(2 / 1000), rtol=0.02)
    init.normal_(w, std=0.02, rng=0)
    np.testing.assert_allclose(w.data.std(), 0.02, rtol=0.02)
    init.zeros_(w)
    assert not w.data.any()


def test_init_reproducible_and_validated():
    a, b = Parameter(np.empty((3, 3))), Parameter(np.empty((3, 3)))
    init.normal_(a, rng=np.random.default_rng(5))
    init.normal_(b, rng=5)
    np.testing.assert_array_equal(a.data, b.data)
    with pytest.raises(ValueError, match="std must be >= 0, got -1"):
        init.normal_(a, std=-1)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        init.normal_(a, rng="seed")
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        init.xavier_uniform_(Parameter(np.empty(3)))
