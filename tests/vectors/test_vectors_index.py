"""The approximate index against the exact scan it replaces."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss")

from rowbook.vectors.index import VectorIndex
from rowbook.vectors.neighbors import top_k, unit_rows


@pytest.fixture(scope="module")
def unit():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(20, 16))
    table = centers[rng.integers(0, 20, 600)] + 0.5 * rng.normal(size=(600, 16))
    return unit_rows(table.astype(np.float32))[1]


@pytest.mark.parametrize(
    "kind, options",
    [
        ("ivf", {"nlist": 8, "nprobe": 8}),  # every cell scanned: exhaustive
        ("hnsw", {"M": 16, "ef_search": 600}),  # a beam as wide as the table: exhaustive
    ],
)
def test_exhaustive_settings_return_the_exact_neighbors(unit, kind, options):
    index = VectorIndex.build(unit, kind, **options)
    for row in range(0, 600, 37):
        exact = top_k(unit @ unit[row], 10)
        found = index.search(unit[row], 10)
        np.testing.assert_array_equal(np.sort(found), np.sort(exact))


def test_default_settings_have_high_recall(unit):
    index = VectorIndex.build(unit, "ivf", nlist=16, nprobe=4)
    recall = np.mean(
        [
            len(set(index.search(unit[r], 10)) & set(top_k(unit @ unit[r], 10))) / 10
            for r in range(0, 600, 7)
        ]
    )
    assert recall >= 0.9


def test_an_index_round_trips_through_its_file_and_checks_the_table_shape(unit, tmp_path):
    index = VectorIndex.build(unit, "ivf", nlist=8, nprobe=8)
    index.save(tmp_path / "v.index")
    again = VectorIndex.load(tmp_path / "v.index", rows=600, dim=16)
    assert again.kind == "ivf"
    np.testing.assert_array_equal(again.search(unit[3], 5), index.search(unit[3], 5))
    with pytest.raises(ValueError, match="rebuild it"):
        VectorIndex.load(tmp_path / "v.index", rows=601, dim=16)
    (tmp_path / "junk.index").write_bytes(b"not an index at all")
    with pytest.raises(ValueError, match="not a faiss index"):
        VectorIndex.load(tmp_path / "junk.index", rows=600, dim=16)


def test_bad_settings_name_the_parameter(unit):
    with pytest.raises(ValueError, match="kind must be one of"):
        VectorIndex.build(unit, "lsh")
    with pytest.raises(ValueError, match="ef_search must be an integer >= 1"):
        VectorIndex.build(unit, "hnsw", ef_search=0)
    with pytest.raises(ValueError, match="empty table"):
        VectorIndex.build(unit[:0], "ivf")


def test_most_similar_approximate_gives_the_exact_answer_with_exhaustive_settings(unit):
    from rowbook.vectors import Vectors

    table = Vectors([f"k{i}" for i in range(600)], unit * 3.0)  # not unit rows: cosines still
    with pytest.raises(ValueError, match="build_index"):
        table.most_similar("k5", approximate=True)
    table.build_index("ivf", nlist=8, nprobe=8)
    for key in ("k0", "k77", "k599"):
        exact = table.most_similar(key, topn=7)
        approx = table.most_similar(key, topn=7, approximate=True)
        assert [k for k, _ in approx] == [k for k, _ in exact]
        np.testing.assert_allclose([s for _, s in approx], [s for _, s in exact], rtol=1e-6)
    restricted = table.most_similar("k3", topn=5, restrict_vocab=300, approximate=True)
    assert all(table.get_index(k) < 300 for k, _ in restricted)
    with pytest.raises(ValueError, match="give topn"):
        table.most_similar("k3", topn=None, approximate=True)


def test_a_query_by_key_starts_at_its_own_node(unit):
    """A query by key is its own row: the HNSW search starts at that node in the bottom
    layer instead of walking down the upper layers to it. With a beam as wide as the table
    it finds the exact neighbours (the row itself first), as most_similar and batch= do; at
    a narrow beam it computes fewer distances than the walk from the top; a start that is
    not a row is refused."""
    import faiss

    from rowbook.vectors import Vectors

    index = VectorIndex.build(unit, "hnsw", M=8, ef_search=600)
    rows = np.arange(0, 600, 37)
    for row, found in zip(rows, index.search_batch(unit[rows], 10, start=rows), strict=True):
        assert found[0] == row
        np.testing.assert_array_equal(np.sort(found), np.sort(top_k(unit @ unit[row], 10)))
    index.ef_search = 16
    stats = faiss.cvar.hnsw_stats
    stats.reset()
    index.search_batch(unit[rows], 10, start=rows)
    own = stats.ndis
    stats.reset()
    index.search_batch(unit[rows], 10)
    assert own < stats.ndis
    table = Vectors([f"k{i}" for i in range(600)], unit * 2.0)
    table.build_index("hnsw", M=8, ef_search=600)
    keys = ["k0", "k77", "k599"]
    batch = table.most_similar(batch=keys, topn=7, approximate=True)
    for key, listed in zip(keys, batch, strict=True):
        exact = table.most_similar(key, topn=7)
        assert table.most_similar(key, topn=7, approximate=True) == listed
        assert [k for k, _ in listed] == [k for k, _ in exact]
    with pytest.raises(ValueError, match="start must hold rows 0 to 599"):
        index.search_batch(unit[:2], 5, start=[0, 600])
    with pytest.raises(ValueError, match=r"start must be \(2,\) row numbers"):
        index.search_batch(unit[:2], 5, start=[0])


def test_the_index_is_saved_beside_the_vectors_and_dropped_by_edits(unit, tmp_path):
    from rowbook.vectors import Vectors

    table = Vectors([f"k{i}" for i in range(600)], unit)
    table.build_index("ivf", nlist=8, nprobe=8)
    table.save_index(tmp_path / "t.index")
    again = Vectors([f"k{i}" for i in range(600)], unit)
    again.load_index(tmp_path / "t.index")
    assert again.most_similar("k9", topn=3, approximate=True) == table.most_similar(
        "k9", topn=3, approximate=True
    )
    table.add_vectors(["new"], unit[:1])
    with pytest.raises(ValueError, match="build_index"):
        table.most_similar("k9", approximate=True)


def test_build_index_chooses_its_kind_and_settings_from_the_table_size(unit):
    from rowbook.vectors.index import HNSW_FROM, default_settings

    small = VectorIndex.build(unit, verbose=False)  # nprobe from the recall asked
    assert small.kind == "ivf" and small.nprobe == small.calibration.value
    assert small.calibration.setting == "nprobe" and small.recall >= 0.95
    assert small._index.nlist == round(600**0.5)
    fixed = VectorIndex.build(unit, recall=None)
    assert fixed.nprobe == 8 and fixed.calibration is None and fixed.recall is None
    assert default_settings(HNSW_FROM - 1)["kind"] == "ivf"
    assert default_settings(HNSW_FROM) == {
        "kind": "hnsw",
        "M": 16,
        "ef_construction": 64,
        "ef_search": 32,
    }
    graph = VectorIndex.build(unit, "hnsw", recall=None)  # its defaults, then the options given
    assert graph.ef_search == 32 and graph._index.hnsw.efConstruction == 64
    assert VectorIndex.build(unit, nprobe=3).nprobe == 3


def test_batches_answer_as_single_queries_do(unit):
    from rowbook.vectors import Vectors

    keys = [f"k{i}" for i in range(600)]
    table = Vectors(keys, unit * 2.0)
    queries = ["k0", "k77", unit[5] * 3.0, "k599"]
    for approximate in (False, True):
        if approximate:
            table.build_index("ivf", nlist=8, nprobe=2)  # approximate: the same candidates
        for topn, restrict in ((7, None), (3, 300), (0, None)):
            answers = table.most_similar(
                batch=queries, topn=topn, restrict_vocab=restrict, approximate=approximate
            )
            assert len(answers) == len(queries)
            for query, got in zip(queries, answers, strict=True):
                one = table.most_similar(
                    [query], topn=topn, restrict_vocab=restrict, approximate=approximate
                )
                assert [k for k, _ in got] == [k for k, _ in one]
                np.testing.assert_allclose([s for _, s in got], [s for _, s in one], rtol=1e-6)
    for restrict in (None, 300):  # one key goes straight to its unit row: the same answer
        one = table.most_similar("k77", topn=5, restrict_vocab=restrict, approximate=True)
        listed = table.most_similar(["k77"], topn=5, restrict_vocab=restrict, approximate=True)
        assert [k for k, _ in one] == [k for k, _ in listed] and "k77" not in dict(one)
        np.testing.assert_allclose([s for _, s in one], [s for _, s in listed], rtol=1e-6)
    assert table.most_similar(batch=np.stack([unit[1], unit[2]]), topn=1)[0][0][0] == "k1"
    with pytest.raises(ValueError, match="not both"):
        table.most_similar("k1", batch=["k2"])
    with pytest.raises(ValueError, match="give topn"):
        table.most_similar(batch=["k2"], topn=None)


def test_a_build_counts_its_rows_on_a_progress_bar(unit, monkeypatch):
    import rowbook.vectors.index as index_module

    bars = []

    class Spy(index_module.ProgressBar):
        def __init__(self, total, **kwargs):
            super().__init__(total, **kwargs)
            bars.append({"total": total, "show": kwargs["show"], "done": 0})

        def update(self, n, metrics=None):
            bars[-1]["done"] += n

    monkeypatch.setattr(index_module, "ProgressBar", Spy)
    monkeypatch.setattr(index_module, "ADD_ROWS", 256)
    VectorIndex.build(unit, "hnsw", progress=True)
    VectorIndex.build(unit, "ivf")  # 600 rows: no bar by default
    assert bars == [
        {"total": 600, "show": True, "done": 600},
        {"total": 600, "show": False, "done": 600},
    ]


def test_a_graph_stored_in_search_order_answers_and_saves_in_table_rows(unit, tmp_path):
    """The graph stores its rows in breadth-first order (a search's hops then read nearby
    memory) and answers with table rows: exhaustive searches give the exact neighbours, by
    vector and from a key's own node; saved, faiss's IndexIDMap carries the rows, so faiss
    reading the file answers with them too. A graph saved in table order before (no map)
    still loads; a map that is not each row once is refused."""
    import faiss

    from rowbook.vectors.index_file import write_index_file

    index = VectorIndex.build(unit, "hnsw", M=8, ef_search=600, recall=None)
    assert not np.array_equal(index._order, np.arange(600))
    np.testing.assert_array_equal(np.sort(index._order), np.arange(600))
    rows = np.arange(3, 600, 41)
    exact = [np.sort(top_k(unit @ unit[r], 10)) for r in rows]
    for found in (index.search_batch(unit[rows], 10), index.search_batch(unit[rows], 10, rows)):
        np.testing.assert_array_equal([np.sort(f) for f in found], exact)
    index.save(tmp_path / "v.index")
    assert (tmp_path / "v.index").read_bytes()[:4] == b"IxMp"
    again = VectorIndex.load(tmp_path / "v.index", 600, 16)
    assert again.ef_search == 600 and np.array_equal(again._order, index._order)
    found = again.search_batch(unit[rows], 10, start=rows)
    np.testing.assert_array_equal([np.sort(f) for f in found], exact)
    by_faiss = faiss.read_index(str(tmp_path / "v.index"))
    faiss.downcast_index(by_faiss.index).hnsw.efSearch = 600
    np.testing.assert_array_equal(by_faiss.search(unit[rows], 1)[1][:, 0], rows)
    old = faiss.IndexHNSWFlat(16, 8, faiss.METRIC_INNER_PRODUCT)  # table order, as before
    old.add(unit)
    old.hnsw.efSearch = 600
    write_index_file(tmp_path / "old.index", faiss.serialize_index(old), None)
    loaded = VectorIndex.load(tmp_path / "old.index", 600, 16)
    assert loaded._order is None
    found = loaded.search_batch(unit[rows], 10, start=rows)
    np.testing.assert_array_equal([np.sort(f) for f in found], exact)
    faiss.copy_array_to_vector(np.zeros(600, dtype=np.int64), by_faiss.id_map)
    write_index_file(tmp_path / "bad.index", faiss.serialize_index(by_faiss), None)
    with pytest.raises(ValueError, match="not the table's rows 0 to 599, each once"):
        VectorIndex.load(tmp_path / "bad.index", 600, 16)
