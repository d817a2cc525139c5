"""Per-row telemetry of the optimizers: counted against the ids each step looked up, and
invisible to the weights (the same tables, bit for bit, with it on or off)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rowbook.nn import Embedding
from rowbook.optim import SGD, Adagrad, Adam, RowStats, RowWiseAdagrad, SparseAdam
from rowbook.optim.row_stats import RowStatsRecorder
from rowbook.optim.row_stats_kernels import record_rows, record_rows_reference

V, D, STEPS = 40, 4, 12


def _batches(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per step: ids (with repeats, rows 0..29 only) and the upstream weights of a linear loss."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(STEPS):
        ids = rng.integers(0, 30, size=rng.integers(3, 9))
        out.append((ids, rng.standard_normal((len(ids), D)).astype(np.float32)))
    return out


def _train(make_opt, *, sparse: bool = True, row_stats: bool = True, padding_idx=None):
    emb = Embedding(V, D, sparse=sparse, padding_idx=padding_idx, rng=0)
    start = emb.weight.data.copy()
    opt = make_opt(emb.parameters(), row_stats)
    for ids, w in _batches():
        opt.zero_grad()
        (emb(ids) * w).sum().backward()
        opt.step()
    return emb, opt, start


OPTIMIZERS = {
    "sgd": lambda p, rs: SGD(p, lr=0.1, row_stats=rs),
    "sgd_momentum": lambda p, rs: SGD(p, lr=0.1, momentum=0.9, row_stats=rs),
    "adagrad": lambda p, rs: Adagrad(p, lr=0.1, row_stats=rs),
    "rowwise_adagrad": lambda p, rs: RowWiseAdagrad(p, lr=0.1, row_stats=rs),
    "sparse_adam": lambda p, rs: SparseAdam(p, lr=0.1, row_stats=rs),
}


def _hand_count(padding_idx=None):
    """What each step touched, counted by hand from the ids: updates, norms, last step."""
    updates, last, norms = Counter(), {}, np.zeros(V)
    for step, (ids, w) in enumerate(_batches(), start=1):
        grad = np.zeros((V, D))
        np.add.at(grad, ids, w.astype(np.float64))  # the gradient of sum(E[ids] * w)
        for r in set(ids.tolist()) - {padding_idx}:
            updates[r] += 1
            last[r] = step
            norms[r] += np.linalg.norm(grad[r])
    return updates, last, norms


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_counts_equal_the_ids_each_step_touched(name: str) -> None:
    emb, opt, start = _train(OPTIMIZERS[name])
    stats = opt.row_stats()
    updates, last, norms = _hand_count()
    assert stats.steps == STEPS and len(stats) == V
    assert stats.updates.tolist() == [updates[r] for r in range(V)]
    assert stats.last_step.tolist() == [last.get(r, 0) for r in range(V)]
    np.testing.assert_allclose(stats.grad_norm_sum, norms, rtol=1e-6)
    assert stats.never_touched() == [r for r in range(V) if updates[r] == 0]
    assert set(range(30, V)) <= set(stats.never_touched())  # never looked up
    travelled = np.linalg.norm(emb.weight.data.astype(np.float64) - start, axis=1)
    if name == "sgd_momentum":  # momentum keeps moving rows after their last gradient, so the
        moved = travelled > 0  # distance is measured from the row's value before its first update
        assert (moved == (stats.updates > 0)).all()
    np.testing.assert_allclose(stats.distance, travelled, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_telemetry_leaves_the_weights_unchanged(name: str) -> None:
    with_stats, _, _ = _train(OPTIMIZERS[name], row_stats=True)
    without, opt, _ = _train(OPTIMIZERS[name], row_stats=False)
    assert np.array_equal(with_stats.weight.data, without.weight.data)
    with pytest.raises(ValueError, match="row_stats=True"):
        opt.row_stats()


def test_dense_gradients_count_the_rows_with_a_gradient() -> None:
    emb, opt, start = _train(lambda p, rs: Adam(p, lr=0.05, row_stats=rs), sparse=False)
    stats = opt.row_stats()
    updates, last, norms = _hand_count()
    assert stats.updates.tolist() == [updates[r] for r in range(V)]
    assert stats.last_step.tolist() == [last.get(r, 0) for r in range(V)]
    np.testing.assert_allclose(stats.grad_norm_sum, norms, rtol=1e-6)
    # dense Adam keeps moving a row on its momentum: distance is from its first update on
    travelled = np.linalg.norm(emb.weight.data.astype(np.float64) - start, axis=1)
    np.testing.assert_allclose(stats.distance, travelled, rtol=1e-6, atol=1e-12)


def test_padding_row_is_never_touched() -> None:
    _, opt, _ = _train(OPTIMIZERS["sparse_adam"], padding_idx=3)
    stats = opt.row_stats()
    updates, _, _ = _hand_count(padding_idx=3)
    assert stats.updates[3] == 0 and 3 in stats.never_touched()
    assert stats.updates.tolist() == [updates[r] for r in range(V)]


def test_kernel_equals_reference() -> None:
    rng = np.random.default_rng(5)
    arrays = []
    for _ in range(2):
        arrays.append(
            [
                np.zeros(60, np.int64),
                np.zeros(60),
                np.zeros(60, np.int64),
                np.zeros((60, 3), np.float32),
            ]
        )
    table = rng.standard_normal((60, 3)).astype(np.float32)
    for step in range(1, 6):
        rows = np.unique(rng.integers(0, 60, 20))
        g = rng.standard_normal((len(rows), 3)).astype(np.float32)
        record_rows(*arrays[0], table, rows, g, step)
        record_rows_reference(*arrays[1], table, rows, g, step)
        table[rows] -= 0.1 * g
    for fast, slow in zip(*arrays, strict=True):
        np.testing.assert_allclose(fast, slow, rtol=1e-12)


def test_checkpoint_resumes_the_telemetry(tmp_path: Path) -> None:
    batches = _batches()
    full = Embedding(V, D, sparse=True, rng=0)
    opt = SparseAdam(full.parameters(), lr=0.1, row_stats=True)
    half = Embedding(V, D, sparse=True, rng=0)
    first = SparseAdam(half.parameters(), lr=0.1, row_stats=True)
    for step, (ids, w) in enumerate(batches):
        for emb, o in ((full, opt), (half, first)) if step < STEPS // 2 else ((full, opt),):
            o.zero_grad()
            (emb(ids) * w).sum().backward()
            o.step()
    first.save(tmp_path / "opt.npz")
    resumed = SparseAdam(half.parameters(), lr=0.1, row_stats=True)
    resumed.load(tmp_path / "opt.npz")
    for ids, w in batches[STEPS // 2 :]:
        resumed.zero_grad()
        (half(ids) * w).sum().backward()
        resumed.step()
    a, b = opt.row_stats(), resumed.row_stats()
    assert a.steps == b.steps == STEPS
    for name in ("updates", "last_step", "grad_norm_sum", "distance"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    # a file saved without telemetry loads into an optimizer that records: it starts afresh
    plain = SparseAdam(half.parameters(), lr=0.1)
    plain.save(tmp_path / "plain.npz")
    again = SparseAdam(half.parameters(), lr=0.1, row_stats=True)
    again.load(tmp_path / "plain.npz")
    assert again.row_stats().steps == 0 and "row_stats" not in plain.state_dict()


def test_which_parameter_and_errors() -> None:
    emb, head = Embedding(6, 2, sparse=True, rng=0), Embedding(3, 2, rng=0)
    opt = Adagrad([*emb.parameters(), *head.parameters()], row_stats=True)
    emb([1, 1, 2]).sum().backward()
    opt.step()
    with pytest.raises(ValueError, match=r"steps 2 parameters; say which table"):
        opt.row_stats()
    stats = opt.row_stats(emb.weight, keys=list("abcdef"), counts=[1, 9, 5, 0, 0, 0])
    assert stats.updates.tolist() == [0, 1, 1, 0, 0, 0] and stats.never_touched() == list("adef")
    assert stats.frequency_rank().tolist() == [3, 1, 2, 4, 5, 6]
    assert opt.row_stats(head.weight).steps == 0  # no gradient yet
    with pytest.raises(ValueError, match="not one of the parameters"):
        opt.row_stats(Embedding(2, 2, rng=0).weight)
    with pytest.raises(TypeError, match="row_stats must be True or False"):
        SGD(emb.parameters(), row_stats="yes")  # type: ignore[arg-type]


def test_row_stats_record_checks_its_fields() -> None:
    good = {
        "updates": [1, 0],
        "grad_norm_sum": [0.5, 0.0],
        "last_step": [1, 0],
        "distance": [0.1, 0.0],
        "steps": 1,
    }
    assert RowStats(**good).summary()["never_touched"] == 1
    with pytest.raises(ValueError, match="one entry per row"):
        RowStats(**{**good, "distance": [0.1]})
    with pytest.raises(ValueError, match="steps=0 must be"):
        RowStats(**{**good, "steps": 0})
    with pytest.raises(ValueError, match="keys must name every row"):
        RowStats(**good, keys=("a",))
    with pytest.raises(ValueError, match="counts must be 2 non-negative"):
        RowStats(**good, counts=[1, -1])
    recorder = RowStatsRecorder((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"'updates' has shape \(3,\), expected \(2,\)"):
        recorder.load_state_dict({**recorder.state_dict(), "updates": np.zeros(3, np.int64)})
