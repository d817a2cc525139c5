"""Fixtures shared across test folders: the ``fasttext`` package as an oracle, a model file
rewritten as an older state version; and the one hypothesis profile every property test
runs under.

No hypothesis deadlines: a deadline is a timing assertion, and on a shared or busy machine a
first example that compiles a kernel took 15 s where 10 s were allowed. Timing belongs to
``benchmarks/``; a hang is caught by the time limit of the process that runs the tests
(the hostile suite's child has one).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("rowbook", deadline=None)
settings.load_profile("rowbook")


_TRAIN_IN_A_CHILD = """
import sys, fasttext
corpus, out, settings = sys.argv[1], sys.argv[2], eval(sys.argv[3])
fasttext.train_unsupervised(corpus, verbose=0, **{"thread": 10, **settings}).save_model(out)
"""


@pytest.fixture(scope="session")
def train_fasttext():
    """``train(path, **settings)``: ``fasttext.train_unsupervised`` in a child, on ten threads
    unless ``settings`` give ``thread``.

    Ten because fastText's ``DenseMatrix::uniform`` initialises the input table in ten
    blocks, one per thread: with fewer threads the rows past ``thread / 10`` of the table
    keep whatever memory held. Even with ten, the last ``rows * dim % 10`` values stay
    unset, so comparisons allow a relative 1e-6 too. Unset memory is why the model is
    trained in a fresh child process and read back from its saved ``.bin``: inside the
    long-lived test process the allocator hands fastText memory that earlier tests filled,
    NaN included, and every retry met the same NaN ("Encountered NaN." at fixture setup in
    CI); a new process starts from zeroed pages. A run that still stops on NaN is retried.
    Training on ten threads is not repeatable, which the tests do not need: they compare
    rowbook's reading of a saved model with fastText's.
    """
    fasttext = pytest.importorskip("fasttext")

    def train(path, **settings):
        out = Path(path).with_suffix(".fasttext.bin")
        command = [sys.executable, "-c", _TRAIN_IN_A_CHILD, str(path), str(out), repr(settings)]
        for _ in range(4):
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode == 0:
                return fasttext.load_model(str(out))
            if "NaN" not in run.stderr:
                break
        raise RuntimeError(f"fasttext.train_unsupervised failed in a child: {run.stderr[-2000:]}")

    return train


@pytest.fixture(scope="session")
def as_saved_by_version():
    """``rewrite(path, version=2)``: a word-vector model file as an older state version
    wrote it, the same fields with ``kernel="batched"`` (the default of versions 2 and 3;
    version 2's trained CBOW with the classic kernel), without FastText's ``redraw``
    (which files of those versions lack), and that version number."""
    from rowbook.io import load_state, save_state

    def rewrite(path: Path, version: int = 2) -> None:
        document = load_state(path, kind="model")
        document["state_version"] = version
        document["params"]["kernel"] = "batched"
        if version < 4:
            document["params"].pop("redraw", None)
        save_state(path, document, kind="model")

    return rewrite
