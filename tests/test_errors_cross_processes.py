"""rowbook's errors cross a worker's pipe whole: a forked worker's error is pickled to the
parent, and one that cannot be rebuilt there killed the pool's result thread and left the
caller waiting for ever (a CI hang: ``ParameterHint`` raised in a corpus-reading worker)."""

from __future__ import annotations

import pickle

import pytest

from rowbook.checks import (
    EmptyInputError,
    InputIndexError,
    InputTypeError,
    NotFittedError,
    ParameterError,
    ParameterHint,
    UnknownKeyError,
)
from rowbook.data.spill_folder import SpillSpaceError
from rowbook.training import TrainingDiverged

ERRORS = [
    ParameterError("window", 0, "an integer >= 1", owner="Word2Vec", fix="pass window=5"),
    ParameterHint("errors", "replace", "a.txt: invalid UTF-8 at byte 3", effect="to go on"),
    SpillSpaceError("needs 5 MB in /tmp, 1 MB free"),
    EmptyInputError("corpus a.txt is empty"),
    InputTypeError("keys are str"),
    UnknownKeyError("no key 'x'"),
    InputIndexError("row 9 of 3"),
    NotFittedError("fit first"),
    TrainingDiverged("loss is nan"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_is_the_same_error_after_a_pipe(error):
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    if isinstance(error, ParameterError | SpillSpaceError):
        assert again.message_for("--flag") == error.message_for("--flag")


def test_a_worker_that_fails_with_a_hint_reaches_the_caller(tmp_path, monkeypatch):
    from rowbook.data import scan
    from rowbook.data.corpus import read_corpus

    monkeypatch.setattr(scan, "MIN_PART_BYTES", 64)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"the cat sat\n" * 200 + b"bad \xff byte\n" + b"ok line\n" * 2000)
    for _ in range(5):  # the bad part lands in a worker in some of these runs
        with pytest.raises(ParameterHint, match="errors='replace'"):
            read_corpus(path, workers=2)
