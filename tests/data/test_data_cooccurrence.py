"""GloVe co-occurrence counts against the definition (cooccur.c's loops, in plain Python)."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.data import cooccurrence_matrix, cooccurrence_pairs_reference, read_corpus


def _sentences(seed: int):
    rng = np.random.default_rng(seed)
    return [[f"w{i}" for i in rng.integers(0, 30, size=rng.integers(0, 40))] for _ in range(60)]


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("window", [1, 4, 15])
@pytest.mark.parametrize("dense_cells", [0, 37, None])  # every pair sorted, some, none
def test_matrix_equals_definition(symmetric, weighted, window, dense_cells):
    vocab, enc = read_corpus(_sentences(window), min_count=2)
    ids = [enc.ids[a:b].tolist() for a, b in zip(enc.starts[:-1], enc.starts[1:], strict=True)]
    expected = np.zeros((len(vocab), len(vocab)))
    for (i, j), v in cooccurrence_pairs_reference(
        ids, window, symmetric=symmetric, weighted=weighted
    ).items():
        expected[i, j] = v
    X = cooccurrence_matrix(
        enc,
        len(vocab),
        window,
        symmetric=symmetric,
        weighted=weighted,
        block_tokens=50,
        dense_cells=dense_cells,
    )
    np.testing.assert_allclose(X.toarray(), expected, rtol=1e-12)
    if symmetric:
        np.testing.assert_allclose(X.toarray(), X.toarray().T, rtol=1e-12)


def test_total_weight_of_one_sentence():
    """A line of n words has n - k pairs at distance k, each counted twice when symmetric."""
    n, window = 23, 6
    _, enc = read_corpus([[f"w{i}" for i in range(n)]])
    X = cooccurrence_matrix(enc, n, window)
    assert X.sum() == pytest.approx(2 * sum((n - k) / k for k in range(1, window + 1)))


def test_windows_skip_unknown_words_and_stop_at_lines():
    vocab, enc = read_corpus([["a", "rare", "b"], ["b", "a"], ["a", "a"]], min_count=2)
    X = cooccurrence_matrix(enc, len(vocab), window=1).toarray()
    a, b = vocab.keys.index("a"), vocab.keys.index("b")
    assert X[a, b] == X[b, a] == 2.0  # "a rare b" (rare dropped) and "b a"
    assert X[a, a] == 2.0  # "a a", symmetric


def test_bad_window():
    _, enc = read_corpus([["a", "b"]])
    with pytest.raises(ValueError, match="window must be an integer >= 1, got 0"):
        cooccurrence_matrix(enc, 2, 0)


def _zipf_corpus(n_sentences: int, seed: int):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    sentences = [list(rng.choice(words, size=rng.integers(1, 40), p=p)) for _ in range(n_sentences)]
    return read_corpus(sentences)


@pytest.mark.parametrize("weighted", [True, False])
def test_counts_under_a_tiny_memory_budget_equal_the_in_memory_counts_exactly(weighted):
    vocab, enc = _zipf_corpus(3000, seed=4)
    in_ram = cooccurrence_matrix(enc, len(vocab), 10, weighted=weighted)
    spilled = cooccurrence_matrix(
        enc, len(vocab), 10, weighted=weighted, memory=1 << 20, block_tokens=500
    )
    assert (in_ram != spilled).nnz == 0  # bit for bit, not approximately
    assert in_ram.nnz > 20_000


def test_a_small_budget_really_spills_to_disk_and_cleans_up(tmp_path):
    from rowbook.data.cooccurrence_runs import RunCounter

    rng = np.random.default_rng(0)
    expected = np.zeros((1000, 1000), np.int64)
    with RunCounter((1000, 1000), 1 << 20, tmp_path) as counter:
        for _ in range(40):
            rows, cols = rng.integers(0, 1000, 40_000), rng.integers(0, 1000, 40_000)
            nums = rng.integers(1, 100, 40_000)
            np.add.at(expected, (rows, cols), nums)
            counter.add(rows, cols, nums)
        assert counter.spilled_runs >= 2
        bands = list(counter.bands(band_records=20_000))
        assert len(bands) > 1
        np.testing.assert_array_equal(np.vstack([b.toarray() for b in bands]), expected)
    assert not any(tmp_path.iterdir())  # run files removed


def test_exact_sums_match_the_reference_to_rounding():
    vocab, enc = _zipf_corpus(200, seed=6)
    sentences = [
        enc.ids[enc.starts[s] : enc.starts[s + 1]].tolist() for s in range(enc.n_sentences)
    ]
    X = cooccurrence_matrix(enc, len(vocab), 15).todok()
    for (i, j), v in cooccurrence_pairs_reference(sentences, 15).items():
        assert X[i, j] == pytest.approx(v, rel=1e-12)


def test_a_window_whose_denominator_overflows_is_refused():
    from rowbook.data.cooccurrence_runs import denominator

    with pytest.raises(ValueError, match="window <= 20 or distance_weighting=False"):
        denominator(40, True, max_count=10**9)


def test_counting_under_a_budget_keeps_peak_memory_near_the_budget():
    """In a child process: 1M tokens, 30M pairs counted under a 16 MB budget (bands dropped)."""
    import subprocess
    import sys

    script = """
import resource, numpy as np
from rowbook.data.corpus import EncodedCorpus
from rowbook.data.cooccurrence import count_cooccurrences
rng = np.random.default_rng(0)
V, N = 20_000, 1_000_000
p = 1 / np.arange(1, V + 1); p /= p.sum()
ids = rng.choice(V, N, p=p).astype(np.int32)
lengths = np.full(N // 1000, 1000)
enc = EncodedCorpus(ids, np.concatenate([[0], np.cumsum(lengths)]), lengths)
list(count_cooccurrences(enc, V, 2, block_tokens=1000))  # compile the kernels first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
nnz = sum(band.nnz for band in count_cooccurrences(enc, V, 15, memory=16 << 20))
print(nnz, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    nnz, grown_mb = out.stdout.split()
    assert int(nnz) > 5_000_000  # the counts themselves (~120 MB as int64 CSR) exceed the budget
    assert float(grown_mb) < 16 * 5, f"a 16 MB budget grew the process by {grown_mb} MB"


def test_a_spilled_corpus_is_counted_block_by_block_without_mapping_its_ids(tmp_path):
    """Mapped pages of the id file would count in the process's memory: counting reads blocks."""
    import dataclasses

    rng = np.random.default_rng(4)
    corpus = [[f"w{i}" for i in rng.integers(0, 50, size=rng.integers(1, 20))] for _ in range(400)]
    vocab, in_ram = read_corpus(corpus)
    _, spilled = read_corpus(corpus, spill_dir=tmp_path)
    unmapped = dataclasses.replace(spilled, ids=None)  # only the file's blocks can be read
    expected = cooccurrence_matrix(in_ram, len(vocab), 5)
    counted = cooccurrence_matrix(unmapped, len(vocab), 5, memory=1 << 20)
    assert (counted != expected).nnz == 0
