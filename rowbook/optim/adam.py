"""Adam, AdamW and SparseAdam: adaptive moments, dense and lazy row-sparse.

Adam (Kingma & Ba, 2015) keeps, per element, running averages of the gradient ``m``
and of its square ``v`` and steps by ``m / sqrt(v)`` after correcting both for their
zero start. AdamW (Loshchilov & Hutter, 2019) shrinks the weights directly instead
of adding ``weight_decay * p`` to the gradient. SparseAdam is PyTorch's lazy variant
for row-sparse gradients: only the rows present in the gradient have their moments
and weights updated, so a step costs time proportional to those rows, not to the
table. Its bias correction uses the parameter's step count, as PyTorch's does.

The arithmetic lives in :mod:`rowbook.optim.adam_kernels` (NumPy references and the
fused kernels held to them).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rowbook.autograd.sparse import RowSparse
from rowbook.checks import check_number
from rowbook.optim.adam_kernels import adam_dense, adam_rows
from rowbook.optim.optimizer import Gradient, Optimizer, ParamsT
from rowbook.optim.state import StateFactory, lazy_zeros

__all__ = ["Adam", "AdamW", "SparseAdam"]


def _check_betas(owner: str, group: dict[str, Any]) -> None:
    betas = group["betas"]
    if len(betas) != 2:
        raise ValueError(f"{owner}: betas must be a pair (beta1, beta2), got {betas!r}")
    for i, beta in enumerate(betas):
        check_number(f"betas[{i}]", beta, 0.0, 1.0, high_open=True, owner=owner)
    group["betas"] = (float(betas[0]), float(betas[1]))


class Adam(Optimizer):
    """Adam; with ``weight_decay`` the L2 term ``weight_decay * p`` joins the gradient.

    Parameters
    ----------
    params, row_stats
        As for every :class:`~rowbook.optim.Optimizer`.
    lr : float, >= 0
    betas : (float, float), each in [0, 1)
        Decay rates of the first and second moment averages.
    eps : float, >= 0
        Added to ``sqrt(v_hat)`` in the denominator.
    weight_decay : float, >= 0
    amsgrad : bool
        Divide by the running maximum of ``v`` instead of ``v`` (Reddi et al., 2018).

    Notes
    -----
    Row-sparse gradients are refused: use :class:`SparseAdam` for them. With ``row_stats``,
    a row counts as updated when its dense gradient is not all zero.

    Examples
    --------
    >>> from rowbook.nn import Parameter
    >>> w = Parameter(np.array([1.0, -1.0]))
    >>> opt = Adam([w], lr=0.1)
    >>> w.grad = np.array([0.5, -2.0])
    >>> opt.step()
    >>> w.data  # the first step moves every element by lr against its gradient's sign
    array([ 0.9, -0.9])
    """

    sparse_alternative: ClassVar[str | None] = "SparseAdam"
    _decoupled: ClassVar[bool] = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        row_stats: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": bool(amsgrad),
        }
        super().__init__(params, defaults, row_stats=row_stats)

    def _check_group(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        check_number("lr", group["lr"], 0.0, owner=name)
        _check_betas(name, group)
        check_number("eps", group["eps"], 0.0, owner=name)
        check_number("weight_decay", group["weight_decay"], 0.0, owner=name)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        state: dict[str, Any] = {
            "step": 0,
            "exp_avg": np.zeros(param.shape, param.dtype),
            "exp_avg_sq": np.zeros(param.shape, param.dtype),
        }
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = np.zeros(param.shape, param.dtype)
        return state

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        return dict.fromkeys(("exp_avg", "exp_avg_sq", "max_exp_avg_sq"), param.shape)

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        assert isinstance(grad, np.ndarray)
        state["step"] += 1
        max_sq = None
        if group["amsgrad"]:
            max_sq = state.setdefault("max_exp_avg_sq", np.zeros(param.shape, param.dtype))
        beta1, beta2 = group["betas"]
        adam_dense(
            param,
            grad,
            state["exp_avg"],
            state["exp_avg_sq"],
            max_sq,
            step=state["step"],
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled=self._decoupled,
        )


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p <- p (1 - lr weight_decay)`` before the step.

    Same parameters as :class:`Adam`, with ``weight_decay`` defaulting to ``1e-2``.
    """

    _decoupled: ClassVar[bool] = True

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        row_stats: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, row_stats=row_stats)


class SparseAdam(Optimizer):
    """Lazy Adam for row-sparse gradients (``Embedding(sparse=True)``), as in PyTorch.

    Only the rows named by the gradient change: their ``m`` and ``v`` are updated and
    the weights stepped; every other row, and its moments, stays as it was. The bias
    correction uses ``t``, the number of steps this parameter has taken (rows that
    were absent do not keep their own count), and ``eps`` is added to ``sqrt(v)``
    before that correction rather than after, both as in PyTorch. Dense gradients are
    refused: use :class:`Adam` for them.

    The moments are allocated with ``np.zeros``, which maps memory lazily: rows never
    touched cost no memory, and the first steps pay for zeroing the pages they reach.

    Parameters
    ----------
    params, row_stats
        As for every :class:`~rowbook.optim.Optimizer`.
    lr : float, > 0
    betas : (float, float), each in [0, 1)
    eps : float, > 0
    state_factory : callable, optional
        ``(name, shape, dtype) -> array`` for the two moment tables. By default they are
        :func:`~rowbook.optim.state.lazy_zeros`: only pages of rows that were looked up
        become resident. :func:`~rowbook.optim.state.memmap_factory` keeps them on disk,
        for tables larger than RAM (then each step reads and writes the touched rows only).

    Examples
    --------
    >>> from rowbook.autograd.sparse import scatter_add_rows
    >>> from rowbook.nn import Parameter
    >>> table = Parameter(np.zeros((4, 2)))
    >>> opt = SparseAdam([table], lr=0.1)
    >>> table.grad = scatter_add_rows(np.array([2, 0, 2]), np.ones((3, 2)), 4)
    >>> opt.step()
    >>> table.data  # rows 1 and 3 were not looked up: untouched
    array([[-0.1, -0.1],
           [ 0. ,  0. ],
           [-0.1, -0.1],
           [ 0. ,  0. ]])
    """

    dense_alternative: ClassVar[str | None] = "Adam"

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        *,
        state_factory: StateFactory | None = None,
        row_stats: bool = False,
    ) -> None:
        self.state_factory = state_factory or lazy_zeros
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps}, row_stats=row_stats)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_number("lr", group["lr"], 0.0, low_open=True, owner="SparseAdam")
        _check_betas("SparseAdam", group)
        check_number("eps", group["eps"], 0.0, low_open=True, owner="SparseAdam")

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": 0,
            "exp_avg": self._state_array("exp_avg", param.shape, param.dtype),
            "exp_avg_sq": self._state_array("exp_avg_sq", param.shape, param.dtype),
        }

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        return dict.fromkeys(("exp_avg", "exp_avg_sq"), param.shape)

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        assert isinstance(grad, RowSparse)
        state["step"] += 1  # counted even for an empty gradient, as in PyTorch
        if grad.nnz == 0:
            return
        beta1, beta2 = group["betas"]
        adam_rows(
            param,
            grad.indices,
            grad.values,
            state["exp_avg"],
            state["exp_avg_sq"],
            step=state["step"],
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
        )
