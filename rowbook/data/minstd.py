"""fastText's random numbers: ``std::minstd_rand`` and libstdc++'s distributions over it.

fastText draws everything from ``std::minstd_rand`` (Park and Miller's "minimal standard"
generator, ``x <- 48271 x mod (2**31 - 1)``, returning the new ``x``), one per thread
seeded ``threadId + seed`` and one per block of the initial input table, through three
distributions whose results are fixed by libstdc++'s code (the C++ standard leaves them
open; these are GCC's ``bits/random.tcc``):

* ``uniform_real_distribution<double>(a, b)``: ``generate_canonical<double, 53>``, which
  takes two draws (31 bits each cover 53), low part first,
  ``u = ((x1 - 1) + (x2 - 1) R) / R**2`` with ``R = 2**31 - 2`` in float64 (a result of 1
  becomes the float64 below 1), then ``u (b - a) + a``;
* ``uniform_int_distribution(a, b)``: the generator's range ``2**31 - 3`` cut into
  ``b - a + 1`` equal parts of ``scaling`` values each, a draw past the last whole part
  rejected and drawn again, the value ``(x - 1) // scaling + a``.

The state is a plain int64 and every function returns the new one, as
:func:`rowbook.data.sampling.lcg_next` does for word2vec's generator.

Examples
--------
>>> state = minstd_seed(0)  # seed 0 is replaced by 1, as the C++ engine does
>>> int(minstd_next(state))
48271
>>> u, state = uniform_real(state, 0.0, 1.0)  # the first two draws
>>> round(u, 6)
0.085032
>>> value, state = uniform_int(state, 1, 5)
>>> int(value)
4
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "MINSTD_MODULUS",
    "minstd_next",
    "minstd_seed",
    "uniform_canonical",
    "uniform_int",
    "uniform_real",
]

MINSTD_MODULUS = 2147483647
_MULTIPLIER = 48271
_RANGE = 2147483646.0  # max - min + 1 of the generator's outputs 1 .. 2**31 - 2
_RANGE_SQUARED = _RANGE * _RANGE  # float64, as libstdc++ rounds it
_BELOW_ONE = 1.0 - 2.0**-53
_INT_RANGE = MINSTD_MODULUS - 3  # max - min: uniform_int_distribution's generator range


@numba.njit(nogil=True, cache=True, inline="always")
def minstd_seed(seed):  # pragma: no cover - compiled
    """The engine's state after ``std::minstd_rand(seed)``: ``seed mod (2**31 - 1)``, 0 made 1."""
    state = np.int64(seed) % MINSTD_MODULUS
    return np.int64(1) if state == 0 else state


@numba.njit(nogil=True, cache=True, inline="always")
def minstd_next(state):  # pragma: no cover - compiled
    """One step of ``std::minstd_rand``; the new state is the value drawn (1 .. 2**31 - 2)."""
    return (state * _MULTIPLIER) % MINSTD_MODULUS


@numba.njit(nogil=True, cache=True, inline="always")
def uniform_canonical(state):  # pragma: no cover - compiled
    """``std::generate_canonical<double, 53>``: a float64 in ``[0, 1)`` from two draws."""
    low = minstd_next(state)
    high = minstd_next(low)
    total = np.float64(low - 1) + np.float64(high - 1) * _RANGE
    u = total / _RANGE_SQUARED
    return (u if u < 1.0 else _BELOW_ONE), high


@numba.njit(nogil=True, cache=True, inline="always")
def uniform_real(state, a, b):  # pragma: no cover - compiled
    """``std::uniform_real_distribution<double>(a, b)``: ``canonical * (b - a) + a``."""
    u, state = uniform_canonical(state)
    return u * (np.float64(b) - np.float64(a)) + np.float64(a), state


@numba.njit(nogil=True, cache=True, inline="always")
def uniform_int(state, a, b):  # pragma: no cover - compiled
    """``std::uniform_int_distribution(a, b)`` (``b - a < 2**31 - 3``): scale down, reject the rest."""
    parts = np.int64(b) - np.int64(a) + 1
    scaling = _INT_RANGE // parts
    past = parts * scaling
    while True:
        state = minstd_next(state)
        if state - 1 < past:
            return (state - 1) // scaling + a, state
