"""What gensim's KeyedVectors users reach for, against gensim itself on the same vectors.

The queries of issue 14 (similar_by_*, most_similar_to_given, get_mean_vector,
relative_cosine_similarity, rank / closer_than), building and editing tables, the
``fvocab=`` / ``limit=`` / ``datatype=`` file options, and the numerics: self-similarity
exactly 1.0 on gensim's own ``euclidean_vectors.bin``.
"""

from __future__ import annotations

import numpy as np
import pytest
from gensim import matutils
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from rowbook.vectors import Vectors

pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated:DeprecationWarning")  # gensim


@pytest.fixture(scope="module")
def euclidean() -> tuple[Vectors, KeyedVectors]:
    path = datapath("euclidean_vectors.bin")
    ours = Vectors.load_word2vec_format(path, binary=True)
    return ours, KeyedVectors.load_word2vec_format(path, binary=True)


@pytest.fixture(scope="module")
def pair() -> tuple[Vectors, KeyedVectors]:
    rng = np.random.default_rng(5)
    keys, table = [f"w{i}" for i in range(300)], rng.standard_normal((300, 16)).astype(np.float32)
    kv = KeyedVectors(16)
    kv.add_vectors(keys, table)
    return Vectors(keys, table), kv


def assert_same_ranking(got, expected):
    assert [k for k, _ in got] == [k for k, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-6, atol=1e-7)


def test_self_similarity_is_exactly_one_for_every_word(euclidean):
    ours, _ = euclidean
    for word in ours.index_to_key:
        assert ours.similarity(word, word) == 1.0
        assert ours.distance(word, word) == 0.0
    rows = np.arange(len(ours))
    for word in ours.index_to_key[::50]:
        distances = ours.distances(word)
        assert distances[ours.get_index(word)] == 0.0 and distances.dtype == np.float32
        assert distances[rows != ours.get_index(word)].min() > 0


def test_unit_rows_are_gensims_unitvec_bit_for_bit(euclidean):
    ours, theirs = euclidean
    expected = np.stack([matutils.unitvec(row) for row in theirs.vectors])
    np.testing.assert_array_equal(ours.get_normed_vectors(), expected)


def test_similarities_match_gensim_to_one_float32_step(euclidean):
    ours, theirs = euclidean
    rng = np.random.default_rng(0)
    words = theirs.index_to_key
    for i, j in rng.integers(0, len(words), size=(400, 2)):
        a, b = words[i], words[j]
        assert ours.similarity(a, b) == pytest.approx(float(theirs.similarity(a, b)), abs=1.2e-7)
        assert ours.distance(a, b) == pytest.approx(float(theirs.distance(a, b)), abs=1.2e-7)
    np.testing.assert_allclose(ours.distances("war"), theirs.distances("war"), atol=3e-7)
    others = words[10:20]
    np.testing.assert_allclose(
        ours.distances("war", others), theirs.distances("war", others), atol=3e-7
    )


def test_word_pairs_pearson_matches_gensim_closely(euclidean):
    ours, theirs = euclidean
    for name in ("wordsim353.tsv", "simlex999.txt"):
        got, expected = (
            ours.evaluate_word_pairs(datapath(name)),
            theirs.evaluate_word_pairs(datapath(name)),
        )
        np.testing.assert_allclose(got[0], tuple(expected[0]), rtol=1e-7)
        np.testing.assert_allclose(got[1], tuple(expected[1]), rtol=1e-12)


def test_similar_by_word_key_and_vector_match_gensim(pair):
    ours, theirs = pair
    for topn in (1, 5, 12):
        assert_same_ranking(ours.similar_by_word("w3", topn), theirs.similar_by_word("w3", topn))
        assert_same_ranking(ours.similar_by_key("w7", topn), theirs.similar_by_key("w7", topn))
        vector = theirs["w9"] + 0.1
        assert_same_ranking(
            ours.similar_by_vector(vector, topn), theirs.similar_by_vector(vector, topn)
        )
    assert_same_ranking(
        ours.similar_by_key("w2", 5, restrict_vocab=50),
        theirs.similar_by_key("w2", 5, restrict_vocab=50),
    )
    np.testing.assert_allclose(
        ours.similar_by_word("w4", None), theirs.similar_by_word("w4", None), atol=3e-7
    )


def test_most_similar_to_given_and_relative_cosine_match_gensim(pair):
    ours, theirs = pair
    choices = [f"w{i}" for i in range(20, 60, 3)]
    for key in ("w0", "w1", "w150"):
        assert ours.most_similar_to_given(key, choices) == theirs.most_similar_to_given(
            key, choices
        )
        for other, topn in (("w5", 10), ("w17", 3), (key, 1)):
            assert ours.relative_cosine_similarity(key, other, topn) == pytest.approx(
                theirs.relative_cosine_similarity(key, other, topn), rel=1e-6
            )
    with pytest.raises(ValueError, match="non-empty keys_list"):
        ours.most_similar_to_given("w0", [])


def test_rank_and_closer_than_match_gensim(pair):
    ours, theirs = pair
    for a, b in (("w0", "w1"), ("w10", "w200"), ("w42", "w42"), ("w299", "w3")):
        assert ours.rank(a, b) == theirs.rank(a, b)
        assert ours.closer_than(a, b) == theirs.closer_than(a, b)
        assert ours.words_closer_than(a, b) == theirs.words_closer_than(a, b)


@pytest.mark.parametrize("pre_normalize", [True, False])
@pytest.mark.parametrize("post_normalize", [False, True])
def test_get_mean_vector_matches_gensim(pair, pre_normalize, post_normalize):
    ours, theirs = pair
    vector = np.linspace(-1, 1, 16).astype(np.float32)
    cases = [
        (["w1", "w2", "w3"], None),
        (["w1", "w2", "w3"], [0.5, -2.0, 1.0]),
        (["w4", vector, "missing"], np.array([1.0, 3.0, 2.0])),
    ]
    for keys, weights in cases:
        kwargs = {"pre_normalize": pre_normalize, "post_normalize": post_normalize}
        got = ours.get_mean_vector(keys, weights, **kwargs)
        expected = theirs.get_mean_vector(keys, weights, **kwargs)
        assert got.dtype == np.float32 and got.shape == (16,)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(KeyError, match="missing"):
        ours.get_mean_vector(["w1", "missing"], ignore_missing=False)
    with pytest.raises(ValueError, match="one number per key"):
        ours.get_mean_vector(["w1", "w2"], [1.0])


def test_building_and_editing_match_gensim():
    rng = np.random.default_rng(3)
    first, second = rng.standard_normal((4, 6)), rng.standard_normal((3, 6))
    ours, theirs = Vectors(6), KeyedVectors(6)
    assert len(ours) == 0 and ours.vector_size == 6
    for table in (ours, theirs):
        table.add_vectors(["a", "b", "c", "d"], first)
    assert ours.most_similar("a", topn=2)  # fills the caches that the edits must drop
    for table in (ours, theirs):
        table.add_vectors(["c", "e", "f"], second)  # "c" exists: kept
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    for table in (ours, theirs):
        table.add_vectors(["a", "g"], second[:2], replace=True)
        table["b"] = second[2]
        table[["h", "d"]] = first[:2]
    assert list(ours.index_to_key) == theirs.index_to_key
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    fresh = Vectors(theirs.index_to_key, theirs.vectors)
    assert ours.most_similar("a", topn=4) == fresh.most_similar("a", topn=4)
    np.testing.assert_array_equal(ours.norms, fresh.norms)
    assert ours.similarity("b", "b") == 1.0


def test_edits_never_write_to_a_shared_array_and_keep_counts():
    table = np.ones((2, 3), dtype=np.float32)
    shared = Vectors(["a", "b"], table, counts=[5, 4], copy=False)
    shared["a"] = [2.0, 0.0, 0.0]
    assert (table == 1).all() and shared["a"][0] == 2.0
    shared.add_vectors(["c", "b"], np.zeros((2, 3)), counts=[7, 9])
    assert list(shared.counts) == [5, 4, 7]  # b kept (no replace)
    shared.add_vectors("d", [1.0, 1.0, 1.0])
    assert list(shared.counts) == [5, 4, 7, 0]
    with pytest.raises(ValueError, match=r"weights must be \(2, 3\)"):
        shared.add_vectors(["x", "y"], np.zeros((2, 4)))
    with pytest.raises(ValueError, match="duplicate key 'x'"):
        shared.add_vectors(["x", "x"], np.zeros((2, 3)))
    with pytest.raises(TypeError, match="empty table"):
        Vectors(3, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="vector_size must be an int >= 1"):
        Vectors(0)


def test_vectors_for_all_matches_gensim(pair):
    ours, theirs = pair
    words = ["w5", "nope", "w1", "w5", "w250", "other"]
    got, expected = ours.vectors_for_all(words), theirs.vectors_for_all(words)
    assert list(got.index_to_key) == expected.index_to_key == ["w5", "w1", "w250"]
    np.testing.assert_array_equal(got.vectors, expected.vectors)
    assert len(ours.vectors_for_all(["nope"])) == 0


@pytest.mark.parametrize("binary", [False, True])
def test_fvocab_counts_round_trip_with_gensim(tmp_path, binary):
    rng = np.random.default_rng(1)
    keys, table = [f"k{i}" for i in range(12)], rng.standard_normal((12, 5)).astype(np.float32)
    counts = np.arange(120, 0, -10)
    path, vocab = tmp_path / "v.bin", tmp_path / "vocab.txt"
    Vectors(keys, table, counts).save_word2vec_format(path, fvocab=vocab, binary=binary)
    theirs = KeyedVectors.load_word2vec_format(str(path), fvocab=str(vocab), binary=binary)
    assert [theirs.get_vecattr(k, "count") for k in keys] == counts.tolist()
    again_path, again_vocab = tmp_path / "g.bin", tmp_path / "g_vocab.txt"
    theirs.save_word2vec_format(str(again_path), fvocab=str(again_vocab), binary=binary)
    ours = Vectors.load_word2vec_format(again_path, fvocab=again_vocab, binary=binary)
    assert list(ours.index_to_key) == keys and ours.counts.tolist() == counts.tolist()
    limited = Vectors.load_word2vec_format(again_path, fvocab=again_vocab, binary=binary, limit=4)
    g_limited = KeyedVectors.load_word2vec_format(
        str(again_path), fvocab=str(again_vocab), binary=binary, limit=4
    )
    assert limited.counts.tolist() == [
        g_limited.get_vecattr(k, "count") for k in g_limited.index_to_key
    ]
    np.testing.assert_array_equal(limited.vectors, g_limited.vectors)


def test_fvocab_errors_name_the_problem(tmp_path):
    path, vocab = tmp_path / "v.txt", tmp_path / "vocab.txt"
    with pytest.raises(ValueError, match="this table has none"):
        Vectors(["a"], [[1.0]]).save_word2vec_format(path, fvocab=vocab)
    Vectors(["a", "b"], [[1.0], [2.0]]).save_word2vec_format(path)
    vocab.write_text("a 3\nb many\n")
    with pytest.raises(ValueError, match=r"vocab.txt, line 2: expected 'key count'"):
        Vectors.load_word2vec_format(path, fvocab=vocab)
    vocab.write_text("a 3\nzz 1\n")
    with pytest.warns(UserWarning, match="1 keys have no count, e.g. 'b'"):
        loaded = Vectors.load_word2vec_format(path, fvocab=vocab)
    assert loaded.counts.tolist() == [3, 0]


@pytest.mark.parametrize("binary", [False, True])
def test_float16_storage_matches_gensim_datatype(tmp_path, binary):
    rng = np.random.default_rng(2)
    keys, table = [f"k{i}" for i in range(40)], rng.standard_normal((40, 7)).astype(np.float32)
    path = tmp_path / "v.w2v"
    Vectors(keys, table).save_word2vec_format(path, binary=binary)
    ours = Vectors.load_word2vec_format(path, binary=binary, datatype=np.float16)
    theirs = KeyedVectors.load_word2vec_format(str(path), binary=binary, datatype=np.float16)
    assert ours.vectors.dtype == theirs.vectors.dtype == np.float16
    np.testing.assert_array_equal(ours.vectors, theirs.vectors)
    assert ours.get_normed_vectors().dtype == np.float32  # queries compute in float32
    assert ours.similarity("k1", "k1") == 1.0
    upcast = KeyedVectors(7)  # gensim computes in float16; rowbook in float32, as this table
    upcast.add_vectors(keys, theirs.vectors.astype(np.float32))
    assert_same_ranking(ours.most_similar("k3", topn=5), upcast.most_similar("k3", topn=5))
    saved = tmp_path / "v.npz"
    ours.save(saved)
    assert Vectors.load(saved).vectors.dtype == np.float16
    with pytest.raises(ValueError, match=r"datatype must be numpy\.float32 or numpy\.float16"):
        Vectors.load_word2vec_format(path, binary=binary, datatype=np.int8)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_safetensors_round_trip_and_torch_reads_the_table(tmp_path, dtype):
    import torch
    from safetensors.torch import load_file

    keys = ["naïve", "", "a b\nc", "🙂", "k"]
    table = np.random.default_rng(4).standard_normal((5, 3)).astype(dtype)
    path = tmp_path / "v.safetensors"
    Vectors(keys, table, counts=[5, 4, 3, 2, 1], dtype=dtype).save(path)
    again = Vectors.load(path)
    assert list(again.index_to_key) == keys and again.counts.tolist() == [5, 4, 3, 2, 1]
    assert again.vectors.dtype == dtype
    np.testing.assert_array_equal(again.vectors, table)
    embedding = torch.nn.Embedding.from_pretrained(load_file(path)["vectors"])
    ids = [again.get_index("🙂"), again.get_index("")]
    np.testing.assert_array_equal(embedding(torch.tensor(ids)).numpy(), again[["🙂", ""]])
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        Vectors.load(path)
