"""SGD: plain gradient descent, with optional momentum, Nesterov momentum and weight decay.

With momentum ``mu`` and dampening ``tau`` (PyTorch's formulation)::

    b <- g                          (first step)
    b <- mu b + (1 - tau) g         (later steps)
    p <- p - lr b                   (or p - lr (g + mu b) with nesterov=True)

Row-sparse gradients follow PyTorch 2.13 exactly:

* without momentum only the named rows move, in time proportional to them;
* with momentum the result equals the dense computation (every row whose buffer is
  non-zero keeps decaying and moving), as PyTorch's sparse momentum buffer does, so a
  step costs time proportional to the rows seen *so far*, not to the batch; use
  :class:`~rowbook.optim.SparseAdam` or :class:`~rowbook.optim.Adagrad` for a lazy
  adaptive update;
* ``weight_decay`` is refused with a row-sparse gradient (PyTorch raises too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.autograd.sparse import RowSparse
from rowbook.checks import check_number
from rowbook.optim.optimizer import Gradient, Optimizer, ParamsT

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (Robbins & Monro, 1951), with momentum (Polyak, 1964).

    Parameters
    ----------
    params, row_stats
        As for every :class:`~rowbook.optim.Optimizer`.
    lr : float, >= 0
    momentum : float, >= 0
    dampening : float
        Scales the new gradient in the momentum average by ``1 - dampening``.
    weight_decay : float, >= 0
        Adds ``weight_decay * p`` to dense gradients (refused for row-sparse ones).
    nesterov : bool
        Nesterov momentum (Sutskever et al., 2013); needs ``momentum > 0`` and
        ``dampening == 0``.

    Examples
    --------
    >>> from rowbook.autograd.sparse import scatter_add_rows
    >>> from rowbook.nn import Parameter
    >>> table = Parameter(np.ones((3, 2)))
    >>> opt = SGD([table], lr=0.5)
    >>> table.grad = scatter_add_rows(np.array([0, 0]), np.ones((2, 2)), 3)  # row 0 twice
    >>> opt.step()
    >>> table.data
    array([[0., 0.],
           [1., 1.],
           [1., 1.]])
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        row_stats: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": bool(nesterov),
        }
        super().__init__(params, defaults, row_stats=row_stats)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_number("lr", group["lr"], 0.0, owner="SGD")
        check_number("momentum", group["momentum"], 0.0, owner="SGD")
        check_number("dampening", group["dampening"], owner="SGD")
        check_number("weight_decay", group["weight_decay"], 0.0, owner="SGD")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                f"SGD: nesterov=True needs momentum > 0 and dampening == 0, got "
                f"momentum={group['momentum']!r}, dampening={group['dampening']!r}"
            )

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        return {"momentum_buffer": param.shape}

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        if isinstance(grad, RowSparse):
            self._update_rows(param, grad, state, group)
            return
        t = param.dtype.type
        lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
        if wd != 0:
            grad = grad + t(wd) * param
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.copy()
            else:
                buf *= t(momentum)
                buf += t(1 - group["dampening"]) * grad
            state.pop("rows", None)  # the buffer may now be non-zero anywhere
            grad = grad + t(momentum) * buf if group["nesterov"] else buf
        param += t(-lr) * grad

    def _update_rows(
        self, param: np.ndarray, grad: RowSparse, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        if group["weight_decay"] != 0:
            raise ValueError(
                f"SGD: weight_decay={group['weight_decay']!r} cannot be used with a row-sparse "
                "gradient (PyTorch refuses it too); put the embedding table in its own param "
                "group with weight_decay=0"
            )
        t = param.dtype.type
        rows, g = grad.indices, grad.values  # (U,), (U, d)
        lr, momentum = group["lr"], group["momentum"]
        if momentum == 0:
            param[rows] += t(-lr) * g
            return
        buf = state.get("momentum_buffer")
        if buf is None:  # first step: the buffer is the gradient, zero elsewhere
            buf = state["momentum_buffer"] = np.zeros(param.shape, param.dtype)
            buf[rows] = g
            state["rows"] = rows.copy()
            live = rows
        else:
            # "rows" lists the rows whose buffer may be non-zero; absent means all rows
            live = np.union1d(state["rows"], rows) if "rows" in state else None
            b = buf[live] if live is not None else buf  # (L, d) copy, or the whole buffer
            b *= t(momentum)
            if live is not None:
                buf[live] = b
                state["rows"] = live
            buf[rows] += t(1 - group["dampening"]) * g
        nesterov = group["nesterov"]
        if live is None:  # the buffer is live everywhere: a dense step, as PyTorch's
            step = t(momentum) * buf if nesterov else buf
            if nesterov:
                step[rows] += g
            param += t(-lr) * step
            return
        step = t(momentum) * buf[live] if nesterov else buf[live]  # (L, d)
        if nesterov:
            step[np.searchsorted(live, rows)] += g
        param[live] += t(-lr) * step
