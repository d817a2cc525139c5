"""The optimizer choice shared by the text models: one table, the rest dense.

An embedding table looked up with ``sparse=True`` gets a row-sparse gradient, which
:class:`~rowbook.optim.SparseAdam` steps lazily (only the rows in the batch); the dense
layers after it need :class:`~rowbook.optim.Adam`. :class:`OptimizerChain` steps both
as one optimizer, which is what :class:`~rowbook.training.Trainer` expects.
"""

from __future__ import annotations

from typing import Any, Literal

from rowbook.nn.module import Module, Parameter
from rowbook.optim import SGD, Adam, SparseAdam

__all__ = ["DEFAULT_LR", "OptimizerChain", "OptimizerName", "build_optimizer", "sparse_table"]

OptimizerName = Literal["adam", "sgd", "sparse_adam"]
DEFAULT_LR = {"adam": 1e-2, "sparse_adam": 1e-2, "sgd": 0.1}


class OptimizerChain:
    """Several optimizers over disjoint parameters, used as one (``zero_grad``, ``step``, state)."""

    def __init__(self, *optimizers: Any) -> None:
        self.optimizers = optimizers

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad()

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()

    def state_dict(self) -> dict[str, Any]:
        return {str(i): opt.state_dict() for i, opt in enumerate(self.optimizers)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state) != len(self.optimizers):
            raise ValueError(
                f"the saved state holds {len(state)} optimizers, this chain has {len(self.optimizers)}"
            )
        for i, opt in enumerate(self.optimizers):
            opt.load_state_dict(state[str(i)])


def sparse_table(optimizer: OptimizerName) -> bool:
    """Whether the embedding lookup should produce row-sparse gradients for ``optimizer``.

    >>> sparse_table("sparse_adam"), sparse_table("adam")
    (True, False)
    """
    return optimizer in ("sgd", "sparse_adam")


def build_optimizer(optimizer: OptimizerName, net: Module, table: Parameter, lr: float) -> Any:
    """``Adam`` or ``SGD`` over every parameter, or ``SparseAdam`` (table) + ``Adam`` (rest)."""
    params = list(net.parameters())
    if optimizer == "adam":
        return Adam(params, lr=lr)
    if optimizer == "sgd":
        return SGD(params, lr=lr)
    rest = [p for p in params if p is not table]
    chain = [SparseAdam([table], lr=lr)]
    return OptimizerChain(*chain, Adam(rest, lr=lr)) if rest else chain[0]
