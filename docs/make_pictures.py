"""Regenerate the manual's pictures from the demo: ``python docs/make_pictures.py``.

Runs ``rowbook demo`` (the same code as the command, seed 0) into a temporary folder and
copies its pictures and 3-D views into ``docs/assets/demo/``, where the walkthrough pages
show them. Commit the results (small PNGs and self-contained HTML files). The text the demo
prints goes to ``docs/assets/demo/demo.txt``, so the pages can be checked against it.
Then draws the two pictures of the optimizers, vectors and pictures pages into
``docs/assets/``: which rows of a table trained, and what moved between two seeds; and the
teaching pictures of the from-scratch page (``docs/assets/teaching/``): the one-hot product,
the rows a batch's gradient touches, the BPE merges as a GIF, a 3-D toy space.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

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
    for path in page_pictures(assets.parent) + teaching_pictures(assets.parent / "teaching"):
        print(f"wrote {path}")
    print(f"wrote {dimension_picture(assets.parent)}")


def page_pictures(assets: Path) -> list[Path]:
    """``row_stats.png`` (SparseAdam on Zipf batches) and ``moved.png`` (two word2vec seeds)."""
    from rowbook.data.synthetic import planted_corpus
    from rowbook.models import Word2Vec
    from rowbook.nn import Embedding
    from rowbook.optim import SparseAdam
    from rowbook.vectors import compare
    from rowbook.viz import plot_row_stats
    from rowbook.viz.compare import plot_moved

    rng, V = np.random.default_rng(0), 2_000
    emb = Embedding(V, 16, sparse=True, rng=0)
    opt = SparseAdam(emb.parameters(), lr=0.05, row_stats=True)
    for _ in range(200):  # as on the optimizers page
        ids = np.minimum(rng.zipf(1.3, size=256) - 1, V - 1)
        opt.zero_grad()
        (emb(ids) ** 2).sum().backward()
        opt.step()
    stats = opt.row_stats(keys=[f"w{i}" for i in range(V)])
    rows = plot_row_stats(stats, assets / "row_stats.png", dpi=80)
    corpus = planted_corpus(3000, seed=0)
    settings = {"vector_size": 24, "min_count": 5, "sample": 0.0, "epochs": 8, "workers": 1}
    a, b = (Word2Vec(**settings, seed=s).fit(corpus).vectors for s in (0, 1))
    moved = plot_moved(
        compare(a, b), a, b, assets / "moved.png", top=12, names=("seed 0", "seed 1"), dpi=80
    )
    return [rows, moved]


#: The small text the BPE animation trains on, and the line it re-cuts merge by merge.
BPE_TEXT = ["low lower lowest newer newest wider widest the cat sat on the mat"] * 5 + [
    "a lower newer slower show"
] * 3
BPE_LINE = "the lowest newer, the widest mat"


def teaching_pictures(folder: Path) -> list[Path]:
    """The pictures of docs/scratch.md: one-hot product, touched rows, BPE merges, toy space."""
    from rowbook.demo.lookup import HAND_TABLE
    from rowbook.text import ByteLevelBPE
    from rowbook.viz import (
        merge_frames,
        plot_one_hot,
        plot_touched_rows,
        plot_toy_space,
        write_merge_animation,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["<pad>", "<unk>", "the", "cat", "sat", "on", "mat"]
    tokens = "the cat sat on the mat".split()
    batches = [[2, 3, 4, 5, 2, 6], [2, 3, 4, 0, 0, 0], [3, 1, 6, 0, 0, 0], [4, 5, 2, 6, 0, 0]]
    model = ByteLevelBPE().fit(BPE_TEXT, 256 + 24)
    return [
        plot_one_hot(
            [2, 3, 4, 5, 2, 6], HAND_TABLE, folder / "one_hot.png", tokens=tokens, vocab=vocab
        ),
        plot_touched_rows(batches, 7, folder / "touched_rows.png", labels=vocab),
        write_merge_animation(merge_frames(model, BPE_LINE), folder / "bpe_merges.gif"),
        plot_toy_space(folder / "toy_space.png"),
    ]


#: The sweep of d drawn on the models page (about 3 minutes on 2 busy cores).
DIMENSION_SWEEP = {"sentences": 1000, "held_out": 500, "epochs": 5, "seed": 0}
DIMENSIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def dimension_picture(assets: Path) -> Path:
    """``dimension_sweep.png``: word2vec and NPLM trained at each d of ``DIMENSIONS``."""
    from rowbook.demo.dimensions import dimension_sweep, dimension_table
    from rowbook.viz.dimensions import plot_dimension_sweep

    rows = dimension_sweep(DIMENSIONS, **DIMENSION_SWEEP)
    print(dimension_table(rows))
    return plot_dimension_sweep(rows, assets / "dimension_sweep.png", dpi=80)


if __name__ == "__main__":
    main()
