"""Several optimizers over disjoint parameters, stepped as one.

An embedding table looked up with ``sparse=True`` gets a row-sparse gradient, which
:class:`~rowbook.optim.SparseAdam` steps lazily (only the rows in the batch); the dense
layers after it need :class:`~rowbook.optim.Adam`. :class:`OptimizerChain` steps both as
one optimizer (``zero_grad``, ``step``, state), which is what the training loop expects.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OptimizerChain"]


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
                f"the saved state holds {len(state)} optimizers, this chain has "
                f"{len(self.optimizers)}"
            )
        for i, opt in enumerate(self.optimizers):
            opt.load_state_dict(state[str(i)])
