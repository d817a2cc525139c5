"""retain_graph and autograd.grad, against torch.autograd on the same graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook import nn
from rowbook.autograd import RowSparse, Tensor, backward, grad


def _graph(lib_x, lib_w):
    h = (lib_x * lib_w).tanh()
    return (h * h).sum() + (h * lib_w).sum(), h


def _pair():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(5), rng.standard_normal(5)
    ours = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    return ours, theirs


def test_second_backward_through_a_freed_graph_raises_like_torch():
    (x, w), (tx, tw) = _pair()
    loss, _ = _graph(x, w)
    tloss, _ = _graph(tx, tw)
    loss.backward()
    tloss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time") as ours:
        loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        tloss.backward()
    assert "retain_graph=True" in str(ours.value)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)  # first pass only


def test_a_shared_subgraph_is_freed_by_the_first_backward():
    (x, w), _ = _pair()
    loss, h = _graph(x, w)
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        (h * 2.0).sum().backward()  # h's op was freed; the new mul was not


def test_retain_graph_allows_repeated_backward_and_accumulates_like_torch():
    (x, w), (tx, tw) = _pair()
    loss, tloss = _graph(x, w)[0], _graph(tx, tw)[0]
    for _ in range(2):
        loss.backward(retain_graph=True)
        tloss.backward(retain_graph=True)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(w.grad, tw.grad.numpy(), rtol=1e-12)


def test_grad_matches_torch_and_leaves_grad_untouched():
    (x, w), (tx, tw) = _pair()
    loss, h = _graph(x, w)
    tloss, th = _graph(tx, tw)
    got = grad(loss, [w, h, x], retain_graph=True)
    expected = torch.autograd.grad(tloss, [tw, th, tx], retain_graph=True)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-12)
    assert x.grad is None and w.grad is None
    seed = np.linspace(-1, 1, 5)
    (gx,) = grad([h], [x], grad_outputs=[seed])
    (tgx,) = torch.autograd.grad([th], [tx], grad_outputs=[torch.tensor(seed)])
    np.testing.assert_allclose(gx, tgx.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        grad(h.sum(), x)


def test_grad_unused_inputs_and_several_outputs_like_torch():
    (x, w), (tx, tw) = _pair()
    unused, tunused = Tensor(np.ones(2), requires_grad=True), torch.ones(2, requires_grad=True)
    outs = [(x * w).sum(), (x * x).sum()]
    touts = [(tx * tw).sum(), (tx * tx).sum()]
    gx, gu = grad(outs, [x, unused], allow_unused=True)
    tgx, tgu = torch.autograd.grad(touts, [tx, tunused], allow_unused=True)
    np.testing.assert_allclose(gx, tgx.numpy(), rtol=1e-12)
    assert gu is None and tgu is None
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        grad((x * 2.0).sum(), [x, unused])
    backward([(x * w).sum(), (x * x).sum()])  # torch.autograd.backward over several outputs
    torch.autograd.backward([(tx * tw).sum(), (tx * tx).sum()])
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), rtol=1e-12)


def test_grad_of_a_sparse_table_is_row_sparse():
    table = nn.Embedding(6, 3, sparse=True)
    (g,) = grad(table(np.array([1, 4, 1])).sum(), table.weight)
    assert isinstance(g, RowSparse) and table.weight.grad is None
    np.testing.assert_array_equal(g.to_dense().sum(axis=1), [0, 6, 0, 0, 3, 0])
