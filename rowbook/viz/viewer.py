"""The page style and the JavaScript viewer that :mod:`rowbook.viz.html` inlines (package
data: ``viewer.css`` and ``viewer.js`` beside this module).

The viewer is plain JavaScript on a 2-D canvas (no WebGL, no library, no network). It
reads the JSON block ``#rowbook-data``, centres the points and scales them into the
unit ball, and draws them:

* 3-D: rotate by yaw (about the vertical axis) then pitch (about the horizontal axis),
  perspective ``f = D / (D + z)`` with the camera ``D = 3`` units in front, far points
  painted first;
* 2-D: the first two coordinates, no rotation.

Drag rotates (in 2-D, and with shift or the right button, it pans), the wheel zooms
about the cursor; the labels menu writes every label (``all``), none, or (``auto``) those
that overlap no nearer one, and the header says how many are hidden; hovering shows
the point's label in bold and in a tooltip (set with ``textContent``, never
as HTML), double-click resets. When the first frame is drawn the script sets
``data-ready="<number of points>"`` and ``data-mode`` on ``<body>``; an error anywhere
sets ``data-error`` on ``<html>`` (the handler is installed by a script of its own, so
even a syntax error in the viewer is caught). Opened as ``page.html#selftest`` it also
hovers over the first point, drags and zooms with synthetic events and reports what
happened in ``data-selftest`` as JSON (for the headless-browser test): the header,
the labels menu, the 2-D / 3-D switch, whether the axis names are clear of the points.
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
