"""Regenerate the manual's pictures from the demo: ``python docs/make_pictures.py``.

Runs ``rowbook demo`` (the same code as the command, seed 0) into a temporary folder and
copies its pictures and 3-D views into ``docs/assets/demo/``, where the walkthrough pages
show them. Commit the results (small PNGs and self-contained HTML files). The text the demo
prints goes to ``docs/assets/demo/demo.txt``, so the pages can be checked against it.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

from rowbook.demo import run_demo

PICTURES = (
    "color_wheel.png",
    "color_cosine.png",
    "color_wheel.html",
    "word_space.png",
    "word_space.html",
    "lm_training.png",
)


def main() -> None:
    assets = Path(__file__).resolve().parent / "assets" / "demo"
    assets.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        printed = io.StringIO()
        with redirect_stdout(printed):
            run_demo(tmp, seed=0)
        for name in PICTURES:
            shutil.copyfile(Path(tmp) / name, assets / name)
        text = printed.getvalue().replace(tmp, "rowbook-demo")
        (assets / "demo.txt").write_text(text, encoding="utf-8")
    print(f"wrote {len(PICTURES) + 1} files to {assets}")


if __name__ == "__main__":
    main()
