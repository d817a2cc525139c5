"""Fixtures shared across test folders: the ``fasttext`` package as an oracle."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def train_fasttext():
    """``train(path, **settings)``: ``fasttext.train_unsupervised`` on one thread, quiet.

    On corpora of a few thousand tokens the fasttext-numpy2 wheel sometimes stops with
    "Encountered NaN." and the same call succeeds when repeated (one thread and a fixed
    seed do not make its training repeatable), so a failed run is retried a few times.
    """
    fasttext = pytest.importorskip("fasttext")

    def train(path, **settings):
        for _ in range(4):
            try:
                return fasttext.train_unsupervised(str(path), thread=1, verbose=0, **settings)
            except RuntimeError as err:
                if "NaN" not in str(err):
                    raise
        return fasttext.train_unsupervised(str(path), thread=1, verbose=0, **settings)

    return train
