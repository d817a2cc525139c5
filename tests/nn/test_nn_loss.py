"""Losses against torch 2.13 (values and gradients), gradchecks, and the error cases."""

from __future__ import annotations

import itertools
import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rowbook.autograd import Tensor
from rowbook.autograd.gradcheck import gradcheck
from rowbook.nn.loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss

# float32: a few ulps of the unit-scale operands (gradients like p - 1 cancel); float64: 1e-12.
TOL = {np.float32: {"rtol": 2e-6, "atol": 1e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-14}}
LAYOUTS = {
    "NC": ((6, 5), (6,)),
    "C": ((5,), ()),
    "NCd": ((3, 5, 4), (3, 4)),
    "NCdd": ((2, 5, 3, 2), (2, 3, 2)),
}


def _rng(*key) -> np.random.Generator:
    """A generator seeded by the test case (``hash()`` of strings changes between runs)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _close(ours, theirs, dtype):
    theirs = theirs.detach().numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, **TOL[dtype])


def _backward_both(ours: Tensor, theirs: torch.Tensor, rng) -> None:
    seed = rng.standard_normal(ours.shape).astype(ours.dtype)
    ours.backward(seed)
    theirs.backward(torch.from_numpy(seed))


def _ids(rng, shape, C, ignore_index):
    ids = rng.integers(0, C, size=shape)
    if ignore_index is not None and ids.size > 1:
        ids.reshape(-1)[::3] = ignore_index  # a third of the positions are ignored
    return ids


# -- cross-entropy with class ids ----------------------------------------------------------

CE_CASES = list(
    itertools.product(
        [np.float32, np.float64],
        LAYOUTS,
        [False, True],
        [None, 1, -1],
        ["mean", "sum", "none"],
        [0.0, 0.1],
    )
)


@pytest.mark.parametrize(
    ("dtype", "layout", "weighted", "ignore", "reduction", "smoothing"), CE_CASES
)
def test_cross_entropy_ids_match_torch(dtype, layout, weighted, ignore, reduction, smoothing):
    rng = _rng(layout, weighted, ignore, reduction)
    shape, tshape = LAYOUTS[layout]
    C = shape[1] if len(shape) > 1 else shape[0]
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    t = _ids(rng, tshape, C, ignore)
    w = rng.uniform(0.2, 2.0, C).astype(dtype) if weighted else None
    kwargs = {"reduction": reduction, "label_smoothing": smoothing}
    if ignore is not None:
        kwargs["ignore_index"] = ignore
    ours_x = Tensor(x, requires_grad=True)
    ours = cross_entropy(ours_x, t, weight=w, **kwargs)
    theirs_x = torch.tensor(x, requires_grad=True)
    theirs = F.cross_entropy(
        theirs_x, torch.from_numpy(t), weight=None if w is None else torch.from_numpy(w), **kwargs
    )
    _close(ours.data, theirs, dtype)
    _backward_both(ours, theirs, rng)
    _close(ours_x.grad, theirs_x.grad, dtype)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_all_ignored_is_nan_like_torch(reduction, smoothing):
    x = np.random.default_rng(0).standard_normal((4, 3))
    t = np.full(4, -100)
    ours_x, theirs_x = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = cross_entropy(ours_x, t, reduction=reduction, label_smoothing=smoothing)
    theirs = F.cross_entropy(
        theirs_x, torch.from_numpy(t), reduction=reduction, label_smoothing=smoothing
    )
    np.testing.assert_array_equal(ours.data, theirs.detach().numpy())  # NaN == NaN here
    ours.backward(np.ones(ours.shape))
    theirs.backward(torch.ones(theirs.shape, dtype=theirs.dtype))
    np.testing.assert_array_equal(ours_x.grad, theirs_x.grad.numpy())  # zeros, not NaN


def test_cross_entropy_large_logits_stay_finite_and_match_torch():
    x = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]], dtype=np.float32)
    t = np.array([1, 2])
    ours_x, theirs_x = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = cross_entropy(ours_x, t)
    theirs = F.cross_entropy(theirs_x, torch.from_numpy(t))
    assert np.isfinite(ours.item())
    _close(ours.data, theirs, np.float32)
    ours.backward()
    theirs.backward()
    _close(ours_x.grad, theirs_x.grad, np.float32)


@pytest.mark.parametrize("layout", ["NC", "C", "NCd"])
@pytest.mark.parametrize(("weighted", "smoothing"), [(False, 0.0), (True, 0.0), (True, 0.3)])
def test_cross_entropy_ids_gradcheck(layout, weighted, smoothing):
    rng = np.random.default_rng(1)
    shape, tshape = LAYOUTS[layout]
    C = shape[1] if len(shape) > 1 else shape[0]
    x = Tensor(rng.standard_normal(shape), requires_grad=True)
    t = _ids(rng, tshape, C, 2 if len(tshape) else None)
    w = rng.uniform(0.5, 2.0, C) if weighted else None
    assert gradcheck(
        lambda a: cross_entropy(a, t, weight=w, ignore_index=2, label_smoothing=smoothing), [x]
    )


def test_cross_entropy_backward_has_no_one_hot_materialised(monkeypatch):
    """The backward subtracts at the target indices; it never calls an (N, C) one-hot."""
    import rowbook.nn.loss as loss_module

    calls = []
    monkeypatch.setattr(loss_module.np, "eye", lambda *a, **k: calls.append(a))
    x = Tensor(np.zeros((3, 4)), requires_grad=True)
    cross_entropy(x, np.array([0, 3, 3])).backward()
    assert not calls
    np.testing.assert_allclose(x.grad.sum(axis=1), 0.0, atol=1e-15)  # softmax - indicator


# -- cross-entropy with class probabilities --------------------------------------------------

PROB_CASES = list(
    itertools.product(
        [np.float32, np.float64], LAYOUTS, [False, True], ["mean", "sum", "none"], [0.0, 0.25]
    )
)


@pytest.mark.parametrize(("dtype", "layout", "weighted", "reduction", "smoothing"), PROB_CASES)
def test_cross_entropy_probabilities_match_torch(dtype, layout, weighted, reduction, smoothing):
    rng = _rng(layout, weighted, reduction)
    shape, _ = LAYOUTS[layout]
    axis = 1 if len(shape) > 1 else 0
    C = shape[axis]
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    y = rng.uniform(size=shape).astype(dtype)
    y /= y.sum(axis=axis, keepdims=True)
    w = rng.uniform(0.2, 2.0, C).astype(dtype) if weighted else None
    ours_x, ours_y = Tensor(x, requires_grad=True), Tensor(y, requires_grad=True)
    theirs_x, theirs_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    kwargs = {"reduction": reduction, "label_smoothing": smoothing}
    ours = cross_entropy(ours_x, ours_y, weight=w, **kwargs)
    theirs = F.cross_entropy(
        theirs_x, theirs_y, weight=None if w is None else torch.from_numpy(w), **kwargs
    )
    _close(ours.data, theirs, dtype)
    _backward_both(ours, theirs, rng)
    _close(ours_x.grad, theirs_x.grad, dtype)
    _close(ours_y.grad, theirs_y.grad, dtype)


def test_cross_entropy_probabilities_gradcheck_both_inputs():
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    y = Tensor(rng.uniform(size=(2, 4, 3)), requires_grad=True)
    w = rng.uniform(0.5, 2.0, 4)
    assert gradcheck(lambda a, b: cross_entropy(a, b, weight=w, label_smoothing=0.1), [x, y])


# -- binary cross-entropy with logits ---------------------------------------------------------

BCE_CASES = list(
    itertools.product(
        [np.float32, np.float64],
        [(7,), (4, 3), (2, 3, 4)],
        ["none", "full", "row"],
        [False, True],
        ["mean", "sum", "none"],
    )
)


@pytest.mark.parametrize(("dtype", "shape", "weight", "pos", "reduction"), BCE_CASES)
def test_bce_with_logits_matches_torch(dtype, shape, weight, pos, reduction):
    rng = _rng(shape, weight, pos, reduction)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    y = rng.uniform(size=shape).astype(dtype)
    w = {"none": None, "full": rng.uniform(0.1, 2, shape), "row": rng.uniform(0.1, 2, shape[-1:])}
    w = None if w[weight] is None else w[weight].astype(dtype)
    pw = rng.uniform(0.5, 3, shape[-1:]).astype(dtype) if pos else None
    ours_x, ours_y = Tensor(x, requires_grad=True), Tensor(y, requires_grad=True)
    theirs_x, theirs_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours = binary_cross_entropy_with_logits(
        ours_x, ours_y, weight=w, pos_weight=pw, reduction=reduction
    )
    theirs = F.binary_cross_entropy_with_logits(
        theirs_x,
        theirs_y,
        reduction=reduction,
        weight=None if w is None else torch.from_numpy(w),
        pos_weight=None if pw is None else torch.from_numpy(pw),
    )
    _close(ours.data, theirs, dtype)
    _backward_both(ours, theirs, rng)
    _close(ours_x.grad, theirs_x.grad, dtype)
    _close(ours_y.grad, theirs_y.grad, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bce_with_logits_is_stable_for_large_logits(dtype):
    x = np.array([1000.0, -1000.0, 1000.0, -1000.0, 80.0, -80.0], dtype=dtype)
    y = np.array([1.0, 0.0, 0.0, 1.0, 0.3, 0.7], dtype=dtype)
    pw = np.array([2.0], dtype=dtype)
    ours_x, theirs_x = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = binary_cross_entropy_with_logits(ours_x, y, pos_weight=pw, reduction="none")
    theirs = F.binary_cross_entropy_with_logits(
        theirs_x, torch.from_numpy(y), pos_weight=torch.from_numpy(pw), reduction="none"
    )
    assert np.all(np.isfinite(ours.data))
    _close(ours.data, theirs, dtype)
    _backward_both(ours, theirs, np.random.default_rng(0))
    _close(ours_x.grad, theirs_x.grad, dtype)


def test_bce_with_logits_gradcheck():
    rng = np.random.default_rng(3)
    x = Tensor(rng.standard_normal((3, 4)) * 3, requires_grad=True)
    y = Tensor(rng.uniform(size=(3, 4)), requires_grad=True)
    w, pw = rng.uniform(0.5, 2, (3, 1)), rng.uniform(0.5, 2, 4)
    f = lambda a, b: binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=pw)  # noqa: E731
    assert gradcheck(f, [x, y])


# -- mean squared error ---------------------------------------------------------------------

MSE_CASES = list(
    itertools.product(
        [np.float32, np.float64],
        [((4, 3), (4, 3)), ((4, 3), (3,)), ((4, 1), (1, 5))],
        ["mean", "sum", "none"],
    )
)


@pytest.mark.parametrize(("dtype", "shapes", "reduction"), MSE_CASES)
def test_mse_loss_matches_torch(dtype, shapes, reduction):
    rng = _rng(shapes, reduction)
    x, y = (rng.standard_normal(s).astype(dtype) for s in shapes)
    ours_x, ours_y = Tensor(x, requires_grad=True), Tensor(y, requires_grad=True)
    theirs_x, theirs_y = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours = mse_loss(ours_x, ours_y, reduction=reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when the shapes broadcast
        theirs = F.mse_loss(theirs_x, theirs_y, reduction=reduction)
    _close(ours.data, theirs, dtype)
    _backward_both(ours, theirs, rng)
    _close(ours_x.grad, theirs_x.grad, dtype)
    _close(ours_y.grad, theirs_y.grad, dtype)


def test_mse_loss_gradcheck():
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = Tensor(rng.standard_normal((4,)), requires_grad=True)
    assert gradcheck(lambda a, b: mse_loss(a, b, reduction="sum"), [x, y])


@pytest.mark.parametrize(
    "loss",
    [
        lambda x, y: cross_entropy(x, np.array([0, 2, 1, 1]), weight=np.ones(3)),
        lambda x, y: cross_entropy(x, np.array([0, 2, -100, 1]), label_smoothing=0.1),
        lambda x, y: cross_entropy(x, y, weight=np.ones(3), label_smoothing=0.1),
        lambda x, y: binary_cross_entropy_with_logits(x, y, weight=np.ones(3), pos_weight=[2.0]),
        lambda x, y: mse_loss(x, y, reduction="sum"),
    ],
)
def test_float32_losses_hand_float32_gradients_back(loss, monkeypatch):
    """No silent float64 detour (it would cost a pass and a cast per backward)."""
    seen = []
    original = Tensor._accumulate_leaf

    def spy(self, g, adopted=None):
        seen.append(g.dtype)
        return original(self, g, adopted)

    monkeypatch.setattr(Tensor, "_accumulate_leaf", spy)
    rng = np.random.default_rng(6)
    x = Tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    y = Tensor(rng.uniform(size=(4, 3)).astype(np.float32), requires_grad=True)
    loss(x, y).backward()
    assert seen and set(seen) == {np.dtype(np.float32)}


# -- errors ------------------------------------------------------------------------------------

LOGITS = Tensor(np.zeros((2, 3), dtype=np.float32))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: cross_entropy(LOGITS, [0, 3]), IndexError, r"target 3 .* 0\.\.2"),
        (lambda: cross_entropy(LOGITS, [-1, 0]), IndexError, r"target -1 .* 0\.\.2"),
        (lambda: cross_entropy(LOGITS, [0.0, 1.0]), ValueError, r"probabilities .* \(2, 3\)"),
        (lambda: cross_entropy(LOGITS, np.zeros((2, 3), int)), ValueError, r"\(2, 3\).*\(2,\)"),
        (lambda: cross_entropy(LOGITS, [0, 1, 2]), ValueError, r"\(3,\), expected \(2,\)"),
        (lambda: cross_entropy(LOGITS, [True, False]), TypeError, "integer class ids"),
        (lambda: cross_entropy(LOGITS, [0, 1], weight=np.ones(2)), ValueError, r"weight .*\(3,\)"),
        (lambda: cross_entropy(LOGITS, [0, 1], reduction="avg"), ValueError, "'avg'"),
        (lambda: cross_entropy(LOGITS, [0, 1], label_smoothing=1.5), ValueError, "1.5"),
        (lambda: cross_entropy(Tensor([[1, 2]]), [0]), TypeError, "int64"),
        (lambda: cross_entropy(Tensor(np.float32(1)), 0), ValueError, "at least one dimension"),
        (
            lambda: cross_entropy(LOGITS, np.zeros((2, 3)), ignore_index=0),
            ValueError,
            "ignore_index=0",
        ),
        (
            lambda: cross_entropy(LOGITS, [0, 1], weight=Tensor(np.ones(3), requires_grad=True)),
            ValueError,
            r"weight.detach\(\)",
        ),
        (lambda: binary_cross_entropy_with_logits(LOGITS, np.zeros(3)), ValueError, r"\(3,\)"),
        (
            lambda: binary_cross_entropy_with_logits(LOGITS, np.zeros((2, 3)), weight=np.ones(2)),
            ValueError,
            r"weight has shape \(2,\)",
        ),
        (
            lambda: binary_cross_entropy_with_logits(
                LOGITS, np.zeros((2, 3)), pos_weight=np.ones(4)
            ),
            ValueError,
            r"pos_weight has shape \(4,\)",
        ),
        (lambda: mse_loss(LOGITS, np.zeros(4)), ValueError, r"\(2, 3\) and target \(4,\)"),
        (lambda: mse_loss(LOGITS, LOGITS, reduction=None), ValueError, "reduction"),
    ],
)
def test_loss_errors_name_the_value_and_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_ignore_index_inside_the_class_range_is_allowed():
    x = np.random.default_rng(5).standard_normal((4, 3))
    t = np.array([0, 1, 2, 0])
    ours = cross_entropy(Tensor(x), t, ignore_index=0)
    theirs = F.cross_entropy(torch.from_numpy(x), torch.from_numpy(t), ignore_index=0)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-13)
