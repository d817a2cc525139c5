"""Progress on standard error: a bar on a terminal, plain epoch lines otherwise, one quantity."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from rowbook._progress import ProgressBar
from rowbook.models.word_vectors.jobs import ProgressReporter
from rowbook.models.word_vectors.state import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_one_line_per_epoch_with_time_left():
    out = io.StringIO()
    bar = ProgressBar(30, unit="batch", file=out)
    for epoch in (1, 2, 3):
        bar.update(10, {"loss": 0.5})
        bar.epoch_done(epoch, 3, {"loss": 0.5, "val_loss": math.nan}, seconds=2.0)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "epoch 1/3: loss 0.5 (2.0 s, about 4 s left)",
        "epoch 2/3: loss 0.5 (2.0 s, about 2 s left)",
        "epoch 3/3: loss 0.5 (2.0 s)",
    ]


def test_on_a_terminal_a_bar_and_nothing_when_hidden():
    term = Terminal()
    bar = ProgressBar(20, unit="batch", file=term, unit_scale=False)
    bar.update(20, {"loss": 0.25})
    bar.close()
    assert "20/20" in term.getvalue() and "loss 0.25" in term.getvalue()
    quiet = Terminal()
    hidden = ProgressBar(20, unit="batch", show=False, file=quiet)
    hidden.update(20)
    hidden.epoch_done(1, 1, {"loss": 1.0}, 1.0)
    hidden.note("resumed")
    assert quiet.getvalue() == ""


def test_progress_records_print_plain_numbers_and_skip_a_loss_not_computed():
    p = Progress(
        np.int64(2), 5, np.int64(1000), 4000, np.float64(2500.0), np.float64("nan"), 0.02, 0.4
    )
    assert type(p.words) is int and type(p.learning_rate) is float
    assert "np." not in repr(p) and "loss" not in repr(p)
    assert "loss=1.5" in repr(Progress(1, 1, 10, 10, 1.0, np.float64(1.5), 0.1, 1.0))


@pytest.mark.parametrize("mean_loss", [False, True])
def test_one_quantity_on_the_bar_in_the_line_and_in_the_record(monkeypatch, mean_loss):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    reporter = ProgressReporter(1, 30, show=True, callback=None, unit="record", mean_loss=mean_loss)
    reporter.start_epoch()
    for cost in (3.0, 6.0, 9.0):  # three jobs of 10 records
        reporter.job_done(10, cost, 0.05)
    progress = reporter.end_epoch(0)
    reporter.close()
    expected = 18.0 / 30 if mean_loss else 18.0
    assert progress.loss == pytest.approx(expected)
    assert f"loss {expected:.4g}, lr 0.05" in err.getvalue()
    assert "records/s" in err.getvalue()
