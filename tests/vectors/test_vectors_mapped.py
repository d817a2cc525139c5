"""Mapped tables: the same answers as in memory, the conversion cache, memory under a cap."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import rowbook
from rowbook.data.synthetic_vectors import clustered_vectors
from rowbook.models import Word2Vec
from rowbook.vectors import SubwordVectors, Vectors
from rowbook.vectors.mapped import cache_path, maps_a_file


@pytest.fixture(scope="module")
def table() -> Vectors:
    rows = clustered_vectors(2000, 24, seed=2)
    return Vectors([f"w{i}" for i in range(len(rows))], rows, counts=np.arange(2000, 0, -1))


def _close(got: list, want: list) -> None:
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def _same_answers(mapped: Vectors, table: Vectors) -> None:
    for key in ("w0", "w77", "w1999"):
        _close(mapped.most_similar(key, topn=8), table.most_similar(key, topn=8))
    _close(
        mapped.most_similar_cosmul(["w3", "w4"], ["w5"], topn=3),
        table.most_similar_cosmul(["w3", "w4"], ["w5"], topn=3),
    )
    assert mapped.similarity("w1", "w2") == table.similarity("w1", "w2")
    np.testing.assert_array_equal(mapped["w9"], table["w9"])


@pytest.mark.parametrize("name", ["v.npz", "v.safetensors"])
def test_rowbook_files_map_and_answer_as_in_memory(table, tmp_path, name):
    table.save(tmp_path / name)
    mapped = Vectors.load(tmp_path / name, mmap=True)
    assert mapped.mapped
    assert mapped.path == tmp_path / name and not Vectors.load(tmp_path / name).mapped
    _same_answers(mapped, table)
    assert mapped._unit is None  # no full-size copy of unit rows was made
    assert mapped.norms.shape == (2000,)


def test_saved_members_are_aligned_for_mapping(table, tmp_path):
    from rowbook._npz import _data_offset

    table.save(tmp_path / "v.npz")
    with zipfile.ZipFile(tmp_path / "v.npz") as archive:
        for info in archive.infolist():
            assert _data_offset(archive, info) % 64 == 0, info.filename


@pytest.mark.parametrize("fmt", ["binary", "text", "glove", "fasttext"])
def test_other_formats_convert_once_into_a_checked_cache(table, tmp_path, fmt):
    source = tmp_path / f"vectors.{fmt}"
    if fmt == "fasttext":
        rng = np.random.default_rng(0)
        keys = table.index_to_key  # 2000 x 24 float32: large enough to be mapped
        subword = SubwordVectors(
            keys,
            rng.standard_normal((2000 + 64, 24)),
            minn=3,
            maxn=4,
            bucket=64,
            counts=np.arange(2000, 0, -1),
        )
        from rowbook.vectors.fasttext_format import FastTextArgs, FastTextFile, write_fasttext_bin

        write_fasttext_bin(
            source,
            FastTextFile(
                FastTextArgs(dim=24, bucket=64, minn=3, maxn=4),
                keys,
                subword.counts,
                subword.input_matrix,
                np.zeros((2000, 24), np.float32),
            ),
        )
        expected = subword
    else:
        table.save_word2vec_format(source, binary=fmt == "binary", write_header=fmt != "glove")
        expected = table

    def load() -> Vectors:
        if fmt == "fasttext":
            return SubwordVectors.load_fasttext(source, mmap=True)
        return Vectors.load_word2vec_format(
            source, binary=fmt == "binary", no_header=fmt == "glove", mmap=True
        )

    first = load()
    cache = first.path
    assert first.mapped and cache.parent == tmp_path and cache.name.startswith(source.name)
    made = cache.stat().st_mtime_ns
    second = load()  # the cache is reused, not rebuilt
    assert cache.stat().st_mtime_ns == made
    for mapped in (first, second):
        assert mapped.index_to_key == expected.index_to_key
        np.testing.assert_allclose(mapped.vectors, expected.vectors, rtol=1e-6)
        assert [k for k, _ in mapped.most_similar("w5", topn=5)] == [
            k for k, _ in expected.most_similar("w5", topn=5)
        ]
    if fmt == "fasttext":
        np.testing.assert_allclose(
            second.vector_for("w5xyz"), expected.vector_for("w5xyz"), rtol=1e-6
        )
    # the source changes: the cache is rebuilt
    os.utime(source, ns=(made + 10**9, made + 10**9))
    with pytest.warns(UserWarning, match="changed since its mapped cache"):
        rebuilt = load()
    assert rebuilt.index_to_key == expected.index_to_key and cache.stat().st_mtime_ns != made


def test_a_cache_of_another_source_is_refused(table, tmp_path):
    table.save_word2vec_format(tmp_path / "a.bin", binary=True)
    table.save_word2vec_format(tmp_path / "b.bin", binary=True)
    cache_a = Vectors.load_word2vec_format(tmp_path / "a.bin", binary=True, mmap=True).path
    options = {
        "binary": True,
        "no_header": False,
        "limit": None,
        "encoding": "utf8",
        "unicode_errors": "strict",
        "datatype": "float32",
        "allow_nonfinite": False,
    }
    cache_b = cache_path(tmp_path / "b.bin", "word2vec binary", options)
    cache_b.write_bytes(cache_a.read_bytes())  # a's cache where b's belongs
    with pytest.raises(
        ValueError, match=r"is a mapped cache of .*a\.bin read as word2vec binary.*not of .*b\.bin"
    ):
        Vectors.load_word2vec_format(tmp_path / "b.bin", binary=True, mmap=True)
    cache_b.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"cannot be read .* delete it to rebuild it"):
        Vectors.load_word2vec_format(tmp_path / "b.bin", binary=True, mmap=True)


def test_the_cache_can_live_in_a_named_folder(table, tmp_path):
    table.save_word2vec_format(tmp_path / "v.txt")
    mapped = Vectors.load_word2vec_format(
        tmp_path / "v.txt", mmap=True, cache_dir=tmp_path / "caches"
    )
    assert mapped.path.parent == tmp_path / "caches" and mapped.index_to_key == table.index_to_key


def test_rowbook_load_maps_a_saved_model(tmp_path):
    words = np.random.default_rng(0).integers(0, 3000, (400, 30))
    corpus = [[f"w{i}" for i in sentence] for sentence in words]
    model = Word2Vec(vector_size=16, min_count=1, epochs=1, workers=1, seed=0).fit(corpus)
    assert model.W_in_.nbytes > 64 * 1024  # large enough to be mapped
    model.save(tmp_path / "m.npz")
    mapped = rowbook.load(tmp_path / "m.npz", mmap=True)
    assert type(mapped) is Word2Vec and maps_a_file(mapped.W_in_)  # .vectors is a copy, by contract
    np.testing.assert_array_equal(mapped.W_in_, model.W_in_)
    key = model.vectors.index_to_key[3]
    assert mapped.vectors.most_similar(key, topn=3) == model.vectors.most_similar(key, topn=3)


BIGGER_THAN_THE_CAP = """
import resource, sys
import numpy as np
from rowbook.vectors import Vectors
from rowbook.vectors.neighbors import row_norms
_ = np.ones((256, 256), np.float32) @ np.ones(256, np.float32)  # BLAS makes its buffers first
warm = np.ones((2, 2), np.float32)
warm.flags.writeable = False
row_norms(warm)  # numba compiles (or loads) the norm kernel for read-only rows before the cap
with open("/proc/self/status") as f:
    data = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
cap = 48 << 20  # private memory this process may add: less than the 128 MB table
resource.setrlimit(resource.RLIMIT_DATA, (data + cap, resource.getrlimit(resource.RLIMIT_DATA)[1]))
try:
    np.ones(160 << 20, dtype=np.uint8)
    print("the cap does not bite")
except MemoryError:
    pass
table = Vectors.load(sys.argv[1], mmap=True)
print(table.most_similar("w7", topn=5))
"""


def test_a_mapped_table_larger_than_the_memory_cap_answers(tmp_path):
    """A 128 MB table, mapped in a child whose private memory (RLIMIT_DATA: what it allocates,
    not the pages of a read-only mapped file) may grow by 48 MB only, answers most_similar as
    the table in memory does."""
    rows = np.random.default_rng(3).standard_normal((131_072, 256), dtype=np.float32)  # 128 MiB
    table = Vectors([f"w{i}" for i in range(len(rows))], rows)
    expected = table.most_similar("w7", topn=5)
    table.save(tmp_path / "big.npz")
    del table, rows
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(BIGGER_THAN_THE_CAP), str(tmp_path / "big.npz")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "does not bite" not in out.stdout
    got = eval(out.stdout.strip().splitlines()[-1])  # a list of (key, float) pairs
    assert [k for k, _ in got] == [k for k, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-6)


def test_the_norm_kernel_is_the_float64_norm():
    """row_norms of C-ordered float32 rows (a numba pass, no float64 copy) against the einsum
    of the rows in float64: equal to float64 rounding, and identical once rounded to float32."""
    from rowbook.vectors.neighbors import row_norms

    rows = np.random.default_rng(0).standard_normal((5000, 37)).astype(np.float32) * 7
    wide = rows.astype(np.float64)
    reference = np.sqrt(np.einsum("ij,ij->i", wide, wide))
    np.testing.assert_allclose(row_norms(rows), reference, rtol=1e-14)
    np.testing.assert_array_equal(row_norms(rows).astype(np.float32), reference.astype(np.float32))
    np.testing.assert_array_equal(
        row_norms(rows[:, :5]), np.sqrt(np.einsum("ij,ij->i", wide[:, :5], wide[:, :5]))
    )


def test_two_processes_share_a_mapped_tables_pages(tmp_path):
    """A second process (a spawned data-loader worker) mapping the same file scans it in the
    same pages: they count as shared in both, and its private memory hardly grows."""
    import multiprocessing

    rows = np.random.default_rng(4).standard_normal((32_768, 256), dtype=np.float32)  # 32 MiB
    Vectors([f"w{i}" for i in range(len(rows))], rows).save(tmp_path / "t.npz")
    table = Vectors.load(tmp_path / "t.npz", mmap=True)
    expected = table.most_similar("w3", topn=3)  # this process has the pages mapped now
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        grown, shared, answer = pool.apply(_scan_in_worker, (str(tmp_path / "t.npz"),))
    assert [k for k, _ in answer] == [k for k, _ in expected]
    assert shared >= 30 << 20, f"only {shared / 2**20:.0f} MB of shared clean pages"
    assert grown < 8 << 20, f"the worker's private memory grew by {grown / 2**20:.0f} MB"


def _memory(field: str, name: str = "/proc/self/status") -> int:
    with open(name) as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _scan_in_worker(path: str) -> tuple[int, int, list]:
    from rowbook.vectors.neighbors import row_norms

    warm = np.ones((2, 2), np.float32)
    warm.flags.writeable = False
    row_norms(warm)  # numba loads its kernel before the memory is measured
    before = _memory("RssAnon")
    answer = Vectors.load(path, mmap=True).most_similar("w3", topn=3)
    return _memory("RssAnon") - before, _memory("Shared_Clean", "/proc/self/smaps_rollup"), answer
