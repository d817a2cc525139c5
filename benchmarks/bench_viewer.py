"""The HTML view at 100,000 points, opened in headless Chromium.

A table of 100,000 rows of 100 dimensions (50 clusters) with a label per row and two
metadata columns is written with ``write_html`` (3-D PCA, the rows embedded for the
neighbour panel: a 60 MB page), then opened in headless Chromium with the page's self-test.
Measured, as medians of a few openings:

* **open**: from navigation start (reading and parsing the page included) to the first frame
  drawn, by the page's own clock (``performance.now()`` when it sets ``data-ready``);
* **click**: a click on a point, to its neighbour panel filled: the first one decodes the
  embedded rows and scans all of them;
* **frame**: one redraw of the 3-D view (what each step of a rotation costs);

beside the same page at 1,000 points, and the same 100,000 points without the embedded rows.
The panel's neighbours are checked against NumPy's cosine ranking. Writing the page (Python)
is timed too. Target: open within 3 s.

    python benchmarks/bench_viewer.py           # 100,000 points
    python benchmarks/bench_viewer.py --quick   # 10,000 points, a smoke test
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Row, machine, print_table, print_targets

from rowbook.vectors.neighbors import unit_rows
from rowbook.viz import write_html


def table(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = 3 * rng.standard_normal((50, d))
    return (centres[rng.integers(0, 50, n)] + rng.standard_normal((n, d))).astype(np.float32)


def open_page(browser: str, page: Path, profile: Path) -> dict:
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--window-size=1200,800",
        "--dump-dom",
        page.as_uri() + "#selftest",
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True).stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', body))
    if "data-error" in re.search(r"<html[^>]*>", dom).group(0):
        raise RuntimeError(f"the viewer failed in {page}")
    return {
        "ready": float(attrs["data-ready-ms"]),
        **json.loads(html.unescape(attrs["data-selftest"])),
    }


def measure(
    browser: str, folder: Path, name: str, X: np.ndarray, repeat: int, **kwargs
) -> tuple[list[dict], float]:
    n = len(X)
    metadata = {"cluster": [f"c{i % 50}" for i in range(n)], "count": list(range(n, 0, -1))}
    start = time.perf_counter()
    page = write_html(
        X,
        folder / f"{name}.html",
        labels=[f"word{i}" for i in range(n)],
        metadata=metadata,
        dims=3,
        **kwargs,
    )
    written = time.perf_counter() - start
    runs = [open_page(browser, page, folder / f"profile-{name}-{k}") for k in range(repeat)]
    return runs, written


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--quick", action="store_true", help="10,000 points: a smoke test")
    args = parser.parse_args(argv)
    browser = next(
        (
            shutil.which(b)
            for b in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(b)
        ),
        None,
    )
    if browser is None:
        print("no chromium on PATH: install Debian's chromium (apt-get install chromium)")
        return 0 if args.quick else 1
    n, d, repeat = (10_000, 100, 1) if args.quick else (100_000, 100, 5)
    version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"The HTML view: {n:,} x {d} rows, 3-D PCA, opened headless ({version}, 1200 x 800); "
        f"{machine()}"
    )
    X = table(n, d)
    rows, checks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, data, kwargs in (
            ("small", X[:1000], {}),
            ("large", X, {}),
            ("large-no-rows", X, {"neighbors": False}),
        ):
            runs, written = measure(browser, folder, name, data, repeat, **kwargs)
            size = (folder / f"{name}.html").stat().st_size / 1e6
            group = f"{len(data):,} points" + (", no rows" if kwargs else "")
            median = {
                key: float(np.median([r[key] for r in runs]))
                for key in ("ready", "clickMs", "drawMs")
            }
            rows += [
                Row(
                    group,
                    "open (navigation start to first frame)",
                    median["ready"],
                    f"page {size:.1f} MB, written in {written:.1f} s",
                ),
                Row(group, "click: neighbour panel filled", median["clickMs"]),
                Row(group, "one 3-D frame", median["drawMs"]),
            ]
            panel = runs[0]["panel"]
            if kwargs == {} and panel:
                unit = unit_rows(data)[1].astype(np.float64)
                scores = unit @ unit[runs[0]["selected"]]
                scores[runs[0]["selected"]] = -np.inf
                checks.append(panel["indices"] == np.argsort(-scores, kind="stable")[:10].tolist())
    print_table(
        "Opening, clicking, drawing (medians, ms)",
        rows,
        {r.group: "open (navigation start to first frame)" for r in rows},
    )
    t = {(r.group, r.name): r.ms for r in rows}
    opened = t[f"{n:,} points", "open (navigation start to first frame)"]
    print(f"\nneighbour panels equal to NumPy's cosine ranking: {sum(checks)} of {len(checks)}")
    ok = print_targets(
        [
            (f"3000 ms / open at {n:,} points", 3000 / opened, 1.0),
            ("neighbours exact (share of pages)", sum(checks) / max(len(checks), 1), 1.0),
        ]
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
