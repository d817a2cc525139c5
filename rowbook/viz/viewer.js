(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rowbook-data").textContent);
  var n = data.labels.length, dims = data.dims, DISTANCE = 3;
  var canvas = document.getElementById("view"), ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip");
  var modeButton = document.getElementById("mode");
  var labelChoice = document.getElementById("labels");
  var summary = document.getElementById("summary");
  var points = normalise(data.points);
  var screen = [], order = [];
  var view = {};
  var drag = null;

  function reset() {
    view = { three: dims === 3, yaw: 0.5, pitch: 0.3, zoom: 1, panX: 0, panY: 0,
             labels: view.labels || data.show_labels || "auto", hover: -1, shown: 0 };
  }

  // what is drawn, for the header: "PCA 3-D, 52% variance" (the 2-D view shows two axes)
  function describe() {
    var k = view.three ? 3 : 2, text = data.method_name + " " + k + "-D";
    if (data.variance) {
      var share = data.variance.slice(0, k).reduce(function (a, b) { return a + b; }, 0);
      text += ", " + Math.round(100 * share) + "% variance";
    }
    return text;
  }

  // centre on the mean, scale so the farthest point is at distance 1, pad to 3 coordinates
  function normalise(raw) {
    var mean = [0, 0, 0], radius = 0, out = [], i, j;
    for (i = 0; i < n; i++) for (j = 0; j < dims; j++) mean[j] += raw[i][j] / n;
    for (i = 0; i < n; i++) {
      var p = [0, 0, 0];
      for (j = 0; j < dims; j++) p[j] = raw[i][j] - mean[j];
      radius = Math.max(radius, Math.hypot(p[0], p[1], p[2]));
      out.push(p);
    }
    radius = radius || 1;
    return out.map(function (p) { return [p[0] / radius, p[1] / radius, p[2] / radius]; });
  }

  function rotate(p) {
    var cy = Math.cos(view.yaw), sy = Math.sin(view.yaw);
    var cp = Math.cos(view.pitch), sp = Math.sin(view.pitch);
    var x = cy * p[0] + sy * p[2], z = -sy * p[0] + cy * p[2];
    return [x, cp * p[1] - sp * z, sp * p[1] + cp * z];
  }

  // world point -> [screen x, screen y, depth, perspective factor]
  function toScreen(p) {
    var w = canvas.clientWidth, h = canvas.clientHeight;
    var scale = 0.4 * Math.min(w, h) * view.zoom;
    var q = view.three ? rotate(p) : [p[0], p[1], 0];
    var f = view.three ? DISTANCE / (DISTANCE + q[2]) : 1;
    return [w / 2 + view.panX + scale * f * q[0], h / 2 + view.panY - scale * f * q[1], q[2], f];
  }

  function resize() {
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    canvas.height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    draw();
  }

  function axisEnds() {
    var origin = toScreen([0, 0, 0]), ends = [];
    for (var j = 0; j < (view.three ? 3 : 2); j++) {
      var unit = [0, 0, 0];
      unit[j] = 1.1;
      ends.push([origin, toScreen(unit)]);
    }
    return ends;
  }

  function drawAxes() {
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#bbb";
    axisEnds().forEach(function (line) {
      ctx.beginPath();
      ctx.moveTo(line[0][0], line[0][1]);
      ctx.lineTo(line[1][0], line[1][1]);
      ctx.stroke();
    });
  }

  function onPoint(box) {
    return screen.some(function (s) {
      return s[0] > box[0] - 6 && s[0] < box[2] + 6 && s[1] > box[1] - 6 && s[1] < box[3] + 6;
    });
  }

  // each axis name goes past the axis end, moved further out until it covers no point
  function drawAxisNames(taken) {
    ctx.font = "11px system-ui, sans-serif";
    axisEnds().forEach(function (line, j) {
      var dx = line[1][0] - line[0][0], dy = line[1][1] - line[0][1];
      var length = Math.hypot(dx, dy) || 1, ux = dx / length, uy = dy / length;
      var w = ctx.measureText(data.axes[j]).width, box = null;
      for (var step = 0; step < 40; step++) {
        var cx = line[1][0] + ux * (8 + 6 * step), cy = line[1][1] + uy * (8 + 6 * step);
        var x = cx + (ux >= 0 ? 0 : -w), y = cy + (uy >= 0 ? 10 : 0);  // grow outwards
        box = [x, y - 10, x + w, y + 2];
        if (!onPoint(box)) break;
      }
      taken.push(box);
      axisBoxes.push(box);
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255, 255, 255, 0.85)";
      ctx.strokeText(data.axes[j], box[0], box[3] - 2);
      ctx.fillStyle = "#777";
      ctx.fillText(data.axes[j], box[0], box[3] - 2);
    });
  }
  var axisBoxes = [];

  // a label goes to the first spot around its point (right, left, above, below) that meets
  // no label placed before it and no other point; with nowhere free it is left out, unless
  // every label is asked for ("all") or it is the hovered one (at most MAX_LABELS a frame)
  var MAX_LABELS = 400;
  function freeSpot(i, s, r, w, taken) {
    var spots = [[r + 2, -r - 2], [r + 2, r + 10], [-r - 2 - w, -r - 2], [-r - 2 - w, r + 10],
                 [r + 3, 4], [-r - 3 - w, 4], [-w / 2, -r - 3], [-w / 2, r + 12]];
    for (var k = 0; k < spots.length; k++) {
      var x = s[0] + spots[k][0], y = s[1] + spots[k][1], box = [x, y - 10, x + w, y + 2];
      var hit = taken.some(function (b) {
        return box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3];
      }) || screen.some(function (p, j) {
        return j !== i && p[0] > box[0] - 3 && p[0] < box[2] + 3 && p[1] > box[1] - 3 &&
               p[1] < box[3] + 3;
      });
      if (!hit) return box;
    }
    return null;
  }

  function placeLabel(i, s, r, taken, how) {
    var text = data.shown[i];
    if (how === "auto" && taken.length >= MAX_LABELS) return;
    ctx.font = (how === "hover" ? "bold " : "") + "12px system-ui, sans-serif";
    var w = ctx.measureText(text).width, box = freeSpot(i, s, r, w, taken);
    if (box === null) {
      if (how === "auto") return;
      box = [s[0] + r + 2, s[1] - r - 12, s[0] + r + 2 + w, s[1] - r];
    }
    taken.push(box);
    view.shown += 1;
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255, 255, 255, 0.85)";
    ctx.strokeText(text, box[0], box[3] - 2);
    ctx.fillStyle = "#222";
    ctx.fillText(text, box[0], box[3] - 2);
  }

  function radius(i) { return (i === view.hover ? 7 : 5) * screen[i][3]; }

  function draw() {
    var w = canvas.clientWidth, h = canvas.clientHeight, i, k;
    ctx.clearRect(0, 0, w, h);
    drawAxes();
    screen = points.map(toScreen);
    order = screen.map(function (_, j) { return j; });
    order.sort(function (a, b) { return screen[b][2] - screen[a][2]; });  // far first
    for (k = 0; k < n; k++) {
      i = order[k];
      ctx.beginPath();
      ctx.arc(screen[i][0], screen[i][1], radius(i), 0, 2 * Math.PI);
      ctx.fillStyle = data.colors[i];
      ctx.fill();
      ctx.lineWidth = 0.8;
      ctx.strokeStyle = "#333";
      ctx.stroke();
    }
    var taken = [];
    axisBoxes = [];
    drawAxisNames(taken);
    view.shown = 0;
    if (view.hover >= 0) {
      placeLabel(view.hover, screen[view.hover], radius(view.hover), taken, "hover");
    }
    for (k = n - 1; view.labels !== "none" && k >= 0; k--) {  // near first: they win the space
      i = order[k];
      if (i !== view.hover) placeLabel(i, screen[i], radius(i), taken, view.labels);
    }
    modeButton.textContent = dims !== 3 ? "2-D only" : view.three ? "Show 2-D" : "Show 3-D";
    labelChoice.value = view.labels;
    var hidden = view.labels === "none" ? "" : n - view.shown > 0 ?
      " \u00b7 " + (n - view.shown) + " of " + n + " labels hidden (no room; hover or zoom)" : "";
    summary.textContent = describe() + hidden;
    document.title = data.title + ", " + describe();
    document.body.setAttribute("data-mode", view.three ? "3d" : "2d");
  }

  function nearest(x, y) {
    var best = -1, bestDistance = 12;
    for (var i = 0; i < screen.length; i++) {
      var d = Math.hypot(screen[i][0] - x, screen[i][1] - y);
      if (d < bestDistance) { best = i; bestDistance = d; }
    }
    return best;
  }

  function showTip(i, x, y) {
    if (i < 0) { tip.hidden = true; return; }
    var coords = data.points[i].map(function (v) { return v.toPrecision(4); }).join(", ");
    var group = data.groups ? "\n" + data.groups[i] : "";
    tip.textContent = data.shown[i] + group + "\n(" + coords + ")";
    tip.style.left = (x + 14) + "px";
    tip.style.top = (y + 14) + "px";
    tip.hidden = false;
  }

  function localXY(event) {
    var box = canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  }

  canvas.addEventListener("pointerdown", function (event) {
    var pan = !view.three || event.shiftKey || event.button !== 0;
    drag = { x: event.clientX, y: event.clientY, pan: pan };
    try { canvas.setPointerCapture(event.pointerId); } catch (ignored) { /* synthetic event */ }
    canvas.style.cursor = "grabbing";
  });
  canvas.addEventListener("pointermove", function (event) {
    var xy = localXY(event);
    if (drag) {
      var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      drag.x = event.clientX;
      drag.y = event.clientY;
      if (drag.pan) { view.panX += dx; view.panY += dy; }
      else {
        view.yaw += 0.01 * dx;
        view.pitch = Math.max(-1.57, Math.min(1.57, view.pitch + 0.01 * dy));
      }
    }
    view.hover = nearest(xy[0], xy[1]);
    draw();
    showTip(view.hover, xy[0], xy[1]);
  });
  function endDrag() { drag = null; canvas.style.cursor = "grab"; }
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("pointerleave", function () {
    view.hover = -1;
    tip.hidden = true;
    draw();
  });
  canvas.addEventListener("contextmenu", function (event) { event.preventDefault(); });
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    var xy = localXY(event), factor = Math.exp(-0.0015 * event.deltaY);
    var zoom = Math.max(0.05, Math.min(100, view.zoom * factor));
    factor = zoom / view.zoom;
    var cx = xy[0] - canvas.clientWidth / 2, cy = xy[1] - canvas.clientHeight / 2;
    view.panX = cx + (view.panX - cx) * factor;  // keep the point under the cursor still
    view.panY = cy + (view.panY - cy) * factor;
    view.zoom = zoom;
    draw();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () { reset(); draw(); });
  modeButton.addEventListener("click", function () {
    if (dims === 3) { view.three = !view.three; draw(); }
  });
  modeButton.disabled = dims !== 3;
  labelChoice.addEventListener("change", function () { view.labels = labelChoice.value; draw(); });
  document.getElementById("reset").addEventListener("click", function () { reset(); draw(); });

  var legend = document.getElementById("legend");
  (data.legend || []).forEach(function (entry) {
    var item = document.createElement("li"), swatch = document.createElement("span");
    swatch.style.background = entry[1];
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(entry[0]));
    legend.appendChild(item);
  });

  // opened as page.html#selftest: hover, drag and zoom by synthetic events, report on <body>
  function selfTest() {
    var box = canvas.getBoundingClientRect(), at = screen[0].slice(0, 2), results = {};
    function send(type, x, y, extra) {
      var init = { clientX: box.left + x, clientY: box.top + y, pointerId: 1, button: 0 };
      canvas.dispatchEvent(new PointerEvent(type, Object.assign(init, extra || {})));
    }
    function choose(value) { labelChoice.value = value; labelChoice.dispatchEvent(new Event("change")); }
    results.header = [summary.textContent, modeButton.textContent, document.title];
    results.axesClear = axisBoxes.length === (view.three ? 3 : 2) && !axisBoxes.some(onPoint);
    var start = view.labels;
    results.labelsAuto = view.shown;
    choose("none");
    results.labelsNone = view.shown;
    choose("all");
    results.labelsAll = view.shown;
    choose(start);
    if (dims === 3) {
      modeButton.click();
      results.switched = [summary.textContent, modeButton.textContent, document.title,
                          document.body.getAttribute("data-mode")];
      modeButton.click();
    }
    send("pointermove", at[0], at[1]);
    results.hover = tip.hidden ? "" : tip.textContent.split("\n")[0];
    var yaw = view.yaw;
    send("pointerdown", 10, 10);
    send("pointermove", 60, 30);
    send("pointerup", 60, 30);
    results.moved = Math.hypot(screen[0][0] - at[0], screen[0][1] - at[1]) > 1;
    results.rotated = view.yaw !== yaw;
    var zoom = view.zoom;
    canvas.dispatchEvent(new WheelEvent("wheel", { clientX: box.left + 5, clientY: box.top + 5,
                                                   deltaY: -200, cancelable: true }));
    results.zoomed = view.zoom > zoom;
    document.body.setAttribute("data-selftest", JSON.stringify(results));
  }


  reset();
  window.addEventListener("resize", resize);
  resize();
  if (window.location.hash === "#selftest") selfTest();
  document.body.setAttribute("data-mode", view.three ? "3d" : "2d");
  document.body.setAttribute("data-ready", String(n));
})();
