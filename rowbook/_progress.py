"""Training progress on standard error, by one rule for every trainer.

On a terminal, a tqdm bar counts the units of work (batches, corpus words, co-occurrence
records) with a rate and an ETA, and shows the latest metrics beside it. When standard
error is not a terminal (a log file, a pipe, CI), a bar redrawn into the log would be
noise, so one plain line is printed per epoch instead. The shared loop
(:class:`rowbook.training.Trainer`) and the word-vector trainers
(:class:`rowbook.models.word_vectors.jobs.ProgressReporter`) both report through
:class:`ProgressBar`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import IO, Any

__all__ = ["ProgressBar", "epoch_line", "format_metrics"]


def format_metrics(metrics: Mapping[str, Any]) -> str:
    """``name value`` pairs, numbers to 4 significant digits; values not computed (NaN, None) left out.

    >>> import numpy as np
    >>> format_metrics({"loss": np.float64(1.234567), "val_loss": float("nan"), "lr": 0.025})
    'loss 1.235, lr 0.025'
    """
    parts = []
    for name, value in metrics.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        shown = f"{float(value):.4g}" if isinstance(value, float) else str(value)
        parts.append(f"{name} {shown}")
    return ", ".join(parts)


def epoch_line(
    epoch: int, epochs: int, metrics: Mapping[str, Any], seconds: float, left: float | None = None
) -> str:
    """One line for a finished epoch (``epoch`` counted from 1); ``left`` estimates the
    seconds still to go.

    >>> epoch_line(3, 10, {"loss": 0.5, "val_loss": 0.75}, 2.04, left=14.3)
    'epoch 3/10: loss 0.5, val_loss 0.75 (2.0 s, about 14 s left)'
    >>> epoch_line(10, 10, {}, 2.04)
    'epoch 10/10 (2.0 s)'
    """
    shown = format_metrics(metrics)
    eta = f", about {left:.0f} s left" if left is not None else ""
    return f"epoch {epoch}/{epochs}{': ' + shown if shown else ''} ({seconds:.1f} s{eta})"


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class ProgressBar:
    """A bar over ``total`` units on a terminal, a plain line per epoch otherwise.

    Parameters
    ----------
    total : the units of the whole run (``epochs * units per epoch``).
    unit : what is counted (``"batch"``, ``"word"``, ``"record"``).
    initial : units already done (a resumed run starts its bar there).
    show : ``False`` prints nothing at all.
    unit_scale : count in k / M units (for words and records; not for batches).
    file : where to write; standard error by default.
    """

    def __init__(
        self,
        total: int,
        *,
        unit: str,
        initial: int = 0,
        show: bool = True,
        unit_scale: bool = True,
        file: IO[str] | None = None,
    ) -> None:
        self.file = file if file is not None else sys.stderr
        self.show = show
        self._epochs_run, self._seconds_run = 0, 0.0
        self.bar = None
        if show and _is_terminal(self.file):
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                unit=unit,
                unit_scale=unit_scale,
                dynamic_ncols=True,
                file=self.file,
            )

    def update(self, n: int, metrics: Mapping[str, Any] | None = None) -> None:
        """``n`` more units done; ``metrics`` (if any) are shown beside the bar."""
        if self.bar is not None:
            self.bar.update(n)
            if metrics:
                self.bar.set_postfix_str(format_metrics(metrics), refresh=False)

    def epoch_done(
        self, epoch: int, epochs: int, metrics: Mapping[str, Any], seconds: float
    ) -> None:
        """The epoch ``epoch`` (from 1) is over: metrics beside the bar, or one plain line
        with an estimate of the time left (from the epochs this run has done so far)."""
        self._epochs_run, self._seconds_run = self._epochs_run + 1, self._seconds_run + seconds
        if self.bar is not None:
            self.bar.set_postfix_str(format_metrics(metrics))
        elif self.show:
            left = (
                (epochs - epoch) * self._seconds_run / self._epochs_run if epoch < epochs else None
            )
            print(epoch_line(epoch, epochs, metrics, seconds, left), file=self.file, flush=True)

    def note(self, text: str) -> None:
        """A message on its own line (above the bar on a terminal)."""
        if self.bar is not None:
            self.bar.write(text, file=self.file)
        elif self.show:
            print(text, file=self.file, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
