"""Value: one number that remembers how it was made, so it can be differentiated.

This is reverse-mode automatic differentiation at its smallest, the engine the rest of
rowbook (:mod:`rowbook.autograd`) does for whole arrays at once. Each operation below
computes its result and, on the very next line, records the *local derivative* of that
result with respect to each input: ``d(a * b) / da = b``. :meth:`Value.backward` then
applies the chain rule from the output back to every input, once per edge of the graph::

    input.grad += (d out / d input) * out.grad

The ``+=`` matters: a value used twice (``x * x``, or one embedding row looked up at two
positions) receives the *sum* of both contributions. Assigning instead of adding would
keep only the last one, a bug that gives wrong gradients without any error.

Examples
--------
>>> x = Value(3.0)
>>> y = x * x + 2 * x          # dy/dx = 2x + 2 = 8
>>> y.backward()
>>> y.data, x.grad
(15.0, 8.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterator

__all__ = ["Value"]


class Value:
    """A float ``data``, its gradient ``grad``, and the edges to the values it came from.

    Parameters
    ----------
    data
        the number.
    edges
        ``(parent, d self / d parent)`` pairs: which values this one was computed from,
        and the local derivative with respect to each. Empty for an input.
    op
        the name of the operation that made it (for reading a graph; not used in math).

    Examples
    --------
    >>> a, b = Value(2.0), Value(-4.0)
    >>> c = (a * b).relu() + a.exp().log()   # relu(-8) = 0, log(exp(2)) = 2
    >>> c.backward()
    >>> c.data, a.grad, b.grad
    (2.0, 1.0, 0.0)
    """

    __slots__ = ("data", "edges", "grad", "op")

    def __init__(
        self, data: float, edges: tuple[tuple[Value, float], ...] = (), op: str = ""
    ) -> None:
        self.data = float(data)
        self.grad = 0.0
        self.edges = edges
        self.op = op

    def __repr__(self) -> str:
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g})"

    # -- arithmetic: the forward value, then each input's local derivative ----------------
    def __add__(self, other: Value | float) -> Value:
        other = _as_value(other)
        out = self.data + other.data
        return Value(out, ((self, 1.0), (other, 1.0)), "+")  # d(a+b)/da = d(a+b)/db = 1

    def __mul__(self, other: Value | float) -> Value:
        other = _as_value(other)
        out = self.data * other.data
        return Value(out, ((self, other.data), (other, self.data)), "*")  # d(ab)/da = b

    def __pow__(self, n: float) -> Value:
        if isinstance(n, Value):
            raise TypeError("Value ** Value is not supported: the exponent must be a number")
        if (self.data < 0 and n != int(n)) or (self.data == 0 and n < 1):
            raise ValueError(f"Value({self.data}) ** {n} has no real derivative: use a base > 0")
        out = self.data**n
        return Value(out, ((self, n * self.data ** (n - 1)),), f"**{n}")  # d(a^n)/da = n a^(n-1)

    def __neg__(self) -> Value:
        return self * -1.0

    def __sub__(self, other: Value | float) -> Value:
        return self + (-_as_value(other))

    def __truediv__(self, other: Value | float) -> Value:
        return self * _as_value(other) ** -1.0

    # a number on the left: 2 * x, 1 - x, 1 / x
    def __radd__(self, other: float) -> Value:
        return self + other

    def __rmul__(self, other: float) -> Value:
        return self * other

    def __rsub__(self, other: float) -> Value:
        return _as_value(other) - self

    def __rtruediv__(self, other: float) -> Value:
        return _as_value(other) / self

    # -- functions of one value ----------------------------------------------------------
    def exp(self) -> Value:
        out = math.exp(self.data)
        return Value(out, ((self, out),), "exp")  # d(e^a)/da = e^a

    def log(self) -> Value:
        if self.data <= 0:
            raise ValueError(f"log needs a value > 0, got Value({self.data})")
        out = math.log(self.data)
        return Value(out, ((self, 1.0 / self.data),), "log")  # d(log a)/da = 1/a

    def tanh(self) -> Value:
        out = math.tanh(self.data)
        return Value(out, ((self, 1.0 - out * out),), "tanh")  # d(tanh a)/da = 1 - tanh^2

    def relu(self) -> Value:
        out = self.data if self.data > 0 else 0.0
        return Value(out, ((self, 1.0 if self.data > 0 else 0.0),), "relu")  # 1 where a > 0

    def sigmoid(self) -> Value:
        out = 1.0 / (1.0 + math.exp(-self.data))
        return Value(out, ((self, out * (1.0 - out)),), "sigmoid")  # s(a) (1 - s(a))

    # -- the chain rule, from this value back to every input --------------------------------
    def backward(self) -> None:
        """Add ``d self / d v`` into ``v.grad`` for every input ``v`` that ``self`` depends on.

        The graph is walked in reverse topological order, so a value passes its gradient
        on only after every value computed from it has passed theirs. Inputs (values with
        no edges) keep adding up across calls, as PyTorch's leaves do: set their ``grad``
        back to 0 between training steps. A computed value's ``grad`` belongs to one call
        and starts again from 0 at the next, so two outputs that share a piece of graph
        can each call ``backward`` and the inputs get the sum, counted once each.
        """
        order = list(_topological_order(self))
        for node in order:
            if node.edges:
                node.grad = 0.0
        self.grad += 1.0
        for node in reversed(order):
            for parent, local in node.edges:
                parent.grad += local * node.grad


def _as_value(x: Value | float) -> Value:
    return x if isinstance(x, Value) else Value(x)


def _topological_order(root: Value) -> Iterator[Value]:
    """Every value ``root`` depends on, each after all of its parents (an iterative
    depth-first search, so long chains do not hit Python's recursion limit).

    >>> a = Value(1.0)
    >>> b = a * 2          # the 2 becomes an input Value too
    >>> c = a + b
    >>> [v.op or v.data for v in _topological_order(c)]
    [1.0, 2.0, '*', '+']
    """
    seen: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            yield node
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for parent, _ in reversed(node.edges):
            if id(parent) not in seen:
                stack.append((parent, False))
