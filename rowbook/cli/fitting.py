"""How every ``rowbook train ...`` command makes its model, fits it and stops on Ctrl-C.

One way for all of them (word vectors, the NPLM, the transformer, the classifier):

* :func:`given` -- the model options the user gave; the others keep the library's defaults;
* :func:`make_model` -- the model made from them, a refused parameter named by its flag;
* :func:`checked_resume` -- ``--resume``: the ``--checkpoint`` to continue, or ``None``
  (with a note) while that file is not written yet;
* :func:`run_fit` -- runs the fit; Ctrl-C ends it with exit status 130 and says what the
  checkpoint holds and how to go on (:func:`interrupted`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rowbook.checks import ParameterError
from rowbook.cli._common import cli_error

__all__ = ["checked_resume", "given", "interrupted", "make_model", "run_fit"]


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The model options the user gave (``args.flags``: parameter -> flag)."""
    return {name: getattr(args, name) for name in args.flags if getattr(args, name) is not None}


def make_model(args: argparse.Namespace, cls: Any = None, **extra: Any) -> Any:
    """``cls`` (default ``args.model_class``) made with :func:`given` and ``extra``."""
    cls = args.model_class if cls is None else cls
    try:
        return cls(**given(args), **extra)
    except ParameterError as err:
        raise cli_error(err, args.flags) from None


def checked_resume(args: argparse.Namespace) -> str | None:
    """The checkpoint ``--resume`` continues, or None (a missing one starts afresh, with a note)."""
    if not args.resume:
        return None
    if args.checkpoint is None:
        raise ValueError("--resume needs --checkpoint FILE, the checkpoint to continue from")
    if not Path(args.checkpoint).exists():
        if not getattr(args, "quiet", False):
            print(
                f"{args.prog}: no checkpoint {args.checkpoint} yet; starting at epoch 1",
                file=sys.stderr,
            )
        return None
    return args.checkpoint


def interrupted(args: argparse.Namespace, *, continue_with_init: bool = False) -> int:
    """Exit status 130, with what the checkpoint holds and how to go on: ``--resume``, or
    ``--init`` where the run cannot be resumed (``continue_with_init``)."""
    saved = args.checkpoint is not None and Path(args.checkpoint).exists()
    if saved and continue_with_init:
        hint = (
            f"{args.checkpoint} holds the model after the last finished epoch; continue it "
            f"with --init {args.checkpoint} and the epochs still to do"
        )
    elif saved:
        hint = (
            f"{args.checkpoint} holds the last finished epoch; add --resume to the same "
            "command to continue"
        )
    elif args.checkpoint is not None:
        hint = f"nothing was saved yet: {args.checkpoint} is written at the end of the first epoch"
    else:
        hint = "nothing was saved (add --checkpoint FILE to make training resumable)"
    print(f"{args.prog}: interrupted; {hint}", file=sys.stderr)
    return 130


def run_fit(
    args: argparse.Namespace, fit: Callable[[], Any], *, continue_with_init: bool = False
) -> int | None:
    """Run ``fit()``: ``None`` when it finished, 130 when Ctrl-C stopped it (said by
    :func:`interrupted`); a refused parameter is named by its flag."""
    try:
        fit()
    except KeyboardInterrupt:
        return interrupted(args, continue_with_init=continue_with_init)
    except ParameterError as err:
        raise cli_error(err, args.flags) from None
    return None
