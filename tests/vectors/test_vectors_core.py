"""Vectors lookups and neighbour queries against gensim's KeyedVectors on the same vectors."""

from __future__ import annotations

import numpy as np
import pytest
from gensim.models import KeyedVectors

from rowbook.vectors import Vectors
from rowbook.vectors.neighbors import top_k, top_k_rows

V, D = 400, 12
pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated:DeprecationWarning")  # gensim


@pytest.fixture(scope="module")
def table() -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(7)
    keys = [f"w{i}" for i in range(V)]
    return keys, rng.standard_normal((V, D)).astype(np.float32)


@pytest.fixture(scope="module")
def ours(table) -> Vectors:
    return Vectors(*table)


@pytest.fixture(scope="module")
def theirs(table) -> KeyedVectors:
    kv = KeyedVectors(D)
    kv.add_vectors(*table)
    return kv


def assert_same_ranking(got, expected):
    assert [k for k, _ in got] == [k for k, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5, atol=1e-6)


def test_lookup_matches_gensim(ours, theirs, table):
    keys, vectors = table
    assert list(ours.index_to_key) == theirs.index_to_key
    assert dict(ours.key_to_index) == theirs.key_to_index
    assert len(ours) == V and ours.vector_size == D and "w3" in ours and "nope" not in ours
    np.testing.assert_array_equal(ours["w5"], theirs["w5"])
    np.testing.assert_array_equal(ours[["w5", "w1"]], theirs[["w5", "w1"]])
    np.testing.assert_allclose(
        ours.get_vector("w9", norm=True), theirs.get_vector("w9", norm=True), rtol=1e-6
    )
    np.testing.assert_allclose(ours.norms, np.linalg.norm(vectors, axis=1), rtol=1e-6)
    assert ours.get_index("w8") == theirs.get_index("w8") and ours.get_index("zz", -1) == -1
    assert list(ours) == keys


def test_tables_are_read_only_and_copy_false_shares_memory(table):
    keys, vectors = table
    mine = vectors.copy()
    shared, copied = Vectors(keys, mine, copy=False), Vectors(keys, mine)
    assert np.shares_memory(shared.vectors, mine) and not np.shares_memory(copied.vectors, mine)
    assert mine.flags.writeable  # the caller's array is untouched
    for view in (shared.vectors, shared["w1"], shared.get_vector("w1", norm=True), shared.norms):
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 1.0
    with pytest.raises(TypeError):
        shared.key_to_index["new"] = 1


@pytest.mark.parametrize(
    ("keys", "vectors", "counts", "error", "match"),
    [
        (["a", "a"], np.ones((2, 3)), None, ValueError, r"duplicate key 'a' at indices 0 and 1"),
        (["a", 1], np.ones((2, 3)), None, TypeError, r"keys must be str, got int 1 at index 1"),
        (["a"], np.ones((2, 3)), None, ValueError, r"got 1 keys for 2 vector rows"),
        (
            ["a"],
            np.ones(3),
            None,
            ValueError,
            r"2-D \(n_keys, vector_size >= 1\) array, got shape \(3,\)",
        ),
        (
            ["a", "b"],
            np.ones((2, 3)),
            [1, -1],
            ValueError,
            r"counts must be 2 non-negative integers",
        ),
        (["a", "b"], np.ones((2, 3)), [1.5, 2], ValueError, r"counts must be 2"),
    ],
)
def test_constructor_errors_name_the_problem(keys, vectors, counts, error, match):
    with pytest.raises(error, match=match):
        Vectors(keys, vectors, counts)


def test_lookup_errors(ours):
    with pytest.raises(KeyError, match="'nope' is not among the 400 keys"):
        ours["nope"]
    with pytest.raises(TypeError, match=r"keys are str, got int 3; for row i use \.vectors\[i\]"):
        ours[3]
    with pytest.raises(ValueError, match="topn must be"):
        ours.most_similar("w1", topn=-1)
    with pytest.raises(ValueError, match="restrict_vocab must be"):
        ours.most_similar("w1", restrict_vocab=0)
    with pytest.raises(TypeError, match=r"a key \(str\) or a \(12,\) vector"):
        ours.most_similar(np.ones(5))
    with pytest.raises(ValueError, match="at least one"):
        ours.most_similar()
    with pytest.raises(ValueError, match="at least one"):
        ours.most_similar_cosmul(negative=["w1"])
    with pytest.raises(TypeError, match=r"not \(term, weight\) pairs"):
        ours.most_similar_cosmul([("w1", 2.0)])


QUERIES = [
    {"positive": "w1"},
    {"positive": ["w1", "w2"], "negative": ["w3"]},
    {"negative": ["w4"]},
    {"positive": [("w1", 0.5), "w2"], "negative": [("w3", -2.0)]},
    {"positive": ["w1"], "topn": 3, "restrict_vocab": 50},
    {"positive": ["w1", "w2"], "topn": V + 5},
    {"positive": ["w7", "w8"], "negative": "w9", "topn": 0},
]


@pytest.mark.parametrize("query", QUERIES)
def test_most_similar_matches_gensim(ours, theirs, query):
    assert_same_ranking(ours.most_similar(**query), theirs.most_similar(**query))


def test_most_similar_by_vector_and_all_scores(ours, theirs, table):
    vector = table[1][11] * 3 + 1.0  # not unit length, not a key: nothing excluded
    assert_same_ranking(
        ours.most_similar(positive=[vector]), theirs.most_similar(positive=[vector])
    )
    assert_same_ranking(
        ours.similar_by_vector(vector, topn=4), theirs.similar_by_vector(vector, topn=4)
    )
    mixed = {
        "positive": ["w1", vector],
        "negative": [table[1][2]],
        "topn": None,
        "restrict_vocab": 99,
    }
    scores = ours.most_similar(**mixed)
    assert scores.shape == (99,)
    np.testing.assert_allclose(scores, theirs.most_similar(**mixed), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "query",
    [
        {"positive": ["w1", "w2"], "negative": ["w3"]},
        {"positive": "w5"},
        {"positive": ["w5", "w6", "w7"], "negative": ["w1", "w2"], "topn": 25},
    ],
)
def test_most_similar_cosmul_matches_gensim(ours, theirs, query):
    assert_same_ranking(ours.most_similar_cosmul(**query), theirs.most_similar_cosmul(**query))
    everything = ours.most_similar_cosmul(**{**query, "topn": None})
    np.testing.assert_allclose(
        everything, theirs.most_similar_cosmul(**{**query, "topn": None}), rtol=1e-5
    )


def test_most_similar_cosmul_restrict_vocab_restricts(ours, theirs):
    """gensim 4.4 ignores restrict_vocab here; the reference is its full score array cut short."""
    query = {"positive": ["w30", "w2"], "negative": ["w3"]}
    scores = theirs.most_similar_cosmul(**query, topn=None)[:60]
    order = [i for i in np.argsort(-scores, kind="stable") if i not in (30, 2, 3)][:5]
    expected = [(f"w{i}", float(scores[i])) for i in order]
    assert_same_ranking(ours.most_similar_cosmul(**query, topn=5, restrict_vocab=60), expected)


def test_analogy_is_most_similar_b_plus_c_minus_a(ours, theirs):
    rng = np.random.default_rng(0)
    for a, b, c in rng.integers(0, V, size=(30, 3)):
        a, b, c = f"w{a}", f"w{b}", f"w{c}"
        assert ours.analogy(a, b, c) == theirs.most_similar([b, c], [a], topn=1)[0][0]
        got = ours.analogy(a, b, c, method="3cosmul")
        assert got == theirs.most_similar_cosmul([b, c], [a], topn=1)[0][0]
    with pytest.raises(ValueError, match="no key other than"):
        Vectors(["a", "b", "c"], np.eye(3)).analogy("a", "b", "c")


def test_pairwise_measures_match_gensim(ours, theirs, table):
    _, vectors = table
    for k1, k2 in [("w1", "w2"), ("w3", "w3"), ("w10", "w399")]:
        assert ours.similarity(k1, k2) == pytest.approx(float(theirs.similarity(k1, k2)), abs=1e-6)
        assert ours.distance(k1, k2) == pytest.approx(float(theirs.distance(k1, k2)), abs=1e-6)
        euclid = np.linalg.norm(vectors[int(k1[1:])].astype(np.float64) - vectors[int(k2[1:])])
        assert ours.distance(k1, k2, metric="euclidean") == pytest.approx(euclid, rel=1e-6)
        assert ours.rank(k1, k2) == theirs.rank(k1, k2)
    np.testing.assert_allclose(ours.distances("w4"), theirs.distances("w4"), atol=1e-6)
    np.testing.assert_allclose(
        ours.distances(vectors[5], ["w1", "w9"]),
        theirs.distances(vectors[5], ["w1", "w9"]),
        atol=1e-6,
    )
    np.testing.assert_allclose(
        ours.distances("w2", ["w3", "w4"], metric="euclidean"),
        np.linalg.norm(vectors[[3, 4]] - vectors[2], axis=1),
        rtol=1e-6,
    )
    assert ours.closer_than("w1", "w50") == theirs.closer_than("w1", "w50")
    sets = (["w1", "w2", "w3"], ["w4", "w5"])
    assert ours.n_similarity(*sets) == pytest.approx(float(theirs.n_similarity(*sets)), abs=1e-6)
    with pytest.raises(ValueError, match="metric must be"):
        ours.distance("w1", "w2", metric="manhattan")


def test_doesnt_match_matches_gensim(ours, theirs):
    rng = np.random.default_rng(1)
    for _ in range(20):
        words = [f"w{i}" for i in rng.choice(V, size=5, replace=False)]
        assert ours.doesnt_match(words) == theirs.doesnt_match(words)
    with pytest.warns(UserWarning, match="ignores keys not in the table"):
        assert ours.doesnt_match(["w1", "w2", "w3", "zz"]) == theirs.doesnt_match(
            ["w1", "w2", "w3", "zz"]
        )


def test_top_k_equals_full_sort():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((6, 50))
    for k in (1, 7, 49, 50, 80):
        np.testing.assert_array_equal(
            top_k(scores, k), np.argsort(-scores, axis=1, kind="stable")[:, :k]
        )
        np.testing.assert_array_equal(
            top_k(scores[0], k), np.argsort(-scores[0], kind="stable")[:k]
        )
    with_nan = np.array([0.5, np.nan, 0.9, 0.1])
    assert top_k(with_nan, 3).tolist() == [2, 0, 3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_k_rows_kernel_equals_top_k(dtype):
    """The numba kernel against a full stable sort, with ties, NaN and -inf; argpartition
    (top_k) may break ties at the k-th place either way, so it is held to the same values."""
    rng = np.random.default_rng(6)
    scores = rng.integers(-3, 4, size=(40, 30)).astype(dtype)  # many ties
    scores[rng.random(scores.shape) < 0.1] = np.nan
    scores[rng.random(scores.shape) < 0.05] = -np.inf
    scores[0] = np.nan
    for k in (1, 3, 8, 30, 45):
        got = top_k_rows(scores, k)
        np.testing.assert_array_equal(got, np.argsort(-scores, axis=1, kind="stable")[:, :k])
        np.testing.assert_array_equal(
            np.take_along_axis(scores, got, 1), np.take_along_axis(scores, top_k(scores, k), 1)
        )


def test_zero_vector_has_cosine_zero_not_nan():
    table = Vectors(["zero", "x", "y"], [[0.0, 0.0], [1.0, 0.0], [0.6, 0.8]])
    assert table.similarity("zero", "x") == 0.0
    assert table.most_similar("x") == [("y", pytest.approx(0.6)), ("zero", 0.0)]


def test_unit_normalize_all_and_counts(table):
    keys, vectors = table
    mine = vectors.copy()
    normed = Vectors(keys, mine, counts=np.arange(V, 0, -1), copy=False)
    normed.unit_normalize_all()
    np.testing.assert_allclose(np.linalg.norm(normed.vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(mine, vectors)  # the caller's array is not overwritten
    assert normed.counts.dtype == np.int64 and normed.counts[0] == V
    assert repr(normed) == f"Vectors(n_keys={V}, vector_size={D})"


# -- inf and nan at every door ----------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_every_door_refuses_inf_and_nan_naming_the_row_and_the_escape_hatch(bad, tmp_path):
    from rowbook.nn import Embedding, EmbeddingBag

    table = np.ones((3, 4), np.float32)
    table[2, 1] = bad
    hint = r"row 2 \('c'\) holds .* at column 1.*pass allow_nonfinite=True"
    with pytest.raises(ValueError, match=hint):
        Vectors(["a", "b", "c"], table)
    good = Vectors(["a", "b"], table[:2])
    with pytest.raises(ValueError, match=r"weights row 1 \('c'\) holds"):
        good.add_vectors(["x", "c"], table[1:])
    with pytest.raises(ValueError, match=r"weights row 0 \('a'\) holds"):
        good["a"] = table[2]
    assert len(good) == 2 and np.isfinite(good.vectors).all()  # refused edits change nothing
    for layer in (Embedding, EmbeddingBag):
        with pytest.raises(ValueError, match=r"embeddings row 2 holds .*allow_nonfinite=True"):
            layer.from_pretrained(table)
        assert layer.from_pretrained(table, allow_nonfinite=True).weight.shape == (3, 4)


def test_allow_nonfinite_keeps_such_rows_as_the_loaders_do(tmp_path):
    table = np.ones((3, 4), np.float32)
    table[2, 1] = np.nan
    kept = Vectors(["a", "b", "c"], table, allow_nonfinite=True)
    assert kept.similarity("a", "c") == 0.0  # a zero row for queries, as after a loader
    kept["d"] = table[2]  # the table's own choice holds for its edits
    kept.add_vectors("e", table[2])
    assert len(kept) == 5
    strict = Vectors(["a"], table[:1])
    strict.add_vectors("c", table[2], allow_nonfinite=True)  # or one call's
    assert "c" in strict
    kept.save(tmp_path / "v.safetensors")
    with pytest.raises(ValueError, match=r"v\.safetensors: 'vectors' row 3 \('c'\): value 2"):
        Vectors.load(tmp_path / "v.safetensors")
    assert len(Vectors.load(tmp_path / "v.safetensors", allow_nonfinite=True)) == 5
