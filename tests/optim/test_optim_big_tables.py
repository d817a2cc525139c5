"""Tables past RAM: blocked initialisation, lazily resident state, state and tables on disk.

The memory checks run in a child process and compare its peak RSS with what the table
itself needs, with a margin; they assert bounds, never timings.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rowbook.autograd.sparse import scatter_add_rows
from rowbook.nn import Embedding, Parameter, init
from rowbook.optim import RowWiseAdagrad, SparseAdam, lazy_zeros, memmap_factory


def _peak_mb(code: str) -> float:
    """Peak RSS growth (MB) of running ``code`` in a fresh interpreter, after imports."""
    script = "\n".join(
        [
            "import resource, numpy as np",
            "import rowbook.nn, rowbook.optim",
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
            textwrap.dedent(code),
            "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
            "print((after - before) / 1024)",
        ]
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def test_blocked_initialisation_draws_the_same_values_as_one_draw():
    w = Parameter(np.empty((3000, 500), dtype=np.float32))  # 1.5M values: two blocks
    init.normal_(w, std=0.1, rng=5)
    expected = np.random.default_rng(5).normal(0.0, 0.1, size=(3000, 500)).astype(np.float32)
    np.testing.assert_array_equal(w.data, expected)


def test_an_embedding_table_builds_in_about_its_own_size():
    # (2M, 64) float32 is 512 MB; a float64 draw of the whole table would add 1 GB more.
    grown = _peak_mb("emb = rowbook.nn.Embedding(2_000_000, 64, rng=0)")
    assert grown < 512 * 1.25, f"building a 512 MB table took {grown:.0f} MB"


def test_sparse_adam_state_is_resident_only_for_touched_rows():
    # Full moments would be 2 x 1 GB; 100 steps of 256 random ids touch < 26k rows. The
    # table is lazy too, so what grows is the touched pages of table and moments.
    code = """
        V, d = 4_000_000, 64
        table = rowbook.nn.Parameter(rowbook.optim.lazy_zeros("table", (V, d), np.float32))
        opt = rowbook.optim.SparseAdam([table], lr=0.01)
        rng = np.random.default_rng(0)
        from rowbook.autograd.sparse import scatter_add_rows
        for _ in range(100):
            ids = rng.integers(0, V, 256)
            table.grad = scatter_add_rows(ids, np.ones((256, d), np.float32), V)
            opt.step()
    """
    grown = _peak_mb(code)
    table_mb = 4_000_000 * 64 * 4 / 2**20  # the state alone would be twice this
    assert grown < table_mb * 0.5, f"100 sparse steps made {grown:.0f} MB resident"


def test_lazy_zeros_is_zero_writable_and_shaped():
    a = lazy_zeros("m", (5, 3), np.float64)
    assert a.flags.writeable and a.shape == (5, 3) and not a.any()
    assert lazy_zeros("m", (0, 3), np.float32).shape == (0, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda params, factory: SparseAdam(params, lr=0.05, state_factory=factory),
        lambda params, factory: RowWiseAdagrad(params, lr=0.5, state_factory=factory),
    ],
    ids=["SparseAdam", "RowWiseAdagrad"],
)
def test_a_memmap_table_with_state_on_disk_steps_exactly_like_one_in_ram(tmp_path, make):
    V, d = 1000, 8
    start = np.random.default_rng(1).normal(size=(V, d)).astype(np.float32)
    on_disk = np.lib.format.open_memmap(
        tmp_path / "table.npy", mode="w+", dtype=np.float32, shape=(V, d)
    )
    on_disk[...] = start
    (tmp_path / "state").mkdir()
    in_ram = Embedding.from_pretrained(start.copy(), freeze=False, sparse=True)
    mapped = Embedding.from_pretrained(on_disk, freeze=False, sparse=True)
    assert np.shares_memory(mapped.weight.data, on_disk)
    opt_ram = make(in_ram.parameters(), None)
    opt_disk = make(mapped.parameters(), memmap_factory(tmp_path / "state"))
    rng = np.random.default_rng(2)
    for _ in range(5):
        ids = rng.integers(0, V, 40)
        g = rng.normal(size=(40, d)).astype(np.float32)
        for layer, opt in ((in_ram, opt_ram), (mapped, opt_disk)):
            opt.zero_grad()
            layer.weight.grad = scatter_add_rows(ids, g, V)
            opt.step()
    on_disk.flush()
    np.testing.assert_array_equal(np.load(tmp_path / "table.npy"), in_ram.weight.data)
    assert sorted(p.name for p in (tmp_path / "state").iterdir())  # the state went to disk


def test_memmap_factory_needs_an_existing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        memmap_factory(tmp_path / "missing")
