"""Every optimizer against its PyTorch 2.13 counterpart: same gradients, several steps.

Dense gradients are random; row-sparse ones come from an embedding lookup with
repeated ids, differentiated by ``torch.nn.functional.embedding(sparse=True)`` on the
torch side and by ``scatter_add_rows`` on ours. Parameters *and* optimizer state are
compared after every step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rowbook.optim as ro
from rowbook.autograd.sparse import scatter_add_rows
from rowbook.nn import Parameter

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")

TOL = {np.float32: {"rtol": 2e-5, "atol": 2e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}

CASES = [  # (name, kwargs, kinds of gradient)
    ("SGD", {"lr": 0.1}, ("dense", "sparse")),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2}, ("dense", "sparse")),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}, ("dense", "sparse")),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.01}, ("dense",)),
    ("Adagrad", {"lr": 0.1}, ("dense", "sparse")),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.05, "initial_accumulator_value": 0.1, "eps": 1e-6},
        ("dense", "sparse"),
    ),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1}, ("dense",)),
    ("Adam", {"lr": 0.01}, ("dense",)),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.8), "weight_decay": 0.1, "amsgrad": True}, ("dense",)),
    ("AdamW", {"lr": 0.01}, ("dense",)),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.1, "amsgrad": True, "eps": 1e-6}, ("dense",)),
    ("SparseAdam", {"lr": 0.01}, ("sparse",)),
    ("SparseAdam", {"lr": 0.05, "betas": (0.5, 0.9), "eps": 1e-6}, ("sparse",)),
]
PARAMS = [(name, kw, kind) for name, kw, kinds in CASES for kind in kinds]


def _ids(rng: np.random.Generator, V: int, n: int) -> np.ndarray:
    """Ids concentrated on the first rows, so most batches repeat some and miss many."""
    return np.minimum(rng.geometric(4.0 / V, n) - 1, V - 1).astype(np.int64)


def _torch_state(state: dict) -> dict:
    out = {}
    for key, value in state.items():
        if isinstance(value, torch.Tensor):
            value = value.to_dense() if value.is_sparse else value
            out[key] = value.numpy() if value.ndim else float(value)
        else:
            out[key] = value
    return out


def _run(name, kwargs, kind, dtype, V, d, steps=6, seed=0):
    rng = np.random.default_rng(seed)
    W0 = rng.standard_normal((V, d)).astype(dtype)  # (V, d)
    b0 = rng.standard_normal(d).astype(dtype)  # (d,)
    ours = [Parameter(W0.copy())] + ([Parameter(b0.copy())] if kind == "dense" else [])
    theirs = [torch.nn.Parameter(torch.from_numpy(p.data.copy())) for p in ours]
    opt, topt = getattr(ro, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    tol = TOL[dtype]
    for _ in range(steps):
        if kind == "sparse":
            ids = _ids(rng, V, 3 * d)
            G = rng.standard_normal((len(ids), d)).astype(dtype)  # (N, d)
            ours[0].grad = scatter_add_rows(ids, G, V)
            out = torch.nn.functional.embedding(torch.from_numpy(ids), theirs[0], sparse=True)
            out.backward(torch.from_numpy(G))
        else:
            for p, tp in zip(ours, theirs, strict=True):
                p.grad = rng.standard_normal(p.shape).astype(dtype)
                tp.grad = torch.from_numpy(p.grad.copy())
        opt.step()
        topt.step()
        opt.zero_grad()
        topt.zero_grad()
        for p, tp in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(p.data, tp.detach().numpy(), **tol)
            expected = _torch_state(topt.state[tp])
            state = opt.state[p]
            assert set(state) - {"rows"} == set(expected), (state.keys(), expected.keys())
            for key, value in expected.items():
                np.testing.assert_allclose(state[key], value, **tol, err_msg=key)
    return ours


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs", "kind"), PARAMS)
def test_matches_torch_small(name, kwargs, kind, dtype):
    _run(name, kwargs, kind, dtype, V=40, d=5)


@pytest.mark.parametrize(("name", "kwargs", "kind"), PARAMS)
def test_matches_torch_fast_path(name, kwargs, kind):
    """Big enough for the fused kernels (more than 4,096 elements, more than 8 rows)."""
    _run(name, kwargs, kind, np.float32, V=600, d=16, steps=4, seed=1)


def test_param_groups_match_torch():
    rng = np.random.default_rng(3)
    A0, B0 = rng.standard_normal((6, 3)), rng.standard_normal(4)
    a, b = Parameter(A0.copy()), Parameter(B0.copy())
    ta, tb = (torch.nn.Parameter(torch.from_numpy(x.copy())) for x in (A0, B0))
    groups = lambda x, y: [{"params": [x], "lr": 0.1, "betas": (0.5, 0.6)}, {"params": [y]}]  # noqa: E731
    opt = ro.Adam(groups(a, b), lr=0.01, weight_decay=0.1)
    topt = torch.optim.Adam(groups(ta, tb), lr=0.01, weight_decay=0.1)
    for step in range(4):
        for p, tp in ((a, ta), (b, tb)):
            p.grad = rng.standard_normal(p.shape)
            tp.grad = torch.from_numpy(p.grad.copy())
        if step == 2:  # change a group's option between steps, as schedulers do
            opt.param_groups[1]["lr"] = topt.param_groups[1]["lr"] = 0.2
        opt.step()
        topt.step()
    np.testing.assert_allclose(a.data, ta.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=1e-12)


def test_sparse_adam_empty_gradient_counts_a_step_like_torch():
    W0 = np.random.default_rng(4).standard_normal((5, 2))
    w, tw = Parameter(W0.copy()), torch.nn.Parameter(torch.from_numpy(W0.copy()))
    opt, topt = ro.SparseAdam([w], lr=0.1), torch.optim.SparseAdam([tw], lr=0.1)
    grads = [
        (np.array([1, 1]), np.ones((2, 2))),
        (np.array([], dtype=np.int64), np.ones((0, 2))),
        (np.array([1, 3]), np.full((2, 2), -0.5)),
    ]
    for ids, G in grads:
        w.grad = scatter_add_rows(ids, G, 5)
        tw.grad = torch.sparse_coo_tensor(
            torch.from_numpy(ids)[None], torch.from_numpy(G), (5, 2), check_invariants=True
        )
        opt.step()
        topt.step()
    assert opt.state[w]["step"] == topt.state[tw]["step"] == 3
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-12)
