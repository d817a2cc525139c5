"""The sweep of d (rowbook.demo.dimensions): skip-gram's loss against torch, the analogy
score against the 3CosAdd formula in NumPy, a tiny seeded sweep whose training loss falls
with d, and its picture."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook import Vectors
from rowbook.data.synthetic import planted_analogies
from rowbook.demo.dimensions import (
    DimensionRow,
    analogy_score,
    dimension_sweep,
    dimension_table,
    sgns_loss,
)
from rowbook.viz.dimensions import plot_dimension_sweep


def test_sgns_loss_equals_torchs():
    rng = np.random.default_rng(0)
    W_in, W_out = rng.standard_normal((2, 30, 6))
    centres, contexts = rng.integers(0, 30, 40), rng.integers(0, 30, 40)
    negatives = rng.integers(0, 30, (40, 5))
    u = torch.tensor(W_in)[centres]
    pos = (u * torch.tensor(W_out)[contexts]).sum(1)
    neg = torch.einsum("nd,nkd->nk", u, torch.tensor(W_out)[negatives])
    expected = -(torch.nn.functional.logsigmoid(pos) + torch.nn.functional.logsigmoid(-neg).sum(1))
    got = sgns_loss(W_in, W_out, centres, contexts, negatives)
    assert got == pytest.approx(expected.mean().item(), rel=1e-12)


def test_analogy_score_equals_3cosadd_in_numpy():
    words = sorted({w for q in planted_analogies() for w in q})
    table = np.random.default_rng(1).standard_normal((len(words), 4))
    index = {w: i for i, w in enumerate(words)}
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    hits = 0
    for a, b, c, d in planted_analogies():
        scores = unit @ (unit[index[b]] - unit[index[a]] + unit[index[c]])
        scores[[index[a], index[b], index[c]]] = -np.inf
        hits += words[int(np.argmax(scores))] == d
    assert analogy_score(Vectors(words, table)) == hits / len(planted_analogies())


def test_a_tiny_sweep_has_one_row_per_model_and_d_and_fits_better_with_more_d(tmp_path):
    rows = dimension_sweep([2, 32], sentences=150, held_out=50, epochs=3, seed=0)
    assert [(r.model, r.dim) for r in rows] == [
        ("word2vec", 2),
        ("word2vec", 32),
        ("nplm", 2),
        ("nplm", 32),
    ]
    assert all(isinstance(r, DimensionRow) and 0 <= r.analogy <= 1 for r in rows)
    assert all(np.isfinite([r.train_loss, r.held_out_loss]).all() for r in rows)
    nplm = [r for r in rows if r.model == "nplm"]
    assert nplm[1].train_loss < nplm[0].train_loss - 0.1  # more room, a closer fit
    assert dimension_table(rows).count("\n") == len(rows) + 1
    path = plot_dimension_sweep(rows, tmp_path / "sweep.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_sweep_settings_name_the_parameter():
    with pytest.raises(ValueError, match="models must be one of 'word2vec', 'nplm'"):
        dimension_sweep([2], models=("glove",))
    with pytest.raises(ValueError, match="dims must be an integer >= 1, got 0"):
        dimension_sweep([0])
