"""Quantised tables: the kernels against their references, answers against the float table
and faiss, files through a fresh process, fastText's quantised layout."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rowbook.data.synthetic_vectors import clustered_vectors
from rowbook.nn import Embedding, EmbeddingBag
from rowbook.vectors import SubwordVectors, Vectors
from rowbook.vectors.quantize import Int8Matrix, PQMatrix, ProductQuantizer, QuantizedVectors
from rowbook.vectors.quantize.cost import nearest, recall
from rowbook.vectors.quantize.kmeans import (
    kmeans,
    nearest_centroids,
    nearest_centroids_reference,
    transposed_layout,
)
from rowbook.vectors.quantize.matrix import table_sums, table_sums_reference


@pytest.fixture(scope="module")
def table() -> Vectors:
    rows = clustered_vectors(3000, 32, seed=1)
    return Vectors([f"w{i}" for i in range(len(rows))], rows, counts=np.arange(3000, 0, -1))


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# -- kernels and their references -----------------------------------------------------------


def test_nearest_centroid_kernel_picks_a_nearest_centroid():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((500, 7)).astype(np.float32)
    parts = [
        rng.standard_normal((16, 3)).astype(np.float32),
        rng.standard_normal((16, 4)).astype(np.float32),
    ]
    codes = nearest_centroids(x, transposed_layout(parts), np.empty((500, 2), dtype=np.int64))
    reference = nearest_centroids_reference(x, parts)
    for m, (start, c) in enumerate(zip((0, 3), parts, strict=True)):
        dist = ((x[:, None, start : start + c.shape[1]] - c[None]) ** 2).sum(-1)  # (n, k)
        chosen = dist[np.arange(500), codes[:, m]]
        np.testing.assert_allclose(chosen, dist.min(axis=1), rtol=1e-5, atol=1e-6)
        assert (codes[:, m] == reference[:, m]).mean() > 0.99  # ties within rounding only


def test_table_sums_kernel_equals_its_reference():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 256, (1003, 7), dtype=np.uint8)
    tables = rng.standard_normal((3, 7, 256)).astype(np.float32)
    np.testing.assert_array_equal(table_sums(codes, tables), table_sums_reference(codes, tables))
    np.testing.assert_array_equal(
        table_sums(codes, tables, 5, 11), table_sums_reference(codes[5:11], tables)
    )


def test_kmeans_is_reproducible_and_splits_empty_clusters():
    x = np.concatenate([np.zeros((50, 2)), np.ones((50, 2))]).astype(
        np.float32
    )  # 2 distinct points
    a = kmeans(x, 4, rng=np.random.default_rng(3))
    b = kmeans(x, 4, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(a).all() and {tuple(np.round(c)) for c in a} == {(0.0, 0.0), (1.0, 1.0)}


# -- the product quantiser ------------------------------------------------------------------


def test_sub_space_widths_follow_fasttext_and_m():
    x = np.random.default_rng(0).standard_normal((300, 10)).astype(np.float32)
    assert ProductQuantizer(dsub=3, nbits=4).fit(x).widths == (3, 3, 3, 1)  # fastText's lastdsub
    assert ProductQuantizer(m=4, nbits=4).fit(x).widths == (3, 3, 2, 2)
    assert ProductQuantizer(m=5, nbits=4).fit(x).widths == (2, 2, 2, 2, 2)
    with pytest.raises(ValueError, match="m must be an integer >= 1 when dsub is None"):
        ProductQuantizer(m=2, dsub=2)
    with pytest.raises(ValueError, match=r"nbits must be at most log2\(100\) for 100 rows"):
        ProductQuantizer(m=2).fit(x[:100])
    with pytest.raises(ValueError, match=r"nbits must be an integer from 1 to 8"):
        ProductQuantizer(m=2, nbits=9)
    with pytest.raises(ValueError, match="not fitted"):
        ProductQuantizer(m=2).encode(x)


def test_asymmetric_distance_equals_decoding_then_scoring(table):
    """q . u^ / |u^| from the codes, against the cosine of q with the decoded row (1e-5)."""
    queries = _unit(table.vectors[:20])
    for matrix in (
        PQMatrix.from_rows(table.vectors, m=8),
        Int8Matrix.from_rows(table.vectors),
        PQMatrix.from_rows(table.vectors, m=6, nbits=5, qnorm=False),
    ):
        decoded = matrix.decode()  # (V, d)
        exact = (queries @ decoded.T) / np.linalg.norm(decoded, axis=1)
        np.testing.assert_allclose(matrix.cosines(queries), exact, atol=1e-5)
        np.testing.assert_allclose(matrix.norms(), np.linalg.norm(decoded, axis=1), rtol=1e-5)


def test_pq_recall_is_at_least_faiss_at_the_same_bytes(table):
    """recall@10 on generated clustered vectors: rowbook's codes scored by cosine against
    faiss's ProductQuantizer (same sub-spaces, same 8 bits), scored as faiss does (inner
    product) and by the decoded rows' cosine."""
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(1)  # two busy-waiting threads on a shared machine are 4x slower
    unit = _unit(table.vectors)
    rows = np.arange(0, 3000, 15)
    truth = nearest(table, table, rows, 10)
    ours = recall(nearest(table.quantize("pq", m=8, verbose=False), table, rows, 10), truth)
    pq = faiss.ProductQuantizer(32, 8, 8)
    pq.train(unit)
    decoded = pq.decode(pq.compute_codes(unit))
    queries = unit[rows]
    scores = queries @ decoded.T
    theirs = []
    for s in (scores, scores / np.linalg.norm(decoded, axis=1)):
        s[np.arange(len(rows)), rows] = -np.inf
        theirs.append(recall(np.argsort(-s, axis=1)[:, :10].tolist(), truth))
    assert ours >= 0.6, ours
    assert ours >= theirs[0], (ours, theirs)  # faiss as faiss ranks: by inner product
    assert ours >= theirs[1] - 0.03, (ours, theirs)  # the same scoring: the same quality


def test_int8_keeps_the_neighbours(table):
    rows = np.arange(0, 3000, 15)
    found = nearest(table.quantize("int8", verbose=False), table, rows, 10)
    assert recall(found, nearest(table, table, rows, 10)) >= 0.97


def test_rerank_against_the_float_table_restores_the_neighbours(table, tmp_path):
    table.save(tmp_path / "float.npz")
    mapped = Vectors.load(tmp_path / "float.npz", mmap=True)
    small = mapped.quantize("pq", m=4, rerank=100, verbose=False)  # 1/32 of the bytes
    rows = np.arange(0, 3000, 15)
    truth = nearest(table, table, rows, 10)
    assert recall(nearest(small, table, rows, 10), truth) < 0.8  # the codes alone
    found = [
        [small.get_index(k) for k, _ in small.most_similar(table.index_to_key[r], topn=10)]
        for r in rows
    ]
    assert recall(found, truth) >= 0.95
    key = table.index_to_key[7]
    answers, exact = small.most_similar(key, topn=5), table.most_similar(key, topn=5)
    assert [k for k, _ in answers] == [k for k, _ in exact]
    np.testing.assert_allclose([s for _, s in answers], [s for _, s in exact], atol=1e-6)


def test_quantize_measures_the_rerank_pool_for_the_recall_asked(table, tmp_path):
    table.save(tmp_path / "float.npz")
    mapped = Vectors.load(tmp_path / "float.npz", mmap=True)
    small = mapped.quantize("pq", m=4, recall=0.9, verbose=False)  # the pool is measured
    assert small.calibration is not None and small.calibration.target == 0.9
    assert small.rerank == small.calibration.value and small.calibration.recall >= 0.9
    rows = np.arange(0, 3000, 15)
    found = [
        [small.get_index(k) for k, _ in small.most_similar(table.index_to_key[r], topn=10)]
        for r in rows
    ]
    assert recall(found, nearest(table, table, rows, 10)) >= 0.85  # held-out keys: near 0.9
    with pytest.raises(ValueError, match="not both"):
        mapped.quantize("int8", rerank=10, recall=0.9, verbose=False)


def test_the_queries_of_vectors_answer_from_codes(table):
    small = table.quantize("int8", verbose=False)
    decoded = Vectors(table.index_to_key, small.vectors)  # the decoded rows as a float table
    key, other = table.index_to_key[3], table.index_to_key[9]
    assert small.similarity(key, other) == pytest.approx(decoded.similarity(key, other), abs=1e-6)
    assert [k for k, _ in small.most_similar(key, topn=5)] == [
        k for k, _ in decoded.most_similar(key, topn=5)
    ]
    assert small.analogy(key, other, "w20") == decoded.analogy(key, other, "w20")
    np.testing.assert_allclose(small.distances(key)[:50], decoded.distances(key)[:50], atol=1e-5)
    np.testing.assert_allclose(small[key], decoded[key])
    assert small.doesnt_match([key, other, "w20"]) == decoded.doesnt_match([key, other, "w20"])
    assert not hasattr(small, "add_vectors") and not isinstance(small, Vectors)  # frozen
    chosen = small.vectors_for_all([other, "w20", other, "absent"])  # codes taken, not decoded
    assert type(chosen) is QuantizedVectors and chosen.index_to_key == (other, "w20")
    np.testing.assert_array_equal(chosen[other], small[other])
    small.build_index("ivf", nlist=16, nprobe=16)  # every cell: a scan of the decoded rows
    fast, scanned = (
        small.most_similar(key, topn=5, approximate=True),
        small.most_similar(key, topn=5),
    )
    assert [k for k, _ in fast] == [k for k, _ in scanned]
    np.testing.assert_allclose([s for _, s in fast], [s for _, s in scanned], atol=1e-5)


def test_evaluations_run_on_codes_and_report_the_cost(table, tmp_path, capsys):
    keys = table.index_to_key
    (tmp_path / "q.txt").write_text(
        ": s\n"
        + "".join(f"{keys[i]} {keys[i + 1]} {keys[i + 2]} {keys[i + 3]}\n" for i in range(0, 80, 4))
    )
    (tmp_path / "pairs.tsv").write_text(
        "".join(f"{keys[i]}\t{keys[i + 7]}\t{i % 10}\n" for i in range(60))
    )
    small = table.quantize(
        "pq",
        m=8,
        report=True,
        analogies=tmp_path / "q.txt",
        pairs=[tmp_path / "pairs.tsv"],
        queries=50,
    )
    cost = small.cost
    assert cost.bytes_before == 3000 * 32 * 4 and cost.bytes_after == small.matrix.nbytes
    assert 0 < cost.recall_at_10 <= 1 and cost.queries == 50
    before, after = cost.scores["Spearman (pairs.tsv)"]
    assert before == pytest.approx(table.evaluate_word_pairs(tmp_path / "pairs.tsv")[1][0])
    assert after == pytest.approx(small.evaluate_word_pairs(tmp_path / "pairs.tsv")[1][0])
    printed = capsys.readouterr().err
    assert "quantised 3,000 x 32 float32" in printed and "recall@10" in printed


# -- files ----------------------------------------------------------------------------------

ANSWER = """
import json, sys
from rowbook.vectors import Vectors
table = Vectors.load(sys.argv[1], mmap=sys.argv[2] == "mapped")
print(json.dumps([type(table).__name__, table.most_similar("w5", topn=5), table["w9"].tolist()]))
"""


@pytest.mark.parametrize("method", ["int8", "pq"])
def test_quantised_files_answer_the_same_in_a_fresh_process(table, tmp_path, method):
    small = table.quantize(method, m=8, verbose=False)
    small.save(tmp_path / "small.npz")
    expected = [type(small).__name__, small.most_similar("w5", topn=5), small["w9"].tolist()]
    for mode in ("read", "mapped"):
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(ANSWER), str(tmp_path / "small.npz"), mode],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(out.stdout)
        assert got[0] == expected[0] and got[2] == expected[2]
        assert [k for k, _ in got[1]] == [k for k, _ in expected[1]]
        np.testing.assert_allclose([s for _, s in got[1]], [s for _, s in expected[1]], rtol=1e-6)


def test_a_saved_link_is_restored_or_reported(table, tmp_path):
    table.save(tmp_path / "float.npz")
    linked = Vectors.load(tmp_path / "float.npz", mmap=True).quantize(
        "pq", m=4, rerank=50, verbose=False
    )
    linked.save(tmp_path / "small.npz")
    back = Vectors.load(tmp_path / "small.npz")
    assert back.float_table is not None and back.rerank == 50
    assert back.most_similar("w5", topn=3) == linked.most_similar("w5", topn=3)
    table.save(tmp_path / "float.npz")  # rewritten: another modification time
    with pytest.warns(UserWarning, match="has changed since the codes were linked"):
        alone = Vectors.load(tmp_path / "small.npz")
    assert alone.float_table is None


def test_hostile_quantised_files_get_clear_errors(table, tmp_path):
    from rowbook.io import load_state, save_state

    table.quantize("pq", m=4, nbits=6, verbose=False).save(tmp_path / "good.npz")
    state = load_state(tmp_path / "good.npz", kind="quantized vectors")

    def refused(change, match):
        broken = json.loads(json.dumps(state, default=lambda a: None))  # the JSON part, copied
        broken = _with_arrays(broken, state)
        change(broken)
        save_state(tmp_path / "bad.npz", broken, kind="quantized vectors")
        with pytest.raises(ValueError, match=match):
            Vectors.load(tmp_path / "bad.npz")

    def code_out_of_range(s):
        s["matrix"]["codes"] = s["matrix"]["codes"].copy()
        s["matrix"]["codes"][5, 2] = 64  # nbits=6: codes 0..63

    refused(code_out_of_range, r"holds code 64, out of range: the codebook has 64 centroids")
    refused(
        lambda s: s["matrix"]["quantizer"].update(widths=[8, 8, 8, 9]),
        r"'centroids' must be 2112 float32 values .* the codebook shapes disagree",
    )
    refused(
        lambda s: s["matrix"].update(codes=s["matrix"]["codes"][:, :3].copy()),
        r"'codes' must be a \(3000, 4\) uint8 array, got uint8 \(3000, 3\)",
    )
    refused(
        lambda s: s["matrix"]["norms"].update(codes=np.zeros(2999, np.uint8)),
        r"'norms.codes' must be a \(3000,\) uint8 array",
    )
    refused(lambda s: s["matrix"].update(method="opq"), r"'method' must be 'int8' or 'pq'")
    refused(lambda s: s.update(keys=s["keys"][:-1]), r"'codes' must be a \(2999, 4\) uint8 array")
    table.quantize("int8", verbose=False).save(tmp_path / "good.npz")
    state = load_state(tmp_path / "good.npz", kind="quantized vectors")
    refused(
        lambda s: s["matrix"].update(scales=-s["matrix"]["scales"]),
        "'scales' must be finite and >= 0",
    )
    refused(
        lambda s: s["matrix"].update(column_scales=s["matrix"]["column_scales"][:-1].copy()),
        r"'column_scales' must be 32 float32 values \(one per column of 'codes'\), got float32 \(31,\)",
    )


def _with_arrays(copied, original):
    """``copied`` (a JSON copy of ``original`` with arrays as None) with the arrays put back."""
    if isinstance(original, dict):
        return {k: _with_arrays(copied[k], v) for k, v in original.items()}
    if isinstance(original, list):
        return [_with_arrays(c, o) for c, o in zip(copied, original, strict=True)]
    return original if isinstance(original, np.ndarray) else copied


# -- fastText's layout ------------------------------------------------------------------------


def test_fasttext_bytes_round_trip_and_refuse_other_layouts():
    x = np.random.default_rng(0).standard_normal((400, 10)).astype(np.float32)
    matrix = PQMatrix.from_rows(x, dsub=3)
    blob = b"xx" + matrix.fasttext_bytes()
    back, end = PQMatrix.from_fasttext_bytes(blob, 2, "test")
    assert end == len(blob) and back.quantizer.widths == (3, 3, 3, 1)
    np.testing.assert_array_equal(back.decode(), matrix.decode())
    assert back.fasttext_bytes() == matrix.fasttext_bytes()
    with pytest.raises(ValueError, match="fastText stores 8-bit codes and sub-spaces of one width"):
        PQMatrix.from_rows(x, m=4).fasttext_bytes()  # widths 3, 3, 2, 2
    with pytest.raises(ValueError, match=r"the centroids need 1024 bytes, \d+ are left"):
        PQMatrix.from_fasttext_bytes(blob[:-100], 2, "test")


def test_a_fasttext_ftz_input_matrix_decodes_as_fasttext_reads_it(tmp_path):
    """fastText quantises a classifier (qnorm, dsub=3 over dim 10: a last sub-space of 1);
    its .ftz input matrix, read by PQMatrix, decodes to the rows fastText itself reads.
    The classifier is written by rowbook (fastText's training is not what is tested)."""
    fasttext = pytest.importorskip("fasttext")
    from rowbook.vectors import fasttext_format as ff

    rng = np.random.default_rng(0)
    words = tuple([f"w{i}" for i in range(400)] + [f"__label__{c}" for c in range(3)])
    args = ff.FastTextArgs(dim=10, model=3, loss=3, bucket=0, minn=0, maxn=0, minCount=1)
    ff.write_fasttext_bin(
        tmp_path / "m.bin",
        ff.FastTextFile(
            args,
            words,
            np.arange(403, 0, -1),
            rng.standard_normal((400, 10)).astype(np.float32),
            rng.standard_normal((3, 10)).astype(np.float32),
            1000,
            np.array([0] * 400 + [1] * 3, np.int8),
        ),
    )
    model = fasttext.load_model(str(tmp_path / "m.bin"))
    model.quantize(qnorm=True, dsub=3, retrain=False)
    model.save_model(str(tmp_path / "m.ftz"))
    blob = (tmp_path / "m.ftz").read_bytes()
    with open(tmp_path / "m.ftz", "rb") as f:
        stream = ff._Stream(f, tmp_path / "m.ftz")
        stream.unpack(struct.Struct("<2i"), "header")
        stream.unpack(ff._ARGS, "args")
        words, *_ = ff._read_dictionary(stream)
        start = f.tell()
    assert blob[start] == 1  # the quant flag
    matrix, end = PQMatrix.from_fasttext_bytes(blob, start + 1, "m.ftz")
    assert matrix.qnorm and matrix.quantizer.widths == (3, 3, 3, 1)
    assert blob[start + 1 : end] == matrix.fasttext_bytes()
    loaded = fasttext.load_model(str(tmp_path / "m.ftz"))
    theirs = np.stack([loaded.get_input_vector(i) for i in range(len(matrix))])
    np.testing.assert_array_equal(matrix.decode(), theirs)


# -- subwords, pruning, lookups -----------------------------------------------------------------


@pytest.fixture(scope="module")
def subword() -> SubwordVectors:
    rng = np.random.default_rng(4)
    words = [
        f"{a}{b}" for a in ("walk", "talk", "jump", "look") for b in ("", "s", "ed", "ing", "er")
    ]
    return SubwordVectors(
        words,
        rng.standard_normal((len(words) + 400, 8)),
        minn=3,
        maxn=4,
        bucket=400,
        counts=np.arange(len(words), 0, -1),
    )


def test_quantised_subword_vectors_give_vectors_for_unseen_words(subword, tmp_path):
    small = subword.quantize("int8", verbose=False)
    unseen = small.vector_for("jumpings")
    decoded = SubwordVectors(
        subword.index_to_key, small.input_matrix.decode(), minn=3, maxn=4, bucket=400
    )
    np.testing.assert_allclose(unseen, decoded.vector_for("jumpings"), rtol=1e-6)
    np.testing.assert_allclose(unseen, subword.vector_for("jumpings"), atol=0.05)
    small.save(tmp_path / "sub.npz")
    back = Vectors.load(tmp_path / "sub.npz")
    assert type(back).__name__ == "QuantizedSubwordVectors"
    np.testing.assert_array_equal(back.vector_for("jumpings"), unseen)


def test_pruning_keeps_the_frequent_words_and_their_buckets(subword):
    pruned = subword.prune(6, verbose=False)
    assert pruned.index_to_key == subword.index_to_key[:6]
    np.testing.assert_allclose(pruned.vectors, subword.vectors[:6], rtol=1e-6)
    used = {
        b for w in pruned.index_to_key for b in subword.subword_ids(w).tolist() if b >= len(subword)
    }
    assert pruned.kept_buckets.tolist() == sorted(b - len(subword) for b in used)
    # an unseen word keeps the n-grams whose bucket survived, as fastText's pruned models do
    kept = [i for i in subword.subword_ids("walkable").tolist() if i in used]
    np.testing.assert_allclose(
        pruned.vector_for("walkable"), subword.input_matrix[kept].mean(axis=0), rtol=1e-6
    )
    assert pruned.input_matrix.shape[0] == 6 + len(used) < subword.input_matrix.shape[0]


def test_pruning_keeps_the_most_counted_keys(capsys):
    table = Vectors(["a", "b", "c", "d"], np.eye(4), counts=[1, 9, 3, 9])
    pruned = table.prune(2)
    assert pruned.index_to_key == ("b", "d") and pruned.counts.tolist() == [9, 9]
    assert "pruned to 2 of 4 keys" in capsys.readouterr().err
    assert Vectors(["a", "b"], np.eye(2)).prune(1, verbose=False).index_to_key == ("a",)


@pytest.mark.parametrize("method", ["int8", "pq"])
def test_embedding_layers_look_up_a_quantised_table(table, method):
    matrix = table.quantize(method, m=8, verbose=False).matrix
    ids = np.array([[3, 2999, 3], [0, 5, 7]])
    layer = Embedding.from_pretrained(matrix)
    np.testing.assert_array_equal(layer(ids).numpy(), matrix.decode(ids))
    assert list(layer.parameters()) == [] and not layer(ids).requires_grad
    bag = EmbeddingBag.from_pretrained(matrix, mode="sum", padding_idx=7)
    float_bag = EmbeddingBag.from_pretrained(matrix.decode(), mode="sum", padding_idx=7)
    weights = np.random.default_rng(0).random(ids.shape).astype(np.float32)
    np.testing.assert_array_equal(
        bag(ids, per_sample_weights=weights).numpy(),
        float_bag(ids, per_sample_weights=weights).numpy(),
    )
    with pytest.raises(ValueError, match="a quantised table is frozen: pass freeze=True"):
        Embedding.from_pretrained(matrix, freeze=False)
    with pytest.raises(ValueError, match=r"max_norm=1\.0 rescales rows in place"):
        Embedding.from_pretrained(matrix, max_norm=1.0)(ids)
    with pytest.raises(IndexError, match="out of range"):
        layer(np.array([3000]))
