(function () {
  "use strict";
  var started = performance.now();
  var data = JSON.parse(document.getElementById("rowbook-data").textContent);
  var n = data.labels.length, dims = data.dims, DISTANCE = 3;
  var canvas = document.getElementById("view"), ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip");
  var modeButton = document.getElementById("mode");
  var labelChoice = document.getElementById("labels");
  var colorChoice = document.getElementById("color-by");
  var summary = document.getElementById("summary");
  var search = document.getElementById("search"), matches = document.getElementById("matches");
  var panel = document.getElementById("panel"), legend = document.getElementById("legend");
  var LARGE = 1500;          // beyond this many points: pixels in one image, labels by row order
  var MAX_LABELS = 400;      // labels written a frame in "auto" mode
  var MAX_ALL = 10000;       // labels written a frame in "all" mode
  var K = 10;                // neighbours listed for a clicked point
  var large = n > LARGE;
  var points = normalise(data.points);               // Float32Array (n * 3), unit ball
  var SX = new Float32Array(n), SY = new Float32Array(n), SZ = new Float32Array(n);
  var SF = new Float32Array(n), order = new Uint32Array(n);
  var grid = null, labelGrid = null;
  var view = {}, drag = null, axisBoxes = [];
  var colorOf = [], palette = [], paletteRGB = [];   // per point: an index into palette
  var selected = -1, neighbours = [], vectors = null, lowered = null;
  var image = null;

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
    var mean = [0, 0, 0], radius = 0, out = new Float32Array(3 * n), i, j;
    for (i = 0; i < n; i++) for (j = 0; j < dims; j++) mean[j] += raw[i][j] / n;
    for (i = 0; i < n; i++) {
      for (j = 0; j < dims; j++) out[3 * i + j] = raw[i][j] - mean[j];
      radius = Math.max(radius, Math.hypot(out[3 * i], out[3 * i + 1], out[3 * i + 2]));
    }
    radius = radius || 1;
    for (i = 0; i < out.length; i++) out[i] /= radius;
    return out;
  }

  // -- projection to the screen ------------------------------------------------------------
  function camera() {
    var w = canvas.clientWidth, h = canvas.clientHeight;
    return { w: w, h: h, scale: 0.4 * Math.min(w, h) * view.zoom, cy: Math.cos(view.yaw),
             sy: Math.sin(view.yaw), cp: Math.cos(view.pitch), sp: Math.sin(view.pitch) };
  }

  // world point (x, y, z) -> [screen x, screen y, depth, perspective factor]
  function project(x, y, z, c) {
    if (!view.three) return [c.w / 2 + view.panX + c.scale * x, c.h / 2 + view.panY - c.scale * y, 0, 1];
    var rx = c.cy * x + c.sy * z, rz = -c.sy * x + c.cy * z;
    var qy = c.cp * y - c.sp * rz, qz = c.sp * y + c.cp * rz, f = DISTANCE / (DISTANCE + qz);
    return [c.w / 2 + view.panX + c.scale * f * rx, c.h / 2 + view.panY - c.scale * f * qy, qz, f];
  }

  function projectAll() {
    var c = camera();
    for (var i = 0; i < n; i++) {
      var s = project(points[3 * i], points[3 * i + 1], points[3 * i + 2], c);
      SX[i] = s[0]; SY[i] = s[1]; SZ[i] = s[2]; SF[i] = s[3];
      order[i] = i;
    }
    if (view.three && large) depthBuckets();
    else if (view.three) order.sort(function (a, b) { return SZ[b] - SZ[a]; });  // far first
    grid = buildGrid(c.w, c.h);
  }

  // far first, by a counting sort into 4,096 depth buckets: linear time (a comparison sort of
  // 100,000 points took most of a frame); points within a bucket keep their row order
  function depthBuckets() {
    var B = 4096, low = Infinity, high = -Infinity, i;
    for (i = 0; i < n; i++) { low = Math.min(low, SZ[i]); high = Math.max(high, SZ[i]); }
    var scale = (B - 1) / ((high - low) || 1), start = new Uint32Array(B + 1), bucket = new Uint16Array(n);
    for (i = 0; i < n; i++) { bucket[i] = Math.floor((high - SZ[i]) * scale); start[bucket[i] + 1]++; }
    for (i = 0; i < B; i++) start[i + 1] += start[i];
    for (i = 0; i < n; i++) order[start[bucket[i]]++] = i;
  }

  // a grid of 16-px cells over the screen, each listing the points in it (counting sort)
  function buildGrid(w, h) {
    var size = 16, cols = Math.max(1, Math.ceil(w / size)), rows = Math.max(1, Math.ceil(h / size));
    var start = new Uint32Array(cols * rows + 1), cell = new Int32Array(n), items = new Uint32Array(n);
    for (var i = 0; i < n; i++) {
      var cx = Math.floor(SX[i] / size), cy = Math.floor(SY[i] / size);
      cell[i] = cx < 0 || cy < 0 || cx >= cols || cy >= rows ? -1 : cy * cols + cx;
      if (cell[i] >= 0) start[cell[i] + 1]++;
    }
    for (var k = 0; k < cols * rows; k++) start[k + 1] += start[k];
    var fill = start.slice(0, cols * rows);
    for (i = 0; i < n; i++) if (cell[i] >= 0) items[fill[cell[i]]++] = i;
    return { size: size, cols: cols, rows: rows, start: start, items: items };
  }

  // calls visit(i) for every point whose cell meets the box [x0, y0, x1, y1]; stops on true
  function pointsNear(box, visit) {
    var g = grid, c0 = Math.max(0, Math.floor(box[0] / g.size)), c1 = Math.min(g.cols - 1, Math.floor(box[2] / g.size));
    var r0 = Math.max(0, Math.floor(box[1] / g.size)), r1 = Math.min(g.rows - 1, Math.floor(box[3] / g.size));
    for (var r = r0; r <= r1; r++) for (var c = c0; c <= c1; c++) {
      var k = r * g.cols + c;
      for (var j = g.start[k]; j < g.start[k + 1]; j++) if (visit(g.items[j])) return true;
    }
    return false;
  }

  function resize() {
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(canvas.clientWidth * ratio));
    canvas.height = Math.max(1, Math.round(canvas.clientHeight * ratio));
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    image = null;
    draw();
  }

  // -- colours -------------------------------------------------------------------------------
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
                 "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"];
  var OTHER = "#c8c8c8";
  var RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];  // viridis

  function rgb(hex) { return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)]; }
  function hex(c) { return "#" + c.map(function (v) { return (256 + Math.round(v)).toString(16).slice(1); }).join(""); }
  function ramp(t) {
    var x = Math.max(0, Math.min(1, t)) * (RAMP.length - 1), k = Math.min(RAMP.length - 2, Math.floor(x)), f = x - k;
    return hex([0, 1, 2].map(function (j) { return RAMP[k][j] + f * (RAMP[k + 1][j] - RAMP[k][j]); }));
  }

  // colour every point by the chosen column ("" = the colours the page was written with)
  function applyColors() {
    var name = colorChoice.value, column = null, entries = [], i;
    (data.metadata || []).forEach(function (c) { if (c.name === name) column = c; });
    var index = {};
    palette = [];
    function slot(colour) {
      if (!(colour in index)) { index[colour] = palette.length; palette.push(colour); }
      return index[colour];
    }
    colorOf = new Array(n);
    if (column === null) {
      for (i = 0; i < n; i++) colorOf[i] = slot(data.colors[i]);
      entries = (data.legend || []).map(function (e) { return { swatch: e[1], text: e[0] }; });
    } else if (column.kind === "category") {
      var shown = Math.min(column.categories.length, PALETTE.length);
      var colours = column.categories.map(function (_, k) { return k < shown ? PALETTE[k] : OTHER; });
      for (i = 0; i < n; i++) colorOf[i] = slot(colours[column.codes[i]]);
      entries = column.categories.slice(0, shown).map(function (c, k) { return { swatch: PALETTE[k], text: c }; });
      if (column.categories.length > shown) {
        entries.push({ swatch: OTHER, text: "other (" + (column.categories.length - shown) + " values)" });
      }
    } else {
      var low = Infinity, high = -Infinity, f = column.log ? Math.log : function (v) { return v; };
      column.values.forEach(function (v) { if (v !== null) { low = Math.min(low, f(v)); high = Math.max(high, f(v)); } });
      var steps = 64, span = high - low || 1;
      for (i = 0; i < n; i++) {
        var v = column.values[i];
        colorOf[i] = slot(v === null ? OTHER : ramp(Math.round(steps * (f(v) - low) / span) / steps));
      }
      var show = function (v) { return column.log ? String(+Math.exp(v).toPrecision(4)) : String(+v.toPrecision(4)); };
      entries = [{ swatch: ramp(0), text: show(low) + (column.log ? " (log scale)" : "") },
                 { swatch: ramp(0.5), text: show(low + span / 2) }, { swatch: ramp(1), text: show(high) }];
    }
    paletteRGB = palette.map(rgb);
    legend.textContent = "";
    entries.forEach(function (entry) {
      var item = document.createElement("li"), swatch = document.createElement("span");
      swatch.style.background = entry.swatch;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(entry.text));
      legend.appendChild(item);
    });
  }

  // -- drawing -------------------------------------------------------------------------------
  function axisEnds() {
    var c = camera(), origin = project(0, 0, 0, c), ends = [];
    for (var j = 0; j < (view.three ? 3 : 2); j++) {
      var unit = [0, 0, 0];
      unit[j] = 1.1;
      ends.push([origin, project(unit[0], unit[1], unit[2], c)]);
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
    return pointsNear([box[0] - 6, box[1] - 6, box[2] + 6, box[3] + 6], function (i) {
      return SX[i] > box[0] - 6 && SX[i] < box[2] + 6 && SY[i] > box[1] - 6 && SY[i] < box[3] + 6;
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
      taken.add(box);
      axisBoxes.push(box);
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255, 255, 255, 0.85)";
      ctx.strokeText(data.axes[j], box[0], box[3] - 2);
      ctx.fillStyle = "#777";
      ctx.fillText(data.axes[j], box[0], box[3] - 2);
    });
  }

  // the label boxes placed this frame, in a grid of 64-px cells (tests for overlap stay local)
  function LabelBoxes() { this.cells = {}; this.length = 0; }
  LabelBoxes.prototype.keys = function (box) {
    var out = [];
    for (var r = Math.floor(box[1] / 64); r <= Math.floor(box[3] / 64); r++)
      for (var c = Math.floor(box[0] / 64); c <= Math.floor(box[2] / 64); c++) out.push(r + ":" + c);
    return out;
  };
  LabelBoxes.prototype.add = function (box) {
    var cells = this.cells;
    this.keys(box).forEach(function (k) { (cells[k] = cells[k] || []).push(box); });
    this.length += 1;
  };
  LabelBoxes.prototype.hits = function (box) {
    var cells = this.cells;
    return this.keys(box).some(function (k) {
      return (cells[k] || []).some(function (b) {
        return box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3];
      });
    });
  };

  // a label goes to the first spot around its point (right, left, above, below) that meets no
  // label placed before it and (up to LARGE points) no other point; with nowhere free it is
  // left out, unless every label is asked for ("all") or it is the hovered or selected one
  function freeSpot(i, r, w, taken) {
    var spots = [[r + 2, -r - 2], [r + 2, r + 10], [-r - 2 - w, -r - 2], [-r - 2 - w, r + 10],
                 [r + 3, 4], [-r - 3 - w, 4], [-w / 2, -r - 3], [-w / 2, r + 12]];
    for (var k = 0; k < spots.length; k++) {
      var x = SX[i] + spots[k][0], y = SY[i] + spots[k][1], box = [x, y - 10, x + w, y + 2];
      if (taken.hits(box)) continue;
      if (!large && pointsNear([box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3], function (j) {
        return j !== i && SX[j] > box[0] - 3 && SX[j] < box[2] + 3 && SY[j] > box[1] - 3 && SY[j] < box[3] + 3;
      })) continue;
      return box;
    }
    return null;
  }

  function placeLabel(i, taken, how) {
    var text = data.shown[i], r = radius(i);
    if (how === "auto" && taken.length >= MAX_LABELS) return;
    if (how === "all" && view.shown >= MAX_ALL) return;
    ctx.font = (how === "hover" ? "bold " : "") + "12px system-ui, sans-serif";
    var w = ctx.measureText(text).width, box = freeSpot(i, r, w, taken);
    if (box === null) {
      if (how === "auto") return;
      box = [SX[i] + r + 2, SY[i] - r - 12, SX[i] + r + 2 + w, SY[i] - r];
    }
    taken.add(box);
    view.shown += 1;
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(255, 255, 255, 0.85)";
    ctx.strokeText(text, box[0], box[3] - 2);
    ctx.fillStyle = "#222";
    ctx.fillText(text, box[0], box[3] - 2);
  }

  function radius(i) {
    if (i === view.hover || i === selected) return 7 * SF[i];
    return (large ? 2.5 : 5) * SF[i];
  }

  function drawSmall() {
    for (var k = 0; k < n; k++) {
      var i = order[k];
      ctx.beginPath();
      ctx.arc(SX[i], SY[i], radius(i), 0, 2 * Math.PI);
      ctx.fillStyle = palette[colorOf[i]];
      ctx.fill();
      ctx.lineWidth = 0.8;
      ctx.strokeStyle = "#333";
      ctx.stroke();
    }
  }

  // many points: squares written straight into the pixels of one image, far ones first
  function drawLarge() {
    var ratio = canvas.width / Math.max(1, canvas.clientWidth), W = canvas.width, H = canvas.height;
    if (image === null || image.width !== W || image.height !== H) image = ctx.createImageData(W, H);
    var pixels = new Uint32Array(image.data.buffer), size = Math.max(2, Math.round(3 * ratio));
    var packed = paletteRGB.map(function (c) { return (255 << 24 | c[2] << 16 | c[1] << 8 | c[0]) >>> 0; });
    pixels.fill(0);
    for (var k = 0; k < n; k++) {
      var i = order[k], x0 = Math.round(SX[i] * ratio - size / 2), y0 = Math.round(SY[i] * ratio - size / 2);
      if (x0 < 0 || y0 < 0 || x0 + size > W || y0 + size > H) continue;
      var colour = packed[colorOf[i]];
      for (var dy = 0; dy < size; dy++) pixels.fill(colour, (y0 + dy) * W + x0, (y0 + dy) * W + x0 + size);
    }
    ctx.putImageData(image, 0, 0);
  }

  // the selected point and its neighbours: rings, and lines from the selected one
  function drawSelection() {
    if (selected < 0) return;
    ctx.lineWidth = 1;
    ctx.strokeStyle = "rgba(0, 0, 0, 0.45)";
    neighbours.forEach(function (pair) {
      ctx.beginPath();
      ctx.moveTo(SX[selected], SY[selected]);
      ctx.lineTo(SX[pair[0]], SY[pair[0]]);
      ctx.stroke();
    });
    neighbours.forEach(function (pair) { ring(pair[0], "#000", 1.5); });
    ring(selected, "#d62728", 2.5);
  }

  function ring(i, colour, width) {
    ctx.beginPath();
    ctx.arc(SX[i], SY[i], radius(i) + 2.5, 0, 2 * Math.PI);
    ctx.fillStyle = palette[colorOf[i]];
    ctx.fill();
    ctx.lineWidth = width;
    ctx.strokeStyle = colour;
    ctx.stroke();
  }

  function draw() {
    var w = canvas.clientWidth, h = canvas.clientHeight, k;
    projectAll();
    ctx.clearRect(0, 0, w, h);
    if (large) drawLarge(); else drawSmall();
    drawAxes();
    drawSelection();
    var taken = new LabelBoxes();
    axisBoxes = [];
    drawAxisNames(taken);
    view.shown = 0;
    if (selected >= 0) {  // the selected point and its neighbours are always named
      placeLabel(selected, taken, "hover");
      neighbours.forEach(function (pair) { placeLabel(pair[0], taken, "pinned"); });
    }
    if (view.hover >= 0 && view.hover !== selected) placeLabel(view.hover, taken, "hover");
    if (view.labels !== "none") {
      // near first (they win the space); a large table tries its first rows (the most
      // frequent words of a trained table) in row order
      var tries = large ? Math.min(n, view.labels === "all" ? MAX_ALL : 4 * MAX_LABELS) : n;
      for (k = 0; k < tries; k++) {
        var i = large ? k : order[n - 1 - k];
        if (i !== view.hover && i !== selected) placeLabel(i, taken, view.labels);
      }
    }
    modeButton.textContent = dims !== 3 ? "2-D only" : view.three ? "Show 2-D" : "Show 3-D";
    labelChoice.value = view.labels;
    var hidden = view.labels === "none" ? "" : n - view.shown > 0 ?
      " \u00b7 " + (n - view.shown) + " of " + n + " labels hidden (no room; hover or zoom)" : "";
    summary.textContent = describe() + hidden;
    document.title = data.title + ", " + describe();
    document.body.setAttribute("data-mode", view.three ? "3d" : "2d");
  }

  // -- pointing --------------------------------------------------------------------------------
  function nearest(x, y) {
    var best = -1, bestDistance = 12;
    pointsNear([x - 12, y - 12, x + 12, y + 12], function (i) {
      var d = Math.hypot(SX[i] - x, SY[i] - y);
      if (d < bestDistance || (d === bestDistance && view.three && SZ[i] < SZ[best])) { best = i; bestDistance = d; }
      return false;
    });
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

  // -- neighbours by cosine of the rows ----------------------------------------------------------
  function decodeVectors() {
    if (vectors !== null || !data.neighbors) return vectors;
    var block = document.getElementById("rowbook-vectors"), text = block.textContent.trim();
    var codes = new Uint8Array(128), alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (var a = 0; a < 64; a++) codes[alphabet.charCodeAt(a)] = a;
    var pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0, bytes = new Uint8Array(text.length / 4 * 3 - pad);
    for (var i = 0, j = 0; i < text.length; i += 4) {
      var v = codes[text.charCodeAt(i)] << 18 | codes[text.charCodeAt(i + 1)] << 12 |
              codes[text.charCodeAt(i + 2)] << 6 | codes[text.charCodeAt(i + 3)];
      bytes[j++] = v >> 16 & 255;
      if (j < bytes.length) bytes[j++] = v >> 8 & 255;
      if (j < bytes.length) bytes[j++] = v & 255;
    }
    block.textContent = "";  // the decoded rows replace the text: half the memory
    vectors = new Float32Array(bytes.buffer);
    return vectors;
  }

  // the k rows of largest dot product with row i (the rows are unit: cosine), i left out
  function cosineNeighbours(i, k) {
    var rows = decodeVectors(), d = data.neighbors.dim, best = [];
    var base = i * d;
    for (var j = 0; j < n; j++) {
      if (j === i) continue;
      var s = 0, o = j * d;
      for (var t = 0; t < d; t++) s += rows[base + t] * rows[o + t];
      if (best.length < k || s > best[best.length - 1][1]) {
        var at = best.length < k ? best.length : k - 1;
        while (at > 0 && s > best[at - 1][1]) { best[at] = best[at - 1]; at--; }
        best[at] = [j, s];
      }
    }
    return best;
  }

  function select(i) {
    selected = i;
    neighbours = i >= 0 && data.neighbors ? cosineNeighbours(i, Math.min(K, n - 1)) : [];
    showPanel();
    draw();
  }

  function showPanel() {
    var list = document.getElementById("neighbors"), note = document.getElementById("panel-note");
    list.textContent = "";
    if (selected < 0) { panel.hidden = true; return; }
    panel.hidden = false;
    document.getElementById("panel-title").textContent = data.shown[selected];
    if (!data.neighbors) {
      note.textContent = "this page holds no rows: write it with neighbors=True to list neighbours";
      return;
    }
    note.textContent = "nearest by cosine of the rows (" + data.neighbors.dim + " dimensions), not by distance on the screen";
    neighbours.forEach(function (pair) {
      var item = document.createElement("li"), button = document.createElement("button");
      button.type = "button";
      button.textContent = data.shown[pair[0]];
      button.addEventListener("click", function () { select(pair[0]); });
      var score = document.createElement("span");
      score.textContent = pair[1].toFixed(3);
      item.appendChild(button);
      item.appendChild(score);
      list.appendChild(item);
    });
  }

  // -- search --------------------------------------------------------------------------------------
  function findLabels(query, limit) {
    var q = query.toLowerCase(), exact = [], prefix = [], inside = [];
    if (!q) return [];
    if (lowered === null) lowered = data.labels.map(function (s) { return s.toLowerCase(); });
    for (var i = 0; i < n && exact.length < limit; i++) {
      var s = lowered[i];
      if (s === q) exact.push(i);
      else if (prefix.length < limit && s.lastIndexOf(q, 0) === 0) prefix.push(i);
      else if (inside.length < limit && s.indexOf(q) > 0) inside.push(i);
    }
    return exact.concat(prefix, inside).slice(0, limit);
  }

  function showMatches() {
    var found = findLabels(search.value, 12);
    matches.textContent = "";
    found.forEach(function (i) {
      var item = document.createElement("li");
      item.textContent = data.shown[i];
      item.addEventListener("mousedown", function (event) { event.preventDefault(); choose(i); });
      matches.appendChild(item);
    });
    matches.hidden = found.length === 0;
    return found;
  }

  // pick a point found by the search: select it and bring it to the centre of the view
  function choose(i) {
    matches.hidden = true;
    search.value = data.labels[i];
    var c = camera(), s = project(points[3 * i], points[3 * i + 1], points[3 * i + 2], c);
    view.panX += c.w / 2 - s[0];
    view.panY += c.h / 2 - s[1];
    select(i);
  }

  search.addEventListener("input", showMatches);
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      var found = findLabels(search.value, 1);
      if (found.length) choose(found[0]);
    } else if (event.key === "Escape") { matches.hidden = true; }
  });
  search.addEventListener("blur", function () { matches.hidden = true; });

  // -- the mouse -------------------------------------------------------------------------------------
  canvas.addEventListener("pointerdown", function (event) {
    var pan = !view.three || event.shiftKey || event.button !== 0;
    drag = { x: event.clientX, y: event.clientY, pan: pan, moved: 0 };
    try { canvas.setPointerCapture(event.pointerId); } catch (ignored) { /* synthetic event */ }
    canvas.style.cursor = "grabbing";
  });
  canvas.addEventListener("pointermove", function (event) {
    var xy = localXY(event);
    if (drag) {
      var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      drag.x = event.clientX;
      drag.y = event.clientY;
      drag.moved += Math.abs(dx) + Math.abs(dy);
      if (drag.pan) { view.panX += dx; view.panY += dy; }
      else {
        view.yaw += 0.01 * dx;
        view.pitch = Math.max(-1.57, Math.min(1.57, view.pitch + 0.01 * dy));
      }
      draw();
    }
    var hover = nearest(xy[0], xy[1]);
    if (hover !== view.hover) { view.hover = hover; if (!drag) draw(); }
    showTip(view.hover, xy[0], xy[1]);
  });
  function endDrag(event) {
    if (drag && drag.moved < 4 && event.type === "pointerup") {  // a click, not a drag
      var xy = localXY(event);
      select(nearest(xy[0], xy[1]));
    }
    drag = null;
    canvas.style.cursor = "grab";
  }
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
    var zoom = Math.max(0.05, Math.min(1000, view.zoom * factor));
    factor = zoom / view.zoom;
    var cx = xy[0] - canvas.clientWidth / 2, cy = xy[1] - canvas.clientHeight / 2;
    view.panX = cx + (view.panX - cx) * factor;  // keep the point under the cursor still
    view.panY = cy + (view.panY - cy) * factor;
    view.zoom = zoom;
    draw();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () { reset(); select(-1); });
  modeButton.addEventListener("click", function () {
    if (dims === 3) { view.three = !view.three; draw(); }
  });
  modeButton.disabled = dims !== 3;
  labelChoice.addEventListener("change", function () { view.labels = labelChoice.value; draw(); });
  document.getElementById("reset").addEventListener("click", function () { reset(); draw(); });

  var given = document.createElement("option");
  given.value = "";
  given.textContent = data.groups ? "groups" : "as written";
  colorChoice.appendChild(given);
  (data.metadata || []).forEach(function (column) {
    var option = document.createElement("option");
    option.value = column.name;
    option.textContent = column.name;
    colorChoice.appendChild(option);
  });
  colorChoice.value = data.color_by || "";
  colorChoice.disabled = !(data.metadata || []).length;
  colorChoice.addEventListener("change", function () { applyColors(); draw(); });

  // opened as page.html#selftest: hover, drag, zoom, search, click and colour by synthetic
  // events, and report what happened on <body> (for the headless-browser tests)
  function selfTest() {
    var box = canvas.getBoundingClientRect(), at = [SX[0], SY[0]], results = {};
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
    // a click on the hovered point selects it and lists its neighbours by cosine
    var t0 = performance.now();
    send("pointerdown", at[0], at[1]);
    send("pointerup", at[0], at[1]);
    results.clickMs = performance.now() - t0;
    results.selected = selected;
    results.panel = panel.hidden ? null : {
      title: document.getElementById("panel-title").textContent,
      neighbours: Array.prototype.map.call(document.querySelectorAll("#neighbors li"), function (li) {
        return [li.firstChild.textContent, parseFloat(li.lastChild.textContent)];
      }),
      indices: neighbours.map(function (pair) { return pair[0]; })
    };
    // searching: the last label, typed in part, then Enter
    var wanted = data.labels[n - 1];
    search.value = wanted;
    search.dispatchEvent(new Event("input"));
    results.matches = Array.prototype.map.call(matches.querySelectorAll("li"), function (li) { return li.textContent; });
    search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    results.found = selected;
    results.centred = Math.hypot(SX[selected] - canvas.clientWidth / 2, SY[selected] - canvas.clientHeight / 2) < 1;
    // colouring by every column: the legend each gives
    results.legends = {};
    Array.prototype.forEach.call(colorChoice.options, function (option) {
      colorChoice.value = option.value;
      colorChoice.dispatchEvent(new Event("change"));
      results.legends[option.value] = Array.prototype.map.call(legend.querySelectorAll("li"), function (li) { return li.textContent; });
    });
    colorChoice.value = data.color_by || "";
    colorChoice.dispatchEvent(new Event("change"));
    select(-1);
    at = [SX[0], SY[0]];
    var yaw = view.yaw;
    send("pointerdown", 10, 10);
    send("pointermove", 60, 30);
    send("pointerup", 60, 30);
    results.moved = Math.hypot(SX[0] - at[0], SY[0] - at[1]) > 1;
    results.rotated = view.yaw !== yaw;
    var zoom = view.zoom;
    canvas.dispatchEvent(new WheelEvent("wheel", { clientX: box.left + 5, clientY: box.top + 5,
                                                   deltaY: -200, cancelable: true }));
    results.zoomed = view.zoom > zoom;
    var t1 = performance.now();
    draw();
    results.drawMs = performance.now() - t1;
    document.body.setAttribute("data-selftest", JSON.stringify(results));
  }

  reset();
  applyColors();
  window.addEventListener("resize", resize);
  resize();
  document.body.setAttribute("data-mode", view.three ? "3d" : "2d");
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-script-ms", String(Math.round(performance.now() - started)));
  document.body.setAttribute("data-ready", String(n));
  if (window.location.hash === "#selftest") selfTest();
})();
