"""EmbeddingTable: a table of V rows of d floats, looked up by id, with its backward by hand.

The whole of an embedding layer in plain Python lists. Looking up id ``i`` copies row
``i``; that is the product ``one_hot(i) @ E``, computed without the multiplications by
zero. The gradient of that product with respect to ``E`` is ``one_hot(ids).T @ G``: the
gradient ``G[k]`` of position ``k`` lands in row ``ids[k]``, and every other row gets
nothing. So :meth:`EmbeddingTable.backward` is a loop that adds each position's gradient
into its row: an id that appears twice receives the sum of both (the scatter-*add*;
``rowbook.autograd.sparse.scatter_add_rows`` is the same loop on arrays). The table keeps
the set of rows it touched, so :meth:`~EmbeddingTable.step` and
:meth:`~EmbeddingTable.zero_grad` visit those rows only: the sparse update that lets a
table of millions of rows train one batch at a time.

Examples
--------
>>> table = EmbeddingTable(5, 2, seed=0)
>>> table.weight = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]
>>> table.lookup([3, 1, 3])
[[3.0, 3.0], [1.0, 1.0], [3.0, 3.0]]
>>> table.backward([3, 1, 3], [[0.5, 0.0], [1.0, 1.0], [0.25, 2.0]])   # id 3 twice: summed
>>> table.grad[3], table.grad[1], sorted(table.touched)
([0.75, 2.0], [1.0, 1.0], [1, 3])
>>> table.step(lr=1.0)                 # only rows 1 and 3 move
>>> table.weight
[[0.0, 0.0], [0.0, 0.0], [2.0, 2.0], [2.25, 1.0], [4.0, 4.0]]
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["EmbeddingTable"]


class EmbeddingTable:
    """``num_embeddings`` rows of ``embedding_dim`` floats, from a seeded N(0, std^2).

    Parameters
    ----------
    num_embeddings
        V, the number of rows (ids ``0 .. V-1``).
    embedding_dim
        d, the length of each row.
    std
        standard deviation of the initial values (1.0, PyTorch's ``nn.Embedding``).
    seed
        seed of Python's :class:`random.Random` that draws them, row by row.
    padding_idx
        a row set to zeros that never receives a gradient (``None``: no such row).

    Attributes
    ----------
    weight
        ``V`` lists of ``d`` floats, the table ``E``.
    grad
        ``V`` lists of ``d`` floats, ``dLoss / dE``, accumulated by :meth:`backward`.
    touched
        the ids whose ``grad`` row :meth:`backward` has added to since :meth:`zero_grad`.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        *,
        std: float = 1.0,
        seed: int = 0,
        padding_idx: int | None = None,
    ) -> None:
        for name, value in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if padding_idx is not None and not 0 <= padding_idx < num_embeddings:
            raise ValueError(
                f"padding_idx must be None or an id in [0, {num_embeddings}), got {padding_idx!r}"
            )
        rng = random.Random(seed)
        self.weight = [
            [rng.gauss(0.0, std) for _ in range(embedding_dim)] for _ in range(num_embeddings)
        ]
        self.grad = [[0.0] * embedding_dim for _ in range(num_embeddings)]
        self.padding_idx = padding_idx
        if padding_idx is not None:
            self.weight[padding_idx] = [0.0] * embedding_dim
        self.touched: set[int] = set()

    def lookup(self, ids: Sequence[int]) -> list[list[float]]:
        """A copy of row ``ids[k]`` for each position ``k``: ``len(ids)`` lists of ``d`` floats.

        Copies, so changing a looked-up row never changes the table.
        """
        return [list(self.weight[self._check(i)]) for i in ids]

    def backward(self, ids: Sequence[int], grads: Sequence[Sequence[float]]) -> None:
        """Add ``grads[k]`` (``dLoss / d lookup(ids)[k]``) into ``grad[ids[k]]`` for every ``k``.

        ``dE = one_hot(ids).T @ grads``: rows looked up twice get the sum; rows not looked
        up get nothing, and neither does ``padding_idx``.
        """
        if len(ids) != len(grads):
            raise ValueError(
                f"backward needs one gradient row per id: {len(ids)} ids, {len(grads)} rows"
            )
        for i, g in zip(ids, grads, strict=True):
            if self._check(i) == self.padding_idx:
                continue
            row = self.grad[i]
            for k, g_k in enumerate(g):
                row[k] += g_k  # add, never assign: a repeated id sums
            self.touched.add(i)

    def zero_grad(self) -> None:
        """Set the gradient rows touched since the last call back to zero."""
        for i in self.touched:
            self.grad[i] = [0.0] * len(self.grad[i])
        self.touched.clear()

    def step(self, lr: float) -> None:
        """Plain SGD on the touched rows: ``E[i] <- E[i] - lr * grad[i]``."""
        for i in self.touched:
            row, g = self.weight[i], self.grad[i]
            for k in range(len(row)):
                row[k] -= lr * g[k]

    def _check(self, i: int) -> int:
        if not 0 <= i < len(self.weight):
            raise IndexError(f"id {i!r} is outside the table's {len(self.weight)} rows")
        return i
