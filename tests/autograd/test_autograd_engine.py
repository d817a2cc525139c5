"""The engine: accumulation, no_grad, detach, dtypes, error messages, deep graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor, is_grad_enabled, no_grad, ops

# -- gradients accumulate ----------------------------------------------------------------


def test_tensor_used_twice_gets_the_sum():
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad, 2 * x.data + 1)


def test_same_tensor_as_both_operands_of_one_op():
    x = Tensor(np.array([0.5, 4.0]), requires_grad=True)
    ((x / x).sum() + x @ x).backward()  # d(x/x)=0, d(x.x)=2x
    np.testing.assert_allclose(x.grad, 2 * x.data, rtol=1e-15)


def test_backward_twice_accumulates_like_torch():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = (x**2).sum()
    y.backward(retain_graph=True)
    y.backward()
    t = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    ty = (t**2).sum()
    ty.backward(retain_graph=True)
    ty.backward()
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


def test_diamond_graph_matches_torch():
    def diamond(lib_x):
        a = lib_x * 2.0
        b, c = a + 1.0, a * 3.0  # two paths from a
        return (b * c).sum() + a.sum()

    x = Tensor(np.array([0.5, -1.5, 2.0]), requires_grad=True)
    diamond(x).backward()
    t = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    diamond(t).backward()
    np.testing.assert_array_equal(x.grad, t.grad.numpy())


def test_only_leaves_keep_a_gradient():
    x = Tensor(np.ones(2), requires_grad=True)
    h = x * 3.0
    h.sum().backward()
    assert h.grad is None and x.grad is not None


def test_zero_grad_clears():
    x = Tensor(np.ones(2), requires_grad=True)
    x.sum().backward()
    x.zero_grad()
    assert x.grad is None


def test_leaves_never_share_a_gradient_buffer():
    a, b = Tensor(np.ones(3), requires_grad=True), Tensor(np.ones(3), requires_grad=True)
    (a + b).backward(np.full(3, 2.0))  # add hands one array to both parents
    assert not np.shares_memory(a.grad, b.grad)
    a.grad *= 10  # an in-place update of one gradient (as an optimizer may do)
    np.testing.assert_array_equal(b.grad, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("through_add", [False, True])
def test_the_callers_seed_is_never_adopted(through_add):
    x = Tensor(np.ones(3), requires_grad=True)
    seed = np.array([1.0, 2.0, 3.0])
    (x + 0.0 if through_add else x).backward(seed)
    assert not np.shares_memory(x.grad, seed)
    x.grad[:] = 0
    np.testing.assert_array_equal(seed, [1.0, 2.0, 3.0])


def test_a_fresh_gradient_is_adopted_without_a_copy():
    returned = []

    def double(t: Tensor) -> Tensor:
        def backward(g):
            returned.append(2 * g)
            return (returned[-1],)

        return Tensor._make(t.data * 2, (t,), backward, "double")

    x = Tensor(np.ones((2, 2)), requires_grad=True)
    double(x).sum().backward()
    assert x.grad is returned[0]
    double(x).sum().backward()  # the second pass accumulates into a new array
    assert x.grad is not returned[1]
    np.testing.assert_array_equal(returned[0], np.full((2, 2), 2.0))  # adopted, not changed
    np.testing.assert_array_equal(x.grad, np.full((2, 2), 4.0))


# -- no_grad and detach ------------------------------------------------------------------


def test_no_grad_records_no_graph():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        y = ops.exp(x) * 2
    assert not y.requires_grad and y.is_leaf and y._parents == ()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_no_grad_is_restored_after_an_exception_and_nests():
    assert is_grad_enabled()
    with pytest.raises(ZeroDivisionError), no_grad():
        1 / 0  # noqa: B018
    assert is_grad_enabled()
    with no_grad():
        with no_grad():
            assert not is_grad_enabled()
        assert not is_grad_enabled()  # the inner exit restores the outer state
    assert is_grad_enabled()


def test_detach_shares_values_and_cuts_the_graph():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    d = x.detach()
    assert np.shares_memory(d.data, x.data) and not d.requires_grad
    (d * x).sum().backward()  # only the x factor is differentiated
    np.testing.assert_array_equal(x.grad, x.data)


# -- dtypes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (1.0, np.float32),
        ([1.0, 2.0], np.float32),
        ([[1, 2]], np.int64),
        (3, np.int64),
        (np.array([1.0]), np.float64),
        (np.float64(2.0), np.float64),
        (np.array([1.0], np.float32), np.float32),
    ],
)
def test_default_dtypes_follow_torch_for_python_values(value, dtype):
    assert Tensor(value).dtype == dtype
    if not isinstance(value, np.ndarray | np.generic):
        assert torch.tensor(value).numpy().dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_preserved_through_ops_and_grads(dtype):
    x = Tensor(np.array([[0.5, 1.0], [2.0, 3.0]], dtype=dtype), requires_grad=True)
    y = ops.log_softmax((x * 2.0 + 1) @ x.T / 3.0, axis=-1).max(axis=0).mean()
    y = y + ops.maximum(x, 1.5).sum() + x[[0, 0]].sum()
    assert y.dtype == dtype
    y.backward()
    assert x.grad.dtype == dtype


def test_grad_dtype_equals_leaf_dtype_across_a_cast():
    x32 = Tensor(np.ones(3, np.float32), requires_grad=True)
    w64 = Tensor(np.full(3, 2.0), requires_grad=True)
    (x32.astype(np.float64) * w64).sum().backward()
    assert x32.grad.dtype == np.float32 and w64.grad.dtype == np.float64


def test_scalars_take_the_tensor_dtype_but_floats_promote_integers():
    assert (Tensor(np.ones(2)) * 0.5).dtype == np.float64
    assert (Tensor(np.ones(2, np.float32)) + 1).dtype == np.float32
    assert (Tensor([1, 2]) + 1).dtype == np.int64
    np.testing.assert_array_equal((Tensor([1, 2]) * 0.5).data, [0.5, 1.0])
    assert (Tensor([1, 2]) * 0.5).dtype == np.float32  # torch: int tensor * float -> float32


def test_requires_grad_needs_a_float_dtype():
    with pytest.raises(TypeError, match="floating"):
        Tensor([1, 2], requires_grad=True)


def test_reductions_give_arrays_not_numpy_scalars():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    for out in (x.sum(), x.mean(), x.max(), x.sum(axis=(0, 1))):
        assert isinstance(out.data, np.ndarray) and out.shape == ()


# -- errors --------------------------------------------------------------------------------------


def test_backward_on_non_scalar_without_grad_raises():
    y = Tensor(np.ones((2, 3)), requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        y.backward()
    with pytest.raises(ValueError, match=r"grad has shape \(3,\), expected \(2, 3\)"):
        y.backward(np.ones(3))


def test_backward_on_tensor_not_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor(np.ones(2)).sum().backward()


A, B = Tensor(np.ones((2, 3))), Tensor(np.ones((4,)))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: A + B, ValueError, r"add: shapes \(2, 3\) and \(4,\)"),
        (lambda: A - B, ValueError, r"sub: shapes \(2, 3\) and \(4,\)"),
        (lambda: A * B, ValueError, r"mul: shapes \(2, 3\) and \(4,\)"),
        (lambda: A / B, ValueError, r"div: shapes \(2, 3\) and \(4,\)"),
        (lambda: A**B, ValueError, r"pow: shapes \(2, 3\) and \(4,\)"),
        (lambda: ops.maximum(A, B), ValueError, r"maximum: shapes \(2, 3\) and \(4,\)"),
        (lambda: ops.where(np.ones(4, bool), A, A), ValueError, r"\(4,\).*\(2, 3\)"),
        (lambda: A @ B, ValueError, r"\(2, 3\).*\(4,\).*3 != 4"),
        (
            lambda: Tensor(np.ones((2, 2, 3))) @ Tensor(np.ones((3, 3, 1))),
            ValueError,
            r"batch dimensions \(2,\) and \(3,\)",
        ),
        (lambda: ops.concatenate([A, B]), ValueError, r"\(2, 3\), \(4,\)"),
        (lambda: ops.stack([A, A.T]), ValueError, r"\(2, 3\), \(3, 2\)"),
        (lambda: A.reshape(4, 2), ValueError, r"\(2, 3\) into \(4, 2\)"),
        (lambda: A.sum(axis=2), ValueError, "axis 2 is out of range"),
        (lambda: A[5], IndexError, r"shape \(2, 3\)"),
        (lambda: ops.gather(A, [0, 2]), IndexError, r"id 2 .* 0\.\.1"),
        (lambda: ops.gather(A, [0.0]), TypeError, "integers"),
    ],
)
def test_op_errors_name_the_shapes(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- deep graphs ---------------------------------------------------------------------------------


def test_deep_chain_does_not_hit_the_recursion_limit():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + x
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [5001.0, 5001.0])
    del y  # freeing a 5,000-deep graph must not overflow the C stack either


def test_deep_chain_of_unary_ops():
    x = Tensor(np.array([0.3]), requires_grad=True)
    y = x
    for _ in range(3000):
        y = ops.tanh(y) * 1.0 + 0.0
    y.sum().backward()
    # The same chain, differentiated by hand.
    value, grad = 0.3, 1.0
    for _ in range(3000):
        value = np.tanh(value)
        grad *= 1 - value * value
    np.testing.assert_allclose(x.grad, [grad], rtol=1e-12)
