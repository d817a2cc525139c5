"""Tensor: a NumPy array that remembers how it was made, so it can be differentiated.

Every differentiable op (see ``ops.py``) builds its output with :meth:`Tensor._make`,
handing over the parents and a ``backward`` closure that maps the output gradient
to one gradient per parent. :meth:`Tensor.backward` walks that graph in reverse
topological order (``engine.py``) and *accumulates* gradients: a tensor used twice
receives the sum of both contributions, never the last one; the walk frees the graph
unless ``retain_graph=True``, as in PyTorch.

Leaf gradients are either dense ``numpy.ndarray`` objects or :class:`RowSparse`
objects (from a sparse embedding lookup). Intermediate tensors only ever see dense
gradients; a row-sparse gradient that reaches a non-leaf is densified first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from rowbook.autograd import engine
from rowbook.autograd.sparse import RowSparse
from rowbook.checks import InputTypeError

__all__ = ["Tensor", "as_tensor", "is_grad_enabled", "no_grad"]

Gradient = np.ndarray | RowSparse
BackwardFn = Callable[[np.ndarray], Sequence["np.ndarray | RowSparse | None"]]

_state = threading.local()


def is_grad_enabled() -> bool:
    """Whether new operations record the graph needed for :meth:`Tensor.backward`."""
    return getattr(_state, "grad_enabled", True)


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Context in which operations build no graph (inference, weight surgery, optimizers).

    Examples
    --------
    >>> from rowbook.autograd import Tensor, no_grad
    >>> w = Tensor([1.0, 2.0], requires_grad=True)
    >>> with no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """
    previous = is_grad_enabled()
    _state.grad_enabled = False
    try:
        yield
    finally:
        _state.grad_enabled = previous


def _to_array(data: Any, dtype: Any) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data.data
    if dtype is not None:
        return np.asarray(data, dtype=dtype)
    array = np.asarray(data)
    # Python floats and lists default to float32, as in PyTorch; NumPy arrays and NumPy
    # scalars keep their dtype.
    if not isinstance(data, np.ndarray | np.generic) and array.dtype == np.float64:
        array = array.astype(np.float32)
    return array


class Tensor:
    """A NumPy array with an optional gradient and the graph that produced it.

    Parameters
    ----------
    data
        Array-like values. Python floats default to ``float32``; NumPy arrays keep
        their dtype (``float64`` is fully supported); integers stay integers.
    requires_grad
        Whether :meth:`backward` should compute ``self.grad``. Only floating tensors
        can require gradients.
    dtype
        Optional NumPy dtype to convert ``data`` to.

    Examples
    --------
    >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    array([2., 4., 6.], dtype=float32)
    """

    __array_priority__ = 1000  # ndarray <op> Tensor defers to Tensor's reflected operator

    def __init__(self, data: Any, *, requires_grad: bool = False, dtype: Any = None) -> None:
        self.data: np.ndarray = _to_array(data, dtype)
        if requires_grad and self.data.dtype.kind != "f":
            raise InputTypeError(
                f"requires_grad=True needs a floating dtype, got {self.data.dtype}; "
                "convert the values with dtype=np.float32 first"
            )
        self.requires_grad: bool = bool(requires_grad)
        self.grad: Gradient | None = None
        self._parents: tuple[Tensor, ...] = ()
        self._backward: BackwardFn | None = None
        self._op: str = ""

    # -- construction of graph nodes -------------------------------------------------
    @staticmethod
    def _make(
        data: np.ndarray, parents: tuple[Tensor, ...], backward: BackwardFn, op: str
    ) -> Tensor:
        """Wrap an op's output; record the graph only if some parent needs a gradient.

        ``backward(g)`` must not modify ``g`` and must return arrays it does not keep:
        a leaf may adopt a returned array as its ``.grad`` without copying it.
        """
        out = Tensor.__new__(Tensor)
        out.data = data if isinstance(data, np.ndarray) else np.asarray(data)  # not np.float32
        out.grad = None
        out._op = op
        if is_grad_enabled() and any(p.requires_grad for p in parents):
            out.requires_grad = True
            out._parents = parents
            out._backward = backward
        else:
            out.requires_grad = False
            out._parents = ()
            out._backward = None
        return out

    # -- array-like surface -----------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def is_leaf(self) -> bool:
        """True for tensors created by the user rather than by a recorded op."""
        return self._backward is None

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        grad = ", requires_grad=True" if self.requires_grad else ""
        op = f", op={self._op}" if self._op and self._backward is not None else ""
        return f"Tensor({np.array2string(self.data, precision=4)}{grad}{op})"

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied)."""
        return self.data

    def item(self) -> float | int:
        return self.data.item()

    def tolist(self) -> Any:
        return self.data.tolist()

    def detach(self) -> Tensor:
        """A tensor sharing this one's values, cut off from the graph."""
        return Tensor(self.data)

    def astype(self, dtype: Any) -> Tensor:
        """Convert the values to ``dtype``; differentiable between floating dtypes."""
        from rowbook.autograd import ops

        return ops.astype(self, dtype)

    def zero_grad(self) -> None:
        self.grad = None

    # -- backward ---------------------------------------------------------------------
    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires it.

        Parameters
        ----------
        grad
            Gradient of some scalar with respect to ``self``; may be omitted only when
            ``self`` holds a single element (the usual case of a loss).
        retain_graph
            Keep the graph for another ``backward`` through it. By default it is freed,
            as in PyTorch, and a second ``backward`` raises ``RuntimeError``.
        """
        engine.backward(self, grad, retain_graph=retain_graph)

    def _accumulate_leaf(self, g: Gradient, adopted: set[int] | None = None) -> None:
        """Add ``g`` to ``self.grad``, adopting a fresh array instead of copying it.

        ``adopted`` holds the ids of arrays already adopted in this backward pass (and the
        caller's seed): an op such as ``add`` hands one array to both its parents, and two
        leaves must not share a buffer.
        """
        if g.dtype != self.dtype:
            if isinstance(g, RowSparse):
                g = RowSparse(g.indices, g.values.astype(self.dtype), g.shape)
            else:
                g = g.astype(self.dtype)
        if self.grad is not None:
            self.grad = _add_grads(self.grad, g)
        elif adopted is not None and _owns_buffer(g) and id(g) not in adopted:
            self.grad = g
            adopted.add(id(g))
        else:
            self.grad = g.copy()

    # -- operators (implemented in ops.py) ---------------------------------------------
    def __add__(self, other: Any) -> Tensor:
        return _ops().add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops().add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops().sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops().sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops().mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops().mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops().div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops().div(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops().pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops().pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops().matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops().matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops().neg(self)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops().getitem(self, index)

    # Comparisons give plain boolean arrays: they have no gradient.
    def __lt__(self, other: Any) -> np.ndarray:
        return self.data < _raw(other)

    def __le__(self, other: Any) -> np.ndarray:
        return self.data <= _raw(other)

    def __gt__(self, other: Any) -> np.ndarray:
        return self.data > _raw(other)

    def __ge__(self, other: Any) -> np.ndarray:
        return self.data >= _raw(other)

    # -- methods mirroring ops.py --------------------------------------------------------
    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops().sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops().mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops().max(self, axis=axis, keepdims=keepdims)

    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return _ops().reshape(self, shape)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], tuple | list):
            axes = tuple(axes[0])
        return _ops().transpose(self, axes or None)

    @property
    def T(self) -> Tensor:
        return _ops().transpose(self, None)

    def exp(self) -> Tensor:
        return _ops().exp(self)

    def log(self) -> Tensor:
        return _ops().log(self)

    def tanh(self) -> Tensor:
        return _ops().tanh(self)

    def sigmoid(self) -> Tensor:
        return _ops().sigmoid(self)

    def relu(self) -> Tensor:
        return _ops().relu(self)

    def softmax(self, axis: int = -1) -> Tensor:
        return _ops().softmax(self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return _ops().log_softmax(self, axis=axis)


def _ops() -> Any:
    from rowbook.autograd import ops

    return ops


def _raw(x: Any) -> Any:
    return x.data if isinstance(x, Tensor) else x


def _owns_buffer(g: Gradient) -> bool:
    """A writable, contiguous ndarray that is not a view of another array."""
    return (
        isinstance(g, np.ndarray) and g.base is None and g.flags.writeable and g.flags.c_contiguous
    )


def _add_grads(a: Gradient, b: Gradient) -> Gradient:
    """Sum two gradients of the same tensor; sparse + sparse stays sparse."""
    if isinstance(a, RowSparse) and isinstance(b, RowSparse):
        return a + b
    if isinstance(a, RowSparse):
        a, b = b, a
    if isinstance(b, RowSparse):
        out = np.array(a, copy=True)
        b.add_to(out)
        return out
    return a + b


def as_tensor(x: Any, dtype: Any = None) -> Tensor:
    """``x`` itself if it is already a Tensor (and of ``dtype``), else a new constant Tensor."""
    if isinstance(x, Tensor) and (dtype is None or x.dtype == np.dtype(dtype)):
        return x
    return Tensor(x, dtype=dtype)
