"""state_dict round trips, files, param groups, and the error policy (checked against torch)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import rowbook.optim as ro
from rowbook.autograd.sparse import scatter_add_rows
from rowbook.nn import Parameter

V, D = 12, 3

OPTIMIZERS = [
    (ro.SGD, {"lr": 0.1, "momentum": 0.9}, "sparse"),
    (ro.SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}, "dense"),
    (ro.Adagrad, {"lr": 0.1, "lr_decay": 0.01}, "sparse"),
    (ro.RowWiseAdagrad, {"lr": 0.1, "weight_decay": 0.01}, "sparse"),
    (ro.Adam, {"lr": 0.01, "amsgrad": True}, "dense"),
    (ro.AdamW, {"lr": 0.01}, "dense"),
    (ro.SparseAdam, {"lr": 0.01}, "sparse"),
]


def _grad(rng, kind, dtype=np.float32):
    if kind == "dense":
        return rng.standard_normal((V, D)).astype(dtype)
    ids = rng.integers(0, V // 2 + 2, 8)
    return scatter_add_rows(ids, rng.standard_normal((8, D)).astype(dtype), V)


def _steps(p, opt, rng, kind, n):
    for _ in range(n):
        p.grad = _grad(rng, kind)
        opt.step()


@pytest.mark.parametrize(("cls", "kwargs", "kind"), OPTIMIZERS)
@pytest.mark.parametrize("via_file", [False, True])
def test_resume_is_bit_identical(cls, kwargs, kind, via_file, tmp_path):
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((V, D)).astype(np.float32)
    p = Parameter(W0.copy())
    opt = cls([p], **kwargs)
    _steps(p, opt, rng, kind, 3)
    saved_rng = np.random.default_rng(1)
    copy = Parameter(p.data.copy())
    resumed = cls([copy], lr=0.5)  # options come from the saved state
    if via_file:
        opt.save(tmp_path / "opt.npz")
        resumed.load(tmp_path / "opt.npz")
    else:
        state = opt.state_dict()
        json.dumps({k: v for k, v in state.items() if k != "state"})  # options are plain data
        resumed.load_state_dict(state)
    assert resumed.param_groups[0]["lr"] == kwargs["lr"]
    _steps(p, opt, np.random.default_rng(1), kind, 3)
    _steps(copy, resumed, saved_rng, kind, 3)
    np.testing.assert_array_equal(copy.data, p.data)
    for key, value in opt.state[p].items():
        np.testing.assert_array_equal(resumed.state[copy][key], value, err_msg=key)


def test_state_dict_is_a_copy_with_torch_layout():
    a, b = Parameter(np.zeros((2, 2))), Parameter(np.zeros(2))
    opt = ro.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], betas=(0.8, 0.9))
    a.grad, b.grad = np.ones((2, 2)), np.ones(2)
    opt.step()
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0], [1]]
    assert state["param_groups"][1]["lr"] == 0.5 and state["param_groups"][0]["betas"] == [0.8, 0.9]
    assert set(state["state"]) == {"0", "1"} and state["state"]["1"]["step"] == 1
    state["state"]["0"]["exp_avg"][...] = 7
    assert not (opt.state[a]["exp_avg"] == 7).any()
    torch_state = torch.optim.Adam([torch.zeros(2, requires_grad=True)]).state_dict()
    assert set(torch_state) == set(state)


def test_load_rejects_mismatches(tmp_path):
    p = Parameter(np.zeros((V, D)))
    adam = ro.Adam([p])
    p.grad = np.ones((V, D))
    adam.step()
    with pytest.raises(ValueError, match="unknown options"):
        ro.SGD([Parameter(np.zeros((V, D)))]).load_state_dict(adam.state_dict())
    with pytest.raises(ValueError, match=r"shape \(12, 3\), expected \(4, 3\)"):
        ro.Adam([Parameter(np.zeros((4, D)))]).load_state_dict(adam.state_dict())
    with pytest.raises(ValueError, match="has 1 param groups, this optimizer has 2"):
        groups = [{"params": [Parameter(np.zeros(1))]}, {"params": [Parameter(np.zeros(1))]}]
        ro.Adam(groups).load_state_dict(adam.state_dict())
    adam.save(tmp_path / "adam.npz")
    with pytest.raises(ValueError, match="state of a Adam optimizer, not of a AdamW"):
        ro.AdamW([Parameter(np.zeros((V, D)))]).load(tmp_path / "adam.npz")


# -- hyperparameters: the same ranges as torch, errors that name the option and range -----

BAD = [
    ("SGD", {"lr": -0.1}, r"SGD: lr must be a finite number in \[0.0, inf\), got -0.1"),
    ("SGD", {"momentum": -0.5}, r"momentum must be .* \[0.0, inf\), got -0.5"),
    ("SGD", {"weight_decay": -1.0}, r"weight_decay must be .* \[0.0, inf\), got -1.0"),
    ("SGD", {"nesterov": True}, r"nesterov=True needs momentum > 0 and dampening == 0"),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}, r"dampening == 0"),
    ("Adagrad", {"lr": -1.0}, r"Adagrad: lr must be .* \[0.0, inf\), got -1.0"),
    ("Adagrad", {"lr_decay": -0.1}, r"lr_decay must be .* \[0.0, inf\), got -0.1"),
    (
        "Adagrad",
        {"initial_accumulator_value": -1.0},
        r"initial_accumulator_value must be .*, got -1.0",
    ),
    ("Adagrad", {"eps": -1e-10}, r"eps must be .* \[0.0, inf\), got -1e-10"),
    ("Adam", {"lr": float("nan")}, r"Adam: lr must be a finite number .*, got nan"),
    (
        "Adam",
        {"betas": (1.0, 0.9)},
        r"Adam: betas\[0\] must be a finite number in \[0.0, 1.0\), got 1.0",
    ),
    ("Adam", {"betas": (0.9, -0.1)}, r"betas\[1\] must be .* in \[0.0, 1.0\), got -0.1"),
    ("Adam", {"eps": -1e-8}, r"eps must be .* \[0.0, inf\), got -1e-08"),
    ("AdamW", {"weight_decay": -0.01}, r"AdamW: weight_decay must be .* \[0.0, inf\), got -0.01"),
    ("SparseAdam", {"lr": 0.0}, r"SparseAdam: lr must be a finite number in \(0.0, inf\), got 0.0"),
    ("SparseAdam", {"eps": 0.0}, r"eps must be .* \(0.0, inf\), got 0.0"),
    ("SparseAdam", {"betas": (0.9, 1.5)}, r"betas\[1\] must be .* in \[0.0, 1.0\), got 1.5"),
]


@pytest.mark.parametrize(("name", "kwargs", "message"), BAD)
def test_bad_hyperparameters_are_refused_like_torch(name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        getattr(ro, name)([Parameter(np.zeros(3))], **kwargs)
    with pytest.raises(ValueError):  # the anchor: torch refuses the same values
        getattr(torch.optim, name)([torch.zeros(3, requires_grad=True)], **kwargs)


def test_more_bad_options():
    p = Parameter(np.zeros(3))
    with pytest.raises(ValueError, match=r"weight_decay_mode='l1' is not one of 'l2', 'decoupled'"):
        ro.RowWiseAdagrad([p], weight_decay_mode="l1")
    with pytest.raises(ValueError, match=r"lr must be .* \[0.0, inf\), got -1"):  # every group
        ro.Adam([{"params": [p], "lr": -1}])
    with pytest.raises(ValueError, match=r"lr must be a finite number in .*, got '0.1'"):
        ro.SGD([p], lr="0.1")
    with pytest.raises(ValueError, match="empty parameter list"):
        ro.Adam([])
    with pytest.raises(ValueError, match="more than once"):
        ro.Adam([p, p])
    with pytest.raises(TypeError, match="single Tensor"):
        ro.Adam(p)


# -- gradients each optimizer cannot take ---------------------------------------------


def _table_with(grad):
    p = Parameter(np.zeros((V, D), dtype=np.float32))
    p.grad = grad
    return p


SPARSE = scatter_add_rows(np.array([1, 1]), np.ones((2, D), dtype=np.float32), V)


@pytest.mark.parametrize(
    ("name", "grad", "message"),
    [
        (
            "Adam",
            SPARSE,
            "Adam does not support sparse gradients.*please consider SparseAdam instead",
        ),
        ("AdamW", SPARSE, "AdamW does not support sparse gradients.*please consider SparseAdam"),
        (
            "SparseAdam",
            np.ones((V, D), dtype=np.float32),
            "SparseAdam does not support dense gradients.*please consider Adam instead",
        ),
    ],
)
def test_wrong_kind_of_gradient_names_the_alternative(name, grad, message):
    p = _table_with(grad)
    with pytest.raises(TypeError, match=message):
        getattr(ro, name)([p]).step()
    tp = torch.zeros((V, D), requires_grad=True)  # the anchor: torch refuses the same
    tp.grad = torch.from_numpy(grad.to_dense() if name != "SparseAdam" else grad)
    tp.grad = tp.grad.to_sparse() if name != "SparseAdam" else tp.grad
    with pytest.raises(RuntimeError, match=message.split(" ", 1)[1].replace(".*", ", ")):
        getattr(torch.optim, name)([tp]).step()


@pytest.mark.parametrize("name", ["SGD", "Adagrad"])
def test_weight_decay_with_sparse_gradients_is_refused_like_torch(name):
    p = _table_with(SPARSE)
    with pytest.raises(ValueError, match=r"weight_decay=0\.1 cannot be used with a row-sparse"):
        getattr(ro, name)([p], lr=0.1, weight_decay=0.1).step()
    tp = torch.zeros((V, D), requires_grad=True)
    tp.grad = torch.from_numpy(SPARSE.to_dense()).to_sparse()
    with pytest.raises(RuntimeError):
        getattr(torch.optim, name)([tp], lr=0.1, weight_decay=0.1).step()


def test_gradient_shape_and_range_are_checked():
    with pytest.raises(ValueError, match=r"has shape \(12, 3\), its gradient \(3, 3\)"):
        ro.SGD([_table_with(np.ones((3, 3), dtype=np.float32))]).step()
    bad_rows = SPARSE.__class__(np.array([2, 40]), np.ones((2, D), dtype=np.float32), (V, D))
    with pytest.raises(IndexError, match=r"span \[2, 40\], the table has rows \[0, 12\)"):
        ro.SparseAdam([_table_with(bad_rows)]).step()


def test_zero_grad_and_closure():
    a, b = _table_with(np.ones((V, D), dtype=np.float32)), _table_with(SPARSE)
    opt = ro.SGD([a, b], lr=0.1)
    assert opt.step(lambda: 3.5) == 3.5
    opt.zero_grad(set_to_none=False)
    assert a.grad is not None and not a.grad.any() and b.grad is None
    opt.zero_grad()
    assert a.grad is None
    opt.step()  # no gradients: nothing happens
    np.testing.assert_allclose(a.data, -0.1)
