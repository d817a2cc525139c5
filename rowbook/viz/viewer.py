"""The page style and the JavaScript viewer that :mod:`rowbook.viz.html` inlines (package
data: ``viewer.css`` and ``viewer.js`` beside this module).

The viewer is plain JavaScript on a 2-D canvas (no WebGL, no library, no network). It
reads the JSON block ``#rowbook-data``, centres the points and scales them into the
unit ball, and draws them:

* 3-D: rotate by yaw (about the vertical axis) then pitch (about the horizontal axis),
  perspective ``f = D / (D + z)`` with the camera ``D = 3`` units in front, far points
  painted first;
* 2-D: the first two coordinates, no rotation.

Up to 1,500 points each is a disc with an outline; beyond that the points are squares
written straight into the pixels of one image (``putImageData``), ordered far to near by a
counting sort into depth buckets, and a grid of 16-pixel screen cells finds the point under
the cursor and keeps labels off points without scanning them all.

Drag rotates (in 2-D, and with shift or the right button, it pans), the wheel zooms
about the cursor; the labels menu writes every label (``all``, at most 10,000), none, or
(``auto``) those that overlap no nearer one (in a large table, the first rows: the most
frequent words), and the header says how many are hidden; hovering shows the point's label
in bold and in a tooltip (set with ``textContent``, never as HTML), double-click resets.

A click selects a point: the panel lists its 10 nearest neighbours by the cosine of the
*rows* (decoded once from ``#rowbook-vectors`` and scanned in full, so they are the true
neighbours, whatever the projection did), each a link that selects it in turn, and the
picture rings them and draws lines to them. The search box matches labels (exact first,
then prefixes, then anywhere, ignoring case); Enter or a click on a match selects it and
centres the view on it. The colour menu colours by a metadata column: up to 19 categories
(the rest grey, "other"), or a viridis scale for numbers (log for counts), with a legend.

When the first frame is drawn the script sets ``data-ready="<number of points>"``,
``data-ready-ms`` (milliseconds since navigation start) and ``data-mode`` on ``<body>``; an
error anywhere sets ``data-error`` on ``<html>`` (the handler is installed by a script of
its own, so even a syntax error in the viewer is caught). Opened as ``page.html#selftest``
it also hovers, clicks, searches, changes colours, drags and zooms with synthetic events and
reports what happened in ``data-selftest`` as JSON (for the headless-browser tests and
``benchmarks/bench_viewer.py``).
"""

from importlib.resources import files

__all__ = ["ERROR_HOOK_JS", "STYLE_CSS", "VIEWER_JS"]

_HERE = files("rowbook.viz")
#: The page style, ``viewer.css`` beside this module.
STYLE_CSS = "\n" + _HERE.joinpath("viewer.css").read_text(encoding="utf-8")
#: The viewer, ``viewer.js`` beside this module.
VIEWER_JS = "\n" + _HERE.joinpath("viewer.js").read_text(encoding="utf-8")


ERROR_HOOK_JS = """
window.addEventListener("error", function (event) {
  document.documentElement.setAttribute("data-error", String(event.message || event));
});
"""
