"""EmbeddingBag forward and backward against torch 2.13 over every option combination.

Outputs are bit-for-bit equal to ``torch.nn.functional.embedding_bag`` (without
``max_norm``: see test_nn_embedding_torch.py). Gradients are bit-for-bit equal for
``mode="max"`` and plain ``"sum"``, and within a few ulps otherwise: PyTorch scales
each row with a fused multiply-add (mean, per-sample weights) and takes dot products in
BLAS order (the per-sample-weight gradient).

Two places where rowbook follows the documented semantics rather than torch 2.13's CPU
kernel, and is held to a PyTorch composition instead:

* ``scale_grad_by_freq``: the CPU bag backward divides by the count of the wrong id
  (pytorch/pytorch#190063); the reference is ``F.embedding(..., scale_grad_by_freq=True)``
  reduced per bag in torch.
* ``include_last_offset`` with ids after the last offset: torch's sum excludes them, its
  mean's divisor counts them, its max and backward include them (pytorch/pytorch#191965);
  rowbook ignores them everywhere and is held to torch on the ids inside the bags.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from rowbook.autograd import RowSparse, Tensor
from rowbook.nn import EmbeddingBag
from rowbook.nn import functional as F

V, D = 9, 4
MAX_NORMS = [None, (1.0, 2.0), (1.5, 1.0), (0.8, math.inf)]
# (mode, per_sample_weights, scale_grad_by_freq, sparse): every combination PyTorch allows
GRADS = [(m, False, f, s) for m in ("sum", "mean") for f in (False, True) for s in (False, True)]
GRADS += [("sum", True, f, s) for f in (False, True) for s in (False, True)] + [("max", 0, 0, 0)]


def inputs(include_last_offset: bool) -> list[tuple[str, np.ndarray, np.ndarray | None]]:
    """(name, ids, offsets): duplicates, padding rows 2 and V-1, empty and all-padding bags."""
    ids = np.array([3, 2, 3, V - 1, 2, 2, 5, 3, 1, V - 1, 0, 5, 7])  # 13 ids
    offsets = np.array([0, 4, 4, 6, 9])  # bags: 4 ids, empty, [2, 2], 3 ids, 4 ids
    grid = np.array([[3, 2, 3], [V - 1, V - 1, V - 1], [1, 5, 1], [2, 0, 4]])
    if include_last_offset:
        return [
            ("offsets", ids, np.append(offsets, len(ids))),
            ("trailing", ids, np.array([0, 4, 4, 9])),  # ids[9:] belong to no bag
            ("empty", ids[:0], np.array([0, 0, 0])),
            ("2d", grid, None),  # include_last_offset is ignored for 2-D ids, as in torch
        ]
    return [("offsets", ids, offsets), ("empty", ids[:0], np.array([0, 0])), ("2d", grid, None)]


def table(dtype: type) -> np.ndarray:
    rng = np.random.default_rng(11)
    return (rng.normal(size=(V, D)) * rng.uniform(0.2, 1.5, size=(V, 1))).astype(dtype)


def assert_same(ours: np.ndarray, theirs: np.ndarray, exact: bool) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if exact:
        np.testing.assert_array_equal(ours, theirs)
    else:
        eps = 8 * np.finfo(theirs.dtype).eps
        scale = max(1.0, float(np.abs(theirs).max(initial=0)))
        np.testing.assert_allclose(ours, theirs, rtol=eps, atol=eps * scale)


def bounds_of(ids, offsets, include_last_offset):
    if offsets is None:
        return np.arange(ids.shape[0] + 1) * ids.shape[1]
    return offsets if include_last_offset else np.append(offsets, len(ids))


def torch_composition(ids, offsets, W, psw, kw):
    """``F.embedding`` per position, reduced per bag in torch: the documented semantics."""
    bounds = bounds_of(ids, offsets, kw["include_last_offset"])
    flat = torch.from_numpy(ids.reshape(-1)[: bounds[-1]])
    wt = torch.tensor(W, requires_grad=True)
    if kw["max_norm"] is not None:
        torch.embedding_renorm_(wt.detach(), flat, kw["max_norm"], kw["norm_type"])
    rows = TF.embedding(flat, wt, padding_idx=kw["padding_idx"], scale_grad_by_freq=True)
    pt = None if psw is None else torch.tensor(psw.reshape(-1)[: bounds[-1]], requires_grad=True)
    pad = None if kw["padding_idx"] is None else kw["padding_idx"] % V
    out = []
    for b in range(len(bounds) - 1):
        keep = [k for k in range(bounds[b], bounds[b + 1]) if flat[k] != pad]
        bag = rows[keep] if pt is None else rows[keep] * pt[keep, None]
        reduce = bag.sum(0) if kw["mode"] == "sum" else bag.mean(0)
        out.append(reduce if keep else torch.zeros(D, dtype=wt.dtype))
    return torch.stack(out) if out else torch.zeros(0, D, dtype=wt.dtype), wt, pt


def torch_run(ids, offsets, W, psw, G, kw):
    """Torch's output, table after the call, dense weight gradient and psw gradient."""
    sparse = kw.pop("sparse")
    if kw["scale_grad_by_freq"]:
        out, wt, pt = torch_composition(ids, offsets, W, psw, kw)
    else:
        if offsets is not None and kw["include_last_offset"]:  # keep only ids inside bags
            ids, psw = ids[: offsets[-1]], None if psw is None else psw[: offsets[-1]]
        wt = torch.tensor(W, requires_grad=True)
        pt = None if psw is None else torch.tensor(psw, requires_grad=True)
        offs = None if offsets is None else torch.from_numpy(offsets)
        out = TF.embedding_bag(torch.from_numpy(ids), wt, offs, per_sample_weights=pt, **kw)
    if out.requires_grad:
        out.backward(torch.from_numpy(G))
        grad_psw = None if pt is None else pt.grad.numpy()
    else:  # the composition over no ids at all is a constant
        wt.grad = torch.zeros_like(wt)
        grad_psw = None if pt is None else np.zeros(pt.shape, W.dtype)
    kw["sparse"] = sparse
    return out.detach().numpy(), wt.detach().numpy(), wt.grad.numpy(), grad_psw


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("include_last_offset", [False, True], ids=["", "last"])
@pytest.mark.parametrize("max_norm", MAX_NORMS, ids=["", "mn2", "mn1", "mninf"])
@pytest.mark.parametrize("padding_idx", [None, 2, -1], ids=["nopad", "pad2", "pad-1"])
@pytest.mark.parametrize("grads", GRADS, ids=lambda g: "-".join(map(str, g)))
def test_embedding_bag_matches_torch(grads, padding_idx, max_norm, include_last_offset, dtype):
    mode, use_psw, freq, sparse = grads
    kw = {
        "mode": mode,
        "padding_idx": padding_idx,
        "scale_grad_by_freq": bool(freq),
        "sparse": bool(sparse),
        "include_last_offset": include_last_offset,
        "max_norm": None if max_norm is None else max_norm[0],
        "norm_type": 2.0 if max_norm is None else max_norm[1],
    }
    rng = np.random.default_rng(5)
    for _name, ids, offsets in inputs(include_last_offset):
        W = table(dtype)
        psw = rng.uniform(-2, 2, size=ids.shape).astype(dtype) if use_psw else None
        num_bags = len(bounds_of(ids, offsets, include_last_offset)) - 1
        G = rng.normal(size=(num_bags, D)).astype(dtype)
        weight = Tensor(W.copy(), requires_grad=True)
        p = None if psw is None else Tensor(psw.copy(), requires_grad=True)
        out = F.embedding_bag(ids, weight, offsets, per_sample_weights=p, **kw)
        out.backward(G)
        t_out, t_w, t_grad, t_grad_psw = torch_run(ids, offsets, W.copy(), psw, G, kw)

        plain = max_norm is None and not freq
        assert_same(out.data, t_out, exact=plain)
        assert_same(weight.data, t_w, exact=max_norm is None)
        grad = weight.grad.to_dense() if sparse else weight.grad
        assert isinstance(weight.grad, RowSparse if sparse else np.ndarray)
        same_order = mode == "max" or (mode == "sum" and not use_psw)
        assert_same(grad, t_grad, exact=same_order and not freq)
        if psw is not None:
            expected = np.zeros(ids.size, dtype)
            expected[: t_grad_psw.size] = t_grad_psw.reshape(-1)  # trailing ids get zero
            assert_same(p.grad.reshape(-1), expected, exact=False)


def test_sparse_bag_gradient_rows_are_torchs_coalesced_rows():
    ids, offsets = np.array([3, 2, 3, 8, 2, 2, 5]), np.array([0, 3, 3])
    W = table(np.float64)
    weight = Tensor(W.copy(), requires_grad=True)
    F.embedding_bag(ids, weight, offsets, mode="mean", sparse=True, padding_idx=2).sum().backward()
    wt = torch.tensor(W, requires_grad=True)
    TF.embedding_bag(
        torch.from_numpy(ids),
        wt,
        torch.from_numpy(offsets),
        mode="mean",
        sparse=True,
        padding_idx=2,
    ).sum().backward()
    coalesced = wt.grad.coalesce()
    np.testing.assert_array_equal(weight.grad.indices, coalesced.indices()[0].numpy())
    np.testing.assert_allclose(weight.grad.values, coalesced.values().numpy(), rtol=1e-15)


def test_scale_grad_by_freq_follows_the_documented_semantics():
    """pytorch/pytorch#190063's reproducer: each row's gradient divided by its own count."""
    weight = Tensor(np.ones((4, 3)), requires_grad=True)
    F.embedding_bag([1, 1, 3], weight, [0], mode="sum", scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(weight.grad[:, 0], [0.0, 1.0, 0.0, 1.0])  # 2 * 1/2, 1 * 1/1


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_module_matches_torch_module(mode):
    W = table(np.float32)
    ours = EmbeddingBag.from_pretrained(W.copy(), freeze=False, mode=mode, padding_idx=0)
    theirs = torch.nn.EmbeddingBag.from_pretrained(
        torch.tensor(W), freeze=False, mode=mode, padding_idx=0
    )
    ids = np.array([[1, 0, 4, 4], [0, 0, 0, 0], [7, 8, 1, 2]])
    out = ours(ids)
    t_out = theirs(torch.from_numpy(ids))
    np.testing.assert_array_equal(out.data, t_out.detach().numpy())
    out.sum().backward()
    t_out.sum().backward()
    assert_same(ours.weight.grad, theirs.weight.grad.numpy(), exact=mode != "mean")
