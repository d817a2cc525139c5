"""The backward walk: ``backward`` into leaves' ``.grad``, ``grad`` returned to the caller.

Both walk the recorded graph once, from the outputs back, in reverse topological order,
*accumulating* the gradient of every node (a tensor used twice receives the sum of both
contributions). As in PyTorch, a walk frees the graph it went through unless
``retain_graph=True``: each op's ``backward`` closure, and the arrays it saved, are
dropped, and a second walk through the same ops raises a ``RuntimeError`` saying so.

* :func:`backward` -- ``torch.autograd.backward``: adds into ``leaf.grad``;
* :func:`grad` -- ``torch.autograd.grad``: returns d(outputs)/d(inputs) and leaves
  every ``.grad`` untouched. There is no ``create_graph`` (no higher derivatives).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook.autograd.sparse import RowSparse

if TYPE_CHECKING:
    from rowbook.autograd.tensor import Gradient, Tensor

__all__ = ["backward", "grad"]

FREED = (
    "Trying to backward through the graph a second time (or to reach saved arrays after "
    "they were freed): the saved arrays of {op!r} were freed by the first backward() or "
    "grad(). Specify retain_graph=True on the first call if you need to backward through "
    "the graph a second time."
)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Any | Sequence[Any] | None = None,
    retain_graph: bool = False,
) -> None:
    """Accumulate d(sum of ``tensors``)/d(leaf) into ``leaf.grad`` for every leaf that needs it.

    ``grad_tensors`` gives one seed gradient per tensor (``None``: ones, for a
    single-element tensor). The graph is freed afterwards unless ``retain_graph``.
    """
    roots, seeds = _roots_and_seeds(tensors, grad_tensors, "backward")
    _walk(roots, seeds, retain_graph, capture=None)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any | Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    allow_unused: bool = False,
) -> tuple[Gradient | None, ...]:
    """Gradients of ``outputs`` (seeded by ``grad_outputs``) with respect to ``inputs``.

    As ``torch.autograd.grad``: one gradient per input, nothing written to any ``.grad``;
    the graph is freed unless ``retain_graph=True`` (``None`` means False here, as
    there is no ``create_graph``). An input the outputs do not depend on raises, unless
    ``allow_unused=True`` (its gradient is then ``None``). A sparse embedding table's
    gradient comes back as a :class:`~rowbook.autograd.RowSparse`.

    Examples
    --------
    >>> from rowbook.autograd import Tensor
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = grad((x * x).sum(), x)
    >>> g, x.grad
    (array([2., 4.], dtype=float32), None)
    """
    roots, seeds = _roots_and_seeds(outputs, grad_outputs, "grad")
    wanted = [inputs] if not isinstance(inputs, Sequence) else list(inputs)
    for i, tensor in enumerate(wanted):
        if not tensor.requires_grad:
            raise RuntimeError(f"grad: input {i} does not require grad, so it has no gradient")
    captured: dict[int, Gradient] = {id(t): None for t in wanted}
    _walk(roots, seeds, bool(retain_graph), capture=captured)
    result = tuple(captured[id(t)] for t in wanted)
    unused = [i for i, g in enumerate(result) if g is None]
    if unused and not allow_unused:
        raise RuntimeError(
            f"grad: input {unused[0]} was not used to compute the outputs; "
            "pass allow_unused=True to get None for it"
        )
    return result


def _roots_and_seeds(
    tensors: Tensor | Sequence[Tensor], seeds: Any, caller: str
) -> tuple[list[Tensor], list[np.ndarray]]:
    single = not isinstance(tensors, Sequence)  # one tensor: its seed may be a list of numbers
    roots = [tensors] if single else list(tensors)
    seeds = [seeds] if single or seeds is None else list(seeds)
    if len(seeds) == 1 and seeds[0] is None:
        seeds = seeds * len(roots)
    if len(seeds) != len(roots):
        raise ValueError(f"{caller}: got {len(seeds)} gradients for {len(roots)} outputs")
    return roots, [_seed(root, seed, caller) for root, seed in zip(roots, seeds, strict=True)]


def _seed(root: Tensor, seed: Any, caller: str) -> np.ndarray:
    if not root.requires_grad:
        raise RuntimeError(
            f"{caller}() called on a tensor that does not require grad: no parameter "
            "with requires_grad=True contributed to it (or it was made under no_grad())"
        )
    if seed is None:
        if root.data.size != 1:
            raise ValueError(
                f"{caller}() without a gradient needs a single-element tensor, got shape "
                f"{root.shape}; pass the gradient with the same shape or reduce to a scalar first"
            )
        return np.ones_like(root.data)
    seed = np.asarray(getattr(seed, "data", seed), dtype=root.dtype)
    if seed.shape != root.shape:
        raise ValueError(f"grad has shape {seed.shape}, expected {root.shape}")
    return seed


def _walk(
    roots: list[Tensor],
    seeds: list[np.ndarray],
    retain_graph: bool,
    capture: dict[int, Gradient | None] | None,
) -> None:
    """Propagate ``seeds`` from ``roots``; into leaves, or into ``capture`` for its ids."""
    from rowbook.autograd.tensor import _add_grads

    grads: dict[int, Gradient] = {}
    for root, seed in zip(roots, seeds, strict=True):
        grads[id(root)] = seed if id(root) not in grads else _add_grads(grads[id(root)], seed)
    adopted: set[int] = {id(s) for s in seeds}  # arrays a leaf must copy rather than adopt
    for node in reversed(_topological_order(roots)):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        if capture is not None and id(node) in capture:
            capture[id(node)] = g.copy() if id(g) in adopted else g
        if node._backward is None:
            if capture is None:
                node._accumulate_leaf(g, adopted)
            continue
        if isinstance(g, RowSparse):
            g = g.to_dense()
        parent_grads = node._backward(g)
        if not retain_graph:
            node._backward = _freed(node._op)
        for parent, pg in zip(node._parents, parent_grads, strict=True):
            if pg is None or not parent.requires_grad:
                continue
            key = id(parent)
            grads[key] = pg if key not in grads else _add_grads(grads[key], pg)


def _freed(op: str) -> Any:
    def freed(_: np.ndarray) -> None:
        raise RuntimeError(FREED.format(op=op or "op"))

    return freed


def _topological_order(roots: list[Tensor]) -> list[Tensor]:
    """Nodes reachable from the roots, parents before children (iterative: deep graphs are fine)."""
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False) for root in reversed(roots)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in node._parents if id(p) not in visited)
    return order
