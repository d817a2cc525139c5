"""The row-statistics figure: what it draws is the record it is given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rowbook.optim import RowStats
from rowbook.viz import plot_row_stats, row_stats_figure
from rowbook.viz.row_stats import never_touched_text


def _stats(n: int = 300, seed: int = 0) -> RowStats:
    rng = np.random.default_rng(seed)
    updates = np.maximum(0, (200 / np.arange(1, n + 1)).astype(int) - rng.integers(0, 2, n))
    last = np.where(updates > 0, 200, 0)
    return RowStats(
        updates,
        updates * 0.1,
        last,
        np.sqrt(updates) * 0.05,
        200,
        keys=tuple(f"w{i}" for i in range(n)),
        counts=1000 // np.arange(1, n + 1),
    )


def test_panels_draw_the_record(tmp_path: Path) -> None:
    stats = _stats()
    fig = row_stats_figure(stats)
    left, right = fig.axes
    x, y = left.collections[0].get_offsets().T
    np.testing.assert_array_equal(x, stats.frequency_rank())
    np.testing.assert_array_equal(y, np.maximum(stats.updates, 0.5))
    moved = stats.updates > 0
    x, y = right.collections[0].get_offsets().T
    np.testing.assert_array_equal(x, stats.updates[moved])
    np.testing.assert_allclose(y, stats.distance[moved])
    texts = [t.get_text() for t in fig.texts]
    assert never_touched_text(stats) in texts
    never = stats.never_touched()
    assert never and texts[-1].startswith(f"never touched: {len(never)} of 300 rows: '{never[0]}'")
    assert plot_row_stats(stats, tmp_path / "rows.png").stat().st_size > 10_000


def test_large_tables_are_sampled_and_untouched_tables_say_so() -> None:
    stats = _stats(n=5_000)
    fig = row_stats_figure(stats, max_points=300)
    assert len(fig.axes[0].collections[0].get_offsets()) == 300
    assert "300 drawn" in fig._suptitle.get_text()
    idle = RowStats(np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), 0)
    assert never_touched_text(idle) == "never touched: 3 of 3 rows: '0', '1', '2'"
    assert "no row was updated" in [t.get_text() for t in row_stats_figure(idle).axes[1].texts]
    busy = RowStats(np.ones(2), np.ones(2), np.ones(2), np.ones(2), 1)
    assert never_touched_text(busy) == "every one of the 2 rows was updated at least once"
    with pytest.raises(ValueError, match="max_points"):
        row_stats_figure(busy, max_points=0)
