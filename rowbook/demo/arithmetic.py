"""What one-hot rows cost against a lookup table: the arithmetic the chapters state.

For ``T`` tokens, a vocabulary of ``V`` and rows of ``d`` numbers:

* the one-hot matrix holds ``T x V`` numbers, ``T`` of them ones: a density of ``1 / V``;
* stored as float32 it takes ``T x V x 4`` bytes (1,000 tokens at V = 128,000: 512 MB);
* multiplying it by the table ``E`` (V, d) costs ``T x V x d`` multiply-adds, all but
  ``T x d`` of them by zero; the lookup ``E[ids]`` copies those ``T x d`` numbers and
  multiplies nothing;
* the table itself has ``V x d`` parameters.

Examples
--------
>>> cost = one_hot_cost(tokens=6, vocab_size=7, dim=4)
>>> cost.numbers, cost.ones, f"{cost.density:.1%}", cost.multiply_adds, cost.wasted
(42, 6, '14.3%', 168, 144)
>>> one_hot_cost(tokens=1_000, vocab_size=128_000).nbytes
512000000
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook.checks import check_int

__all__ = ["OneHotCost", "one_hot_cost"]


@dataclass(frozen=True)
class OneHotCost:
    """The cost of ``tokens`` one-hot rows of width ``vocab_size`` against a ``(V, dim)`` table.

    ``wasted`` counts the multiply-adds whose one-hot factor is zero: ``T x (V - 1) x d``.
    """

    tokens: int
    vocab_size: int
    dim: int
    itemsize: int

    @property
    def numbers(self) -> int:
        """Numbers in the one-hot matrix, ``T x V``."""
        return self.tokens * self.vocab_size

    @property
    def ones(self) -> int:
        """Its ones: one per token."""
        return self.tokens

    @property
    def density(self) -> float:
        """The share of ones, ``1 / V``."""
        return self.ones / self.numbers

    @property
    def nbytes(self) -> int:
        """Bytes to store the one-hot matrix, ``T x V x itemsize``."""
        return self.numbers * self.itemsize

    @property
    def multiply_adds(self) -> int:
        """Multiply-adds of ``one_hot @ E``, ``T x V x d``."""
        return self.numbers * self.dim

    @property
    def wasted(self) -> int:
        """Those with a zero one-hot factor, ``T x (V - 1) x d``."""
        return self.multiply_adds - self.copied

    @property
    def copied(self) -> int:
        """Numbers the lookup ``E[ids]`` copies (and multiplies nothing), ``T x d``."""
        return self.tokens * self.dim

    @property
    def table_parameters(self) -> int:
        """Parameters of the table ``E``, ``V x d``."""
        return self.vocab_size * self.dim


def one_hot_cost(tokens: int, vocab_size: int, dim: int = 0, dtype: Any = np.float32) -> OneHotCost:
    """:class:`OneHotCost` of ``tokens`` one-hot rows over ``vocab_size``, a table of ``dim``."""
    check_int("tokens", tokens, 1)
    check_int("vocab_size", vocab_size, 1)
    check_int("dim", dim, 0)
    return OneHotCost(tokens, vocab_size, dim, np.dtype(dtype).itemsize)
