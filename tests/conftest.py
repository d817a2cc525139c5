"""Fixtures shared across test folders: the ``fasttext`` package as an oracle; and the one
hypothesis profile every property test runs under.

No hypothesis deadlines: a deadline is a timing assertion, and on a shared or busy machine a
first example that compiles a kernel took 15 s where 10 s were allowed. Timing belongs to
``benchmarks/``; a hang is caught by the time limit of the process that runs the tests
(the hostile suite's child has one).
"""

from __future__ import annotations

import pytest
from hypothesis import settings

settings.register_profile("rowbook", deadline=None)
settings.load_profile("rowbook")


@pytest.fixture(scope="session")
def train_fasttext():
    """``train(path, **settings)``: ``fasttext.train_unsupervised``, quiet, on ten threads.

    Ten because fastText's ``DenseMatrix::uniform`` initialises the input table in ten
    blocks, one per thread: with fewer threads the rows past ``thread / 10`` of the table
    keep whatever memory held (values like 1e18, or NaN: "Encountered NaN."), which makes
    comparisons at 1e-6 meaningless. Even with ten, the last ``rows * dim % 10`` values stay
    unset, so comparisons allow a relative 1e-6 too (float32 means of values near 1e19). Training on ten threads is not repeatable, which the
    tests do not need: they compare rowbook's reading of a saved model with fastText's. A
    run that still stops on NaN is retried.
    """
    fasttext = pytest.importorskip("fasttext")

    def train(path, **settings):
        for _ in range(4):
            try:
                return fasttext.train_unsupervised(str(path), thread=10, verbose=0, **settings)
            except RuntimeError as err:
                if "NaN" not in str(err):
                    raise
        return fasttext.train_unsupervised(str(path), thread=10, verbose=0, **settings)

    return train
