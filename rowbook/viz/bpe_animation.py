"""The BPE merges as an animation: a text re-cut after each merge a trained model learned.

Frame ``k`` shows the text split by the first ``k`` merges of a trained
:class:`~rowbook.text.ByteLevelBPE` (its :meth:`~rowbook.text.ByteLevelBPE.truncated` model):
frame 0 is bytes, and each later frame joins one more pair, the tokens it made drawn in
red. The frames are drawn with matplotlib and written as a looping GIF with Pillow
(matplotlib's own image library), atomically.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from rowbook.checks import check_int
from rowbook.io import atomic_write
from rowbook.viz.plots import new_figure

if TYPE_CHECKING:
    from rowbook.text import ByteLevelBPE

__all__ = ["MergeFrame", "bpe_frame_figure", "merge_frames", "write_merge_animation"]

SPACE = "\u00b7"  # how the byte-level space 'Ġ' is drawn


@dataclass(frozen=True)
class MergeFrame:
    """The text after ``k`` merges: the ``k``-th merge (``None`` for the bytes), the count it
    had when learned, and the tokens."""

    k: int
    merge: tuple[str, str] | None
    count: int | None
    tokens: list[str]


def merge_frames(
    model: ByteLevelBPE, text: str, *, max_merges: int | None = None
) -> list[MergeFrame]:
    """One frame per merge of ``model`` (at most ``max_merges``), plus the bytes as frame 0.

    >>> from rowbook.text import ByteLevelBPE
    >>> model = ByteLevelBPE().fit(["low lower lowest"] * 4, 256 + 3)
    >>> for frame in merge_frames(model, "lower"):
    ...     print(frame.k, frame.merge, frame.tokens)
    0 None ['l', 'o', 'w', 'e', 'r']
    1 ('l', 'o') ['lo', 'w', 'e', 'r']
    2 ('lo', 'w') ['low', 'e', 'r']
    3 ('Ġ', 'low') ['low', 'e', 'r']
    """
    merges = (
        model.merges
        if max_merges is None
        else model.merges[: check_int("max_merges", max_merges, 0)]
    )
    base = len(model.vocab) - len(model.merges)  # specials + the 256 bytes
    trace = model.merge_trace
    frames = [MergeFrame(0, None, None, model.truncated(base).tokenize(text))]
    for k, merge in enumerate(merges, start=1):
        tokens = model.truncated(base + k).tokenize(text)
        frames.append(MergeFrame(k, tuple(merge), trace[k - 1].count, tokens))
    return frames


def bpe_frame_figure(
    frame: MergeFrame,
    total: int,
    *,
    width: int = 10,
    rows: int | None = None,
    figsize: tuple[float, float] = (7.0, 2.8),
    dpi: int = 80,
) -> Figure:
    """One frame: the tokens as boxes, ``width`` to a line (room for ``rows`` lines), the
    newest merge's tokens in red."""
    fig = new_figure(figsize, dpi)
    ax = fig.add_subplot()
    ax.axis("off")
    made = "".join(frame.merge) if frame.merge else None
    for n, token in enumerate(frame.tokens):
        row, col = divmod(n, width)
        new = token == made
        ax.text(
            col,
            -row,
            token.replace("\u0120", SPACE),
            ha="center",
            va="center",
            fontsize=12,
            family="monospace",
            color="white" if new else "0.1",
            bbox={
                "boxstyle": "round,pad=0.25",
                "fc": "#d62728" if new else "#dbe9f6",
                "ec": "0.5",
                "lw": 0.5,
            },
        )
    rows = max(rows or 0, (len(frame.tokens) + width - 1) // width)
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(-rows + 0.4, 0.6)
    if frame.merge is None:
        head = f"the bytes: {len(frame.tokens)} tokens"
    else:
        left, right = (s.replace("\u0120", SPACE) for s in frame.merge)
        head = (
            f"merge {frame.k} of {total}: '{left}' + '{right}' -> '{left}{right}' "
            f"(seen {frame.count} times); {len(frame.tokens)} tokens"
        )
    ax.set_title(head, fontsize=9, family="monospace")
    return fig


def write_merge_animation(
    frames: Sequence[MergeFrame],
    path: str | os.PathLike[str],
    *,
    frame_ms: int = 700,
    **figure_kwargs: object,
) -> Path:
    """Draw every frame and write them as a looping GIF at ``path`` (the last held 3x)."""
    from PIL import Image

    if not frames:
        raise ValueError("frames is empty: pass merge_frames(model, text)")
    images, width = [], int(figure_kwargs.pop("width", 10))
    rows = (len(frames[0].tokens) + width - 1) // width  # the bytes take the most lines
    for frame in frames:
        fig = bpe_frame_figure(frame, len(frames) - 1, width=width, rows=rows, **figure_kwargs)
        fig.canvas.draw()
        rgb = np.asarray(fig.canvas.buffer_rgba())[..., :3]  # (H, W, 3)
        images.append(Image.fromarray(rgb).quantize(colors=32))
    durations = [frame_ms] * (len(images) - 1) + [3 * frame_ms]
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=True,
    )
    path = Path(path)
    with atomic_write(path) as f:
        f.write(buffer.getvalue())
    return path
