"""Value's gradients against the Tensor engine's and PyTorch's, on random expression graphs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor, ops
from rowbook.scratch import Value

TOL = 1e-12


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


# Each op: (name, arity, applies to these values?, Value form, Tensor form, torch form).
UNARY = {
    "neg": (lambda v: True, lambda a: -a, lambda a: -a, lambda a: -a),
    "exp": (lambda v: abs(v) < 4, lambda a: a.exp(), ops.exp, torch.exp),
    "log": (lambda v: v > 0.1, lambda a: a.log(), ops.log, torch.log),
    "tanh": (lambda v: True, lambda a: a.tanh(), ops.tanh, torch.tanh),
    "relu": (lambda v: abs(v) > 1e-3, lambda a: a.relu(), ops.relu, torch.relu),
    "sigmoid": (lambda v: True, lambda a: a.sigmoid(), ops.sigmoid, torch.sigmoid),
    "square": (lambda v: abs(v) < 30, lambda a: a**2, lambda a: a**2, lambda a: a**2),
    "cube": (lambda v: abs(v) < 10, lambda a: a**3, lambda a: a**3, lambda a: a**3),
    "sqrt": (lambda v: v > 0.1, lambda a: a**0.5, lambda a: a**0.5, lambda a: a**0.5),
    "inverse": (lambda v: abs(v) > 0.1, lambda a: a**-1, lambda a: a**-1.0, lambda a: a**-1),
    "plus_c": (lambda v: True, lambda a: 1.5 + a, lambda a: 1.5 + a, lambda a: 1.5 + a),
    "times_c": (lambda v: True, lambda a: -0.7 * a, lambda a: -0.7 * a, lambda a: -0.7 * a),
    "c_minus": (lambda v: True, lambda a: 2.0 - a, lambda a: 2.0 - a, lambda a: 2.0 - a),
    "c_over": (lambda v: abs(v) > 0.1, lambda a: 1.0 / a, lambda a: 1.0 / a, lambda a: 1.0 / a),
}
BINARY = {
    "add": (lambda x, y: True, lambda a, b: a + b),
    "sub": (lambda x, y: True, lambda a, b: a - b),
    "mul": (lambda x, y: abs(x * y) < 1e3, lambda a, b: a * b),
    "div": (lambda x, y: abs(y) > 0.1, lambda a, b: a / b),
}


def random_graph(seed: int, leaves: int = 3, steps: int = 12):
    """The same random expression built three times: in Values, Tensors and torch tensors.

    Operands are drawn from every node so far, so leaves and intermediates are reused
    (their gradients must sum). Ops whose input is outside their domain are skipped.
    """
    rng = random.Random(seed)
    xs = [rng.uniform(-2.0, 2.0) for _ in range(leaves)]
    values = [Value(x) for x in xs]
    tensors = [Tensor(np.float64(x), requires_grad=True) for x in xs]
    torches = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    nodes = list(zip(values, tensors, torches, strict=True))
    while len(nodes) < leaves + steps:
        if rng.random() < 0.5:
            name = rng.choice(sorted(UNARY))
            ok, f_value, f_tensor, f_torch = UNARY[name]
            v, t, tt = rng.choice(nodes)
            if ok(v.data):
                nodes.append((f_value(v), f_tensor(t), f_torch(tt)))
        else:
            ok, f = BINARY[rng.choice(sorted(BINARY))]
            (v1, t1, tt1), (v2, t2, tt2) = rng.choice(nodes), rng.choice(nodes)
            if ok(v1.data, v2.data):
                nodes.append((f(v1, v2), f(t1, t2), f(tt1, tt2)))
    out_v, out_t, out_tt = nodes[-1]
    for v, t, tt in nodes[-4:-1]:  # sum the last few so more of the graph reaches the output
        out_v, out_t, out_tt = out_v + v, out_t + t, out_tt + tt
    return (values, tensors, torches), (out_v, out_t, out_tt)


@pytest.mark.parametrize("seed", range(300))
def test_gradients_equal_the_tensor_engine_and_torch(seed):
    (values, tensors, torches), (out_v, out_t, out_tt) = random_graph(seed)
    assert close(out_v.data, float(out_t.data)) and close(out_v.data, out_tt.item())
    out_v.backward()
    out_t.backward()
    out_tt.backward()
    for v, t, tt in zip(values, tensors, torches, strict=True):
        expected = 0.0 if t.grad is None else float(t.grad)
        assert close(v.grad, expected), (seed, v.grad, expected)
        assert close(v.grad, 0.0 if tt.grad is None else tt.grad.item())


def test_the_random_graphs_use_every_op():
    """The check can fail: over the seeds, every op occurs and some leaf is reused."""
    seen = set()
    for seed in range(300):
        _, (out, _, _) = random_graph(seed)
        stack = [out]
        while stack:
            node = stack.pop()
            seen.add(node.op.split("**")[0] + ("**" if "**" in node.op else ""))
            stack.extend(p for p, _ in node.edges)
    assert {"+", "*", "**", "exp", "log", "tanh", "relu", "sigmoid"} <= seen


def test_a_wrong_gradient_is_caught():
    """The comparison can fail: a local derivative off by a factor shows up."""
    (values, tensors, _), (out_v, out_t, _) = random_graph(7)
    out_v.backward()
    out_t.backward()
    assert not all(
        close(2 * v.grad, float(t.grad)) for v, t in zip(values, tensors, strict=True) if v.grad
    )


def test_gradients_accumulate_across_two_backward_calls():
    """Two outputs share ``h = x * x``; calling backward on each gives x the sum, each path
    counted once (torch needs retain_graph for the shared part; the Tensor engine too)."""
    x = Value(0.3)
    h = x * x
    y1, y2 = h.tanh(), h.exp() * 3.0 + x
    y1.backward()
    y2.backward()
    xt = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    ht = xt * xt
    torch.tanh(ht).backward(retain_graph=True)
    (torch.exp(ht) * 3.0 + xt).backward()
    t = Tensor(np.float64(0.3), requires_grad=True)
    ht2 = t * t
    ops.tanh(ht2).backward(retain_graph=True)
    (ops.exp(ht2) * 3.0 + t).backward()
    assert close(x.grad, xt.grad.item()) and close(x.grad, float(t.grad))
    assert close(x.grad, (1 - math.tanh(0.09) ** 2) * 0.6 + 3 * math.exp(0.09) * 0.6 + 1)


def test_the_same_output_twice_doubles_the_input_gradients():
    x = Value(0.7)
    y = (x * x).tanh() + x
    y.backward()
    once = x.grad
    y.backward()
    assert close(x.grad, 2 * once)


def test_a_value_used_twice_gets_both_contributions():
    x = Value(-1.5)
    (x * x).backward()  # d(x^2)/dx = 2x, from two edges to the same x
    assert x.grad == -3.0


def test_a_long_chain_does_not_hit_the_recursion_limit():
    x = Value(1.0)
    y = x
    for _ in range(5_000):
        y = y * 1.0001
    y.backward()
    assert close(x.grad, 1.0001**5_000)


def test_value_to_a_value_power_is_refused():
    with pytest.raises(TypeError, match="exponent must be a number"):
        Value(2.0) ** Value(3.0)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Value(-4.0) ** 0.5, r"Value\(-4.0\) \*\* 0.5 has no real derivative"),
        (lambda: Value(0.0) ** -1, r"Value\(0.0\) \*\* -1 has no real derivative"),
        (lambda: 1.0 / Value(0.0), r"Value\(0.0\) \*\* -1.0 has no real derivative"),
        (lambda: Value(0.0).log(), r"log needs a value > 0, got Value\(0.0\)"),
    ],
)
def test_values_outside_an_ops_domain_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()
