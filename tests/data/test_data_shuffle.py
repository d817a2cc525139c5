"""GloVe's shuffle: keys against SplitMix64 written out, the order against an argsort, the
external sort against the in-RAM one, and the temporary files removed."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.sparse as sp

from rowbook.data import shuffle
from rowbook.data.shuffle import record_keys, shuffle_records, shuffle_to_file


def _splitmix64(seed: int, k: int) -> int:
    """The k-th number (from 0) of SplitMix64 seeded with ``seed``, in Python integers
    (Steele, Lea and Flood 2014; Vigna's splitmix64.c)."""
    z = (seed + (k + 1) * 0x9E3779B97F4A7C15) % 2**64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def _matrix(n: int = 400, density: float = 0.1, seed: int = 0) -> sp.csr_matrix:
    X = sp.random(n, n, density=density, format="csr", random_state=seed)
    X.data += 0.5  # no value near zero
    return X


def test_keys_are_splitmix64_numbered_by_row_and_column():
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 2**31 - 1, 200), rng.integers(0, 2**31 - 1, 200)
    for seed in (0, 1, 2**40 + 3):
        keys = record_keys(rows, cols, seed)
        expected = [
            _splitmix64(seed, int(r) * 2**32 + int(c)) for r, c in zip(rows, cols, strict=True)
        ]
        assert keys.dtype == np.uint64 and keys.tolist() == expected


def test_in_ram_order_is_the_argsort_of_the_keys_over_all_records():
    X = _matrix()
    got = shuffle_records([X[:150], X[150:]], seed=7)  # bands of rows, as counting gives them
    coo = X.tocoo()
    order = np.argsort(record_keys(coo.row, coo.col, 7))
    np.testing.assert_array_equal(got.rows, coo.row[order])
    np.testing.assert_array_equal(got.cols, coo.col[order])
    np.testing.assert_array_equal(got.vals, coo.data[order])
    assert got.rows.dtype == got.cols.dtype == np.int32
    other_seed = shuffle_records([X], seed=8)
    assert not np.array_equal(other_seed.rows, got.rows)


@pytest.fixture
def spy(monkeypatch):
    """Count the runs written and the key bands merged by :func:`shuffle_to_file`."""
    counts = {"runs": 0, "bands": 0}
    sorted_run, write = shuffle._sorted_run, shuffle.RecordFile.write

    def count_run(*args):
        counts["runs"] += 1
        return sorted_run(*args)

    def count_band(self, c, start, values):
        counts["bands"] += c == 0
        return write(self, c, start, values)

    monkeypatch.setattr(shuffle, "_sorted_run", count_run)
    monkeypatch.setattr(shuffle.RecordFile, "write", count_band)
    return counts


@pytest.mark.parametrize("memory", [96 * 500, 96 * 3000, 1 << 30])
def test_external_sort_equals_the_in_ram_order_whatever_the_budget(memory, spy, tmp_path):
    X = _matrix()
    in_ram = shuffle_records([X], seed=3)
    bands = [X[a : a + 37] for a in range(0, X.shape[0], 37)]
    on_disk = shuffle_to_file(bands, seed=3, memory=memory, spill_dir=tmp_path)
    assert len(on_disk) == X.nnz
    for got, want in zip(on_disk.read(0, X.nnz), in_ram.read(0, X.nnz), strict=True):
        np.testing.assert_array_equal(got, want)
    for lo, hi in ((0, 1), (5000, 5100), (X.nnz - 3, X.nnz)):  # any job's slice
        for got, want in zip(on_disk.read(lo, hi), in_ram.read(lo, hi), strict=True):
            np.testing.assert_array_equal(got, want)
    if memory == 96 * 500:  # 500 records a run, about 500 a band
        assert spy["runs"] == -(-X.nnz // 500) and spy["bands"] >= X.nnz // 500
    assert [p.name for p in tmp_path.iterdir()] == [on_disk.folder.name]
    assert [p.name for p in on_disk.folder.iterdir()] == ["records"]  # runs removed once merged
    on_disk.close()
    assert not any(tmp_path.iterdir())


def test_the_records_file_goes_with_the_object(tmp_path):
    on_disk = shuffle_to_file([_matrix(50)], seed=1, memory=1 << 20, spill_dir=tmp_path)
    assert any(tmp_path.iterdir())
    del on_disk
    gc.collect()
    assert not any(tmp_path.iterdir())


def test_a_failure_while_sorting_leaves_no_files(tmp_path):
    def bands():
        yield _matrix(100)
        raise RuntimeError("the counting stopped")

    with pytest.raises(RuntimeError, match="counting stopped"):
        shuffle_to_file(bands(), seed=1, memory=96 * 100, spill_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_a_spill_dir_that_is_not_a_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"spill_dir .*missing is not a folder"):
        shuffle_to_file([_matrix(20)], seed=1, memory=1 << 20, spill_dir=tmp_path / "missing")
