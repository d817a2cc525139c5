"""A self-contained, interactive HTML view of embedding space (2-D or 3-D).

One file holds everything: the style, the projected points as a JSON block
(``<script type="application/json" id="rowbook-data">``), the rows themselves scaled to unit
length (``<script type="application/octet-stream" id="rowbook-vectors">``, little-endian
float32 in base64) and a small hand-written canvas viewer (:mod:`rowbook.viz.viewer`). It
loads nothing from the network and opens from ``file://`` with no server.

Beyond rotating and hovering, the page searches the labels, lists the clicked point's nearest
neighbours by the cosine of the *rows* (not by distance on the screen, which a projection
distorts), and colours the points by a metadata column. It stays usable at 100,000 points
(``benchmarks/bench_viewer.py`` opens such a page in headless Chromium): beyond 1,500 points
they are drawn as pixels of one image, and a grid of the screen finds the point under the
cursor and keeps labels apart.

Labels are data, never markup: in the JSON block ``<``, ``>`` and ``&`` are written as
``\\u003c``, ``\\u003e``, ``\\u0026`` (so a label such as ``</script>`` cannot end the
block), the title is HTML-escaped, and the viewer puts labels on the page only through
``fillText`` and ``textContent``.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rowbook.checks import check_choice
from rowbook.io import atomic_write
from rowbook.vectors.neighbors import unit_rows
from rowbook.viz.columns import metadata_columns
from rowbook.viz.labels import LabelMode, visible_label
from rowbook.viz.points import as_points
from rowbook.viz.project import METHOD_NAMES, Method, describe_projection, project, variance_shares
from rowbook.viz.viewer import ERROR_HOOK_JS, STYLE_CSS, VIEWER_JS

if TYPE_CHECKING:
    from rowbook.vectors import Vectors

__all__ = [
    "DATA_FORMAT",
    "MAX_EMBEDDED_VALUES",
    "NEIGHBORS_BY_DEFAULT",
    "embedding_html",
    "script_json",
    "write_html",
]

DATA_FORMAT = {"format": "rowbook-embedding-view", "version": 2}
#: ``neighbors=None`` embeds the rows when they hold at most this many values (64 MB of float32)
NEIGHBORS_BY_DEFAULT = 1 << 24
#: ``neighbors=True`` refuses tables larger than this (a page of about 350 MB)
MAX_EMBEDDED_VALUES = 1 << 26

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style>
<script>{error_hook}</script>
</head>
<body>
<header>
<h1>{heading}</h1>
<span id="summary">{summary}</span>
<button id="mode" type="button" title="switch between 3-D and 2-D">{mode}</button>
<label>labels <select id="labels" title="which labels to write beside the points">
<option value="auto">auto</option><option value="all">all</option><option value="none">none</option>
</select></label>
<button id="reset" type="button" title="back to the first view">reset</button>
<label>colour <select id="color-by" title="colour the points by a metadata column"></select></label>
<span class="search"><input id="search" type="search" placeholder="find a label"
 autocomplete="off" spellcheck="false" title="type part of a label; Enter picks the first match">
<ul id="matches" hidden></ul></span>
<span class="help">drag: rotate &middot; shift-drag: pan &middot; wheel: zoom &middot;
hover: label &middot; click: nearest neighbours &middot; double-click: reset</span>
</header>
<main>
<canvas id="view"></canvas>
<div id="tip" hidden></div>
<ul id="legend"></ul>
<aside id="panel" hidden><h2 id="panel-title"></h2><p id="panel-note"></p><ol id="neighbors"></ol></aside>
</main>
<script type="application/json" id="rowbook-data">{data}</script>{vectors}
<script>{viewer}</script>
</body>
</html>
"""


def script_json(payload: Any) -> str:
    """JSON text that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&``.

    Examples
    --------
    >>> script_json({"label": "</script><b>x & y"})
    '{"label": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003ex \\\\u0026 y"}'
    >>> json.loads(script_json({"label": "</script>"}))["label"]
    '</script>'
    """
    text = json.dumps(payload, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def embedding_html(
    data: np.ndarray | Vectors,
    labels: Sequence[Any] | None = None,
    *,
    words: Sequence[str] | None = None,
    groups: Sequence[Any] | None = None,
    colors: Sequence[str] | None = None,
    metadata: Mapping[str, Sequence[Any]] | None = None,
    color_by: str | None = None,
    dims: Literal[2, 3] = 3,
    method: Method = "pca",
    show_labels: LabelMode = "auto",
    neighbors: bool | None = None,
    title: str | None = None,
    subject: str | None = None,
    seed: int = 0,
) -> str:
    """The HTML page (a string) showing the rows projected to ``dims`` axes.

    Parameters
    ----------
    data, labels, words, groups, colors
        The points and their colours, as :func:`~rowbook.viz.scatter_figure` takes them.
    metadata
        Columns to colour by (the page's "colour" menu): name to one value per point, numbers
        (a continuous scale) or anything else (categories). A Vectors with counts adds a
        ``count`` column.
    color_by
        The metadata column the page starts coloured by (default: ``groups`` / ``colors``).
    neighbors
        Embed the rows (unit length, float32) so that clicking a point lists its nearest
        neighbours by cosine. ``None``: when they hold at most ``NEIGHBORS_BY_DEFAULT`` values.
    dims : {2, 3}
        Axes to project to. A 3-D page can also be flattened to its first two axes
        with the page's 2-D button.
    method : {"pca", "tsne", "none"}
        See :func:`rowbook.viz.project.project`.
    show_labels : {"auto", "all", "none"}
        The labels written at first (the page's "labels" menu changes it): ``"auto"``
        writes each label that overlaps no nearer one, ``"all"`` every label.
    title, subject
        The heading, or what the points are (default ``"n points"``); the summary beside
        it says the projection shown (``"PCA 3-D, 52% variance"``) and follows the 2-D /
        3-D switch.
    """
    if dims not in (2, 3):
        raise ValueError(f"dims must be 2 or 3, got {dims!r}")
    points = as_points(data, labels, words, groups=groups, colors=colors)
    columns = metadata_columns(_with_counts(data, words, metadata), len(points.labels))
    if color_by is not None and color_by not in [c["name"] for c in columns]:
        raise ValueError(
            f"color_by={color_by!r} is not a metadata column; the columns are "
            f"{[c['name'] for c in columns]}"
        )
    rows = _embedded_rows(points.X, neighbors)
    if method == "pca" and min(points.X.shape) < dims:
        raise ValueError(
            f"dims={dims} needs at least {dims} rows and {dims} columns, got data of shape "
            f"{points.X.shape}; use dims=2 or more data"
        )
    check_choice("show_labels", show_labels, ("auto", "all", "none"))
    coords, axis_names = project(points.X, dims, method=method, seed=seed)  # (n, dims)
    shares = variance_shares(points.X, coords) if method == "pca" else None
    heading = title if title is not None else subject or f"{len(coords)} points"
    payload = {
        **DATA_FORMAT,
        "title": heading,
        "method": method,
        "method_name": METHOD_NAMES[method],
        "dims": dims,
        "axes": axis_names,
        "variance": shares,
        "show_labels": show_labels,
        "labels": points.labels,
        "shown": [visible_label(label) for label in points.labels],
        "points": [[float(f"{v:.7g}") for v in row] for row in coords],
        "colors": points.colors,
        "groups": points.groups,
        "legend": [list(entry) for entry in points.legend],
        "metadata": columns,
        "color_by": color_by or "",
        "neighbors": None if rows is None else {"rows": rows.shape[0], "dim": rows.shape[1]},
    }
    summary = describe_projection(method, dims, shares)
    return _PAGE.format(
        title=html.escape(f"{heading}, {summary}"),
        heading=html.escape(heading),
        summary=html.escape(summary),
        mode="Show 2-D" if dims == 3 else "2-D only",
        style=STYLE_CSS,
        error_hook=ERROR_HOOK_JS,
        data=script_json(payload),
        vectors=_vectors_block(rows),
        viewer=VIEWER_JS,
    )


def _with_counts(
    data: Any, words: Sequence[str] | None, metadata: Mapping[str, Sequence[Any]] | None
) -> dict[str, Sequence[Any]]:
    """``metadata``, with a Vectors' counts of the drawn words as a ``count`` column first."""
    columns = dict(metadata or {})
    counts = getattr(data, "counts", None)
    if counts is None or "count" in columns or not hasattr(data, "get_index"):
        return columns
    keys = list(data.index_to_key) if words is None else list(words)
    return {"count": [int(counts[data.get_index(k)]) for k in keys], **columns}


def _embedded_rows(X: np.ndarray, neighbors: bool | None) -> np.ndarray | None:
    """The unit rows to embed for the neighbour panel, or None (see ``neighbors``)."""
    if neighbors is False or (neighbors is None and X.size > NEIGHBORS_BY_DEFAULT):
        return None
    if X.size > MAX_EMBEDDED_VALUES:
        raise ValueError(
            f"neighbors=True would embed {X.shape[0]:,} x {X.shape[1]:,} = {X.size:,} values, more "
            f"than {MAX_EMBEDDED_VALUES:,}: draw fewer words, or neighbors=False"
        )
    return unit_rows(X.astype(np.float32))[1]  # (n, d) float32


def _vectors_block(rows: np.ndarray | None) -> str:
    """The rows as a script block of base64 (its alphabet has no ``<``: it cannot end the block)."""
    if rows is None:
        return ""
    payload = base64.b64encode(np.ascontiguousarray(rows, dtype="<f4").tobytes()).decode("ascii")
    return f'\n<script type="application/octet-stream" id="rowbook-vectors">{payload}</script>'


def write_html(
    data: np.ndarray | Vectors,
    path: str | os.PathLike[str],
    labels: Sequence[Any] | None = None,
    **kwargs: Any,
) -> Path:
    """Write :func:`embedding_html` to ``path`` (UTF-8, atomically); returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "space.html"
    >>> table = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 1.0, 1.0]])
    >>> write_html(table, out, labels=["x", "y", "z", "xyz"]) == out
    True
    """
    path = Path(path)
    page = embedding_html(data, labels, **kwargs)
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(page)
    return path
