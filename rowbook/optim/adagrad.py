"""Adagrad and RowWiseAdagrad: steps scaled by the accumulated squared gradient.

Adagrad (Duchi, Hazan & Singer, 2011) keeps one accumulator per element::

    s <- s + g g
    p <- p - lr_t g / (sqrt(s) + eps),      lr_t = lr / (1 + (t - 1) lr_decay)

A row with no gradient adds nothing to its accumulator and does not move, so the
row-sparse step (PyTorch's sparse Adagrad) equals the dense one while touching only
the rows present.

RowWiseAdagrad keeps one accumulator per *row* of a table, as the embedding
optimizers of large recommendation systems do (FBGEMM's ``rowwise_adagrad``, used by
TorchRec), which cuts the optimizer state from ``V x d`` to ``V`` numbers. For a row
``r`` with gradient ``g_r`` of width ``D``::

    s_r <- s_r + mean_j(g_rj^2)              # the mean of the squared gradient
    p_r <- p_r - lr g_r / (sqrt(s_r) + eps)
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rowbook.autograd.sparse import RowSparse
from rowbook.checks import check_number
from rowbook.optim.optimizer import Gradient, Optimizer, ParamsT
from rowbook.optim.state import StateFactory

__all__ = ["Adagrad", "RowWiseAdagrad"]


class Adagrad(Optimizer):
    """Adagrad, dense or row-sparse, matching ``torch.optim.Adagrad``.

    Parameters
    ----------
    params, row_stats
        As for every :class:`~rowbook.optim.Optimizer`.
    lr : float, >= 0
    lr_decay : float, >= 0
        The step size at step ``t`` is ``lr / (1 + (t - 1) lr_decay)``.
    weight_decay : float, >= 0
        Adds ``weight_decay * p`` to dense gradients; refused for row-sparse ones,
        as PyTorch refuses it.
    initial_accumulator_value : float, >= 0
    eps : float, >= 0
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        row_stats: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "eps": eps,
        }
        super().__init__(params, defaults, row_stats=row_stats)
        self._init_all_states()  # the accumulators exist from the start, as in PyTorch

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_number(key, group[key], 0.0, owner="Adagrad")

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": 0,
            "sum": np.full(param.shape, group["initial_accumulator_value"], dtype=param.dtype),
        }

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        return {"sum": param.shape}

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        t = param.dtype.type
        wd, eps = group["weight_decay"], t(group["eps"])
        if wd != 0 and isinstance(grad, RowSparse):
            raise ValueError(
                f"Adagrad: weight_decay={wd!r} cannot be used with a row-sparse gradient "
                "(PyTorch refuses it too); put the embedding table in its own param group "
                "with weight_decay=0, or use RowWiseAdagrad, which decays the touched rows"
            )
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = state["sum"]
        if isinstance(grad, RowSparse):
            rows, g = grad.indices, grad.values  # (U,), (U, d)
            s = total[rows] + g * g
            total[rows] = s
            param[rows] += t(-clr) * (g / (np.sqrt(s) + eps))
            return
        if wd != 0:
            grad = grad + t(wd) * param
        total += grad * grad
        param += (t(-clr) * grad) / (np.sqrt(total) + eps)


class RowWiseAdagrad(Optimizer):
    """Adagrad with one accumulator per table row (FBGEMM / TorchRec ``rowwise_adagrad``).

    For a ``(V, d)`` table the state is one ``(V,)`` array: row ``r`` accumulates the
    mean over its ``d`` entries of the squared gradient, and every entry of the row is
    stepped with the same rate ``lr / (sqrt(s_r) + eps)``. Tables of more than two
    dimensions are viewed as ``(shape[0], -1)``; a 1-D parameter has one entry per row,
    which makes this plain :class:`Adagrad`.

    Row-sparse gradients update only the rows present, dense ones every row. Weight
    decay follows FBGEMM and applies to the rows being updated only:

    * ``weight_decay_mode="l2"``: ``g_r <- g_r + weight_decay p_r`` before everything
      (it enters the accumulator too);
    * ``weight_decay_mode="decoupled"``: ``p_r <- (1 - lr weight_decay) p_r - step``.

    Parameters
    ----------
    params, row_stats
        As for every :class:`~rowbook.optim.Optimizer`.
    lr : float, >= 0
    eps : float, >= 0
    weight_decay : float, >= 0
    weight_decay_mode : {"l2", "decoupled"}
    initial_accumulator_value : float, >= 0
    state_factory : callable, optional
        ``(name, shape, dtype) -> array`` for the ``(V,)`` accumulator (default: in RAM;
        :func:`~rowbook.optim.state.memmap_factory` puts it on disk).
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        eps: float = 1e-10,
        weight_decay: float = 0.0,
        weight_decay_mode: Literal["l2", "decoupled"] = "l2",
        initial_accumulator_value: float = 0.0,
        *,
        state_factory: StateFactory | None = None,
        row_stats: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "eps": eps,
            "weight_decay": weight_decay,
            "weight_decay_mode": weight_decay_mode,
            "initial_accumulator_value": initial_accumulator_value,
        }
        self.state_factory = state_factory
        super().__init__(params, defaults, row_stats=row_stats)
        self._init_all_states()

    def _check_group(self, group: dict[str, Any]) -> None:
        for key in ("lr", "eps", "weight_decay", "initial_accumulator_value"):
            check_number(key, group[key], 0.0, owner="RowWiseAdagrad")
        if group["weight_decay_mode"] not in ("l2", "decoupled"):
            raise ValueError(
                f"RowWiseAdagrad: weight_decay_mode={group['weight_decay_mode']!r} is not one "
                "of 'l2', 'decoupled'"
            )

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        rows = param.shape[0] if param.ndim else 1
        return {
            "sum": self._state_array(
                "sum", (rows,), param.dtype, group["initial_accumulator_value"]
            )
        }

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        return {"sum": (param.shape[0] if param.ndim else 1,)}

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        t = param.dtype.type
        table = param.reshape(state["sum"].shape[0], -1)  # (V, D) view
        if isinstance(grad, RowSparse):
            rows: np.ndarray | slice = grad.indices
            g = grad.values.reshape(grad.nnz, table.shape[1])  # (U, D)
        else:
            rows, g = slice(None), grad.reshape(table.shape)
        lr, wd = group["lr"], group["weight_decay"]
        l2 = wd != 0 and group["weight_decay_mode"] == "l2"
        w = table[rows]  # (U, D)
        g_eff = g + t(wd) * w if l2 else g
        mean_sq = np.einsum("ij,ij->i", g_eff, g_eff) / t(table.shape[1])  # (U,)
        s = state["sum"][rows] + mean_sq
        state["sum"][rows] = s
        multiplier = (t(lr) / (np.sqrt(s) + t(group["eps"])))[:, None]  # (U, 1)
        if wd == 0:
            correction = t(1)
        elif l2:
            correction = t(1) - multiplier * t(wd)
        else:
            correction = t(1 - lr * wd)
        table[rows] = correction * w - multiplier * g
        if not np.shares_memory(table, param):  # reshape had to copy a strided parameter
            param[...] = table.reshape(param.shape)
