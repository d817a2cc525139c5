"""compare(a, b): a known rotation is recovered, rows changed on purpose are flagged, the
neighbour lists are those of a brute-force scan, and trained models compare sensibly."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from rowbook.data.synthetic import planted_corpus
from rowbook.vectors import Comparison, Vectors, compare
from rowbook.vectors.compare import AUTO_ALL, nearest_shared, procrustes
from rowbook.vectors.neighbors import unit_rows
from rowbook.vectors.products import cross_product, cross_product_reference


def _table(n: int = 400, d: int = 12, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"w{i}" for i in range(n)], rng.standard_normal((n, d)).astype(np.float32)


def _rotation(d: int, seed: int = 1) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))  # (d, d) orthogonal


def test_a_known_rotation_is_recovered() -> None:
    keys, X = _table()
    Q = _rotation(X.shape[1])
    noise = 0.01 * np.random.default_rng(2).standard_normal(X.shape)
    result = compare(Vectors(keys, X), Vectors(keys, X @ Q + noise))
    assert np.abs(result.rotation - Q).max() < 0.01  # R is the rotation applied
    s = result.summary()
    assert s["alignment_error"] < 0.02 and s["mean_cosine"] > 0.999  # noise: 1% of a row
    assert s["mean_overlap"] > 0.95 and s["changed_by_half"] == 0.0 and s["sampled"] == 400
    assert result.flagged() == []
    # without the alignment the rows would look unrelated
    raw = np.einsum("ij,ij->i", unit_rows(X)[1], unit_rows(X @ Q)[1])
    assert abs(float(raw.mean())) < 0.2


def test_rows_changed_on_purpose_are_flagged() -> None:
    keys, X = _table()
    rng = np.random.default_rng(3)
    Y = X @ _rotation(X.shape[1]) + 0.02 * rng.standard_normal(X.shape)
    changed = [5, 77, 123, 300, 399]
    Y[changed] = rng.standard_normal((len(changed), X.shape[1]))
    result = compare(Vectors(keys, X), Vectors(keys, Y))
    assert set(result.flagged()) == {keys[i] for i in changed}
    assert {key for key, _ in result.most_moved(len(changed))} == {keys[i] for i in changed}
    assert result.most_moved(1)[0][1] < 0.6 < result.least_moved(1)[0][1]
    assert result.summary()["flagged"] == len(changed)


def test_alignment_equals_scipy_and_the_kernel_its_reference() -> None:
    keys, X = _table(n=5000, d=9)
    Y = X @ _rotation(9) + 0.3 * np.random.default_rng(4).standard_normal(X.shape)
    A, B = unit_rows(X)[1], unit_rows(Y.astype(np.float32))[1]
    np.testing.assert_allclose(
        cross_product(A, B), cross_product_reference(A, B), rtol=1e-5, atol=1e-3
    )
    R, singular_sum = procrustes(A, B)
    expected, scale = scipy.linalg.orthogonal_procrustes(A.astype(np.float64), B.astype(np.float64))
    np.testing.assert_allclose(R, expected, atol=1e-5)
    assert singular_sum == pytest.approx(scale, rel=1e-6)
    result = compare(Vectors(keys, X), Vectors(keys, Y))
    residual = np.linalg.norm(A @ expected - B) / np.linalg.norm(B)
    assert result.alignment_error == pytest.approx(residual, rel=1e-4)
    np.testing.assert_allclose(result.cosine, np.einsum("ij,ij->i", A @ expected, B), atol=1e-5)


def test_neighbours_are_those_of_a_brute_force_scan() -> None:
    keys, X = _table(n=300, d=6)
    Y = X + 0.5 * np.random.default_rng(5).standard_normal(X.shape).astype(np.float32)
    result = compare(Vectors(keys, X), Vectors(keys, Y), k=7)
    for near, table in ((result.neighbors_a, X), (result.neighbors_b, Y)):
        unit = unit_rows(table)[1]
        scores = unit @ unit.T
        np.fill_diagonal(scores, -np.inf)
        np.testing.assert_array_equal(near, np.argsort(-scores, axis=1, kind="stable")[:, :7])
    overlap = [
        len(set(a) & set(b)) / 7
        for a, b in zip(result.neighbors_a, result.neighbors_b, strict=True)
    ]
    np.testing.assert_allclose(result.overlap, overlap)
    assert result.neighbors("w3") == (
        [keys[i] for i in result.neighbors_a[3]],
        [keys[i] for i in result.neighbors_b[3]],
    )
    # the scan in blocks: queries spread over several blocks of rows give the same lists
    unit = unit_rows(X)[1]
    np.testing.assert_array_equal(nearest_shared(unit, np.arange(300), 7), result.neighbors_a)


def test_shared_keys_widths_and_samples() -> None:
    keys, X = _table(n=200, d=8)
    rng = np.random.default_rng(6)
    order = rng.permutation(150)  # b: 150 of the keys, shuffled, plus 20 of its own
    b_keys = [keys[i] for i in order] + [f"new{i}" for i in range(20)]
    b_rows = np.concatenate([X[order] @ _rotation(8), rng.standard_normal((20, 8))])
    wide = np.concatenate([b_rows, np.zeros((170, 4))], axis=1)  # 12 columns, 4 of them zero
    for other, width in ((b_rows, 8), (wide, 12)):
        result = compare(Vectors(keys, X), Vectors(b_keys, other.astype(np.float32)))
        assert sorted(result.keys) == sorted(keys[i] for i in order)
        assert list(result.keys) == [k for k in keys if k in set(result.keys)]  # a's order
        assert (result.only_a, result.only_b) == (50, 20)
        assert result.rotation.shape == (width, width) and result.dims == (8, width)
        assert result.cosine.min() > 0.999 and result.summary()["mean_overlap"] > 0.999
    sampled = compare(Vectors(keys, X), Vectors(keys, X), sample=25, seed=3)
    assert len(sampled.sampled) == 25 and list(sampled.sampled) == sorted(set(sampled.sampled))
    with pytest.raises(KeyError, match="not among the 25 words"):
        sampled.neighbors(next(k for i, k in enumerate(keys) if i not in set(sampled.sampled)))
    assert len(compare(Vectors(keys, X), Vectors(keys, X), sample=None).sampled) == 200
    assert AUTO_ALL >= 200 and len(compare(Vectors(keys, X), Vectors(keys, X)).sampled) == 200


def test_errors() -> None:
    keys, X = _table(n=20, d=4)
    with pytest.raises(ValueError, match="share 0 key"):
        compare(Vectors(keys, X), Vectors([f"x{i}" for i in range(20)], X))
    with pytest.raises(ValueError, match="k must be smaller than the 20 shared keys, got 20"):
        compare(Vectors(keys, X), Vectors(keys, X), k=20)
    with pytest.raises(ValueError, match="sample must be an int >= 1, 'auto' or None"):
        compare(Vectors(keys, X), Vectors(keys, X), sample="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sample"):
        compare(Vectors(keys, X), Vectors(keys, X), sample=0)


# -- trained models: two seeds, two checkpoints, word2vec against GloVe, more training ------


@pytest.fixture(scope="module")
def trained() -> dict[str, object]:
    from rowbook.models import GloVe, Word2Vec

    corpus = planted_corpus(800, seed=0)
    settings = {"vector_size": 16, "min_count": 5, "sample": 0.0, "epochs": 5, "workers": 1}
    first = Word2Vec(**settings, seed=0)
    epochs: list[Vectors] = []  # a copy of the table after each epoch: the run's checkpoints
    first.fit(corpus, callback=lambda _: epochs.append(Vectors(first.index_to_key_, first.W_in_)))
    second = Word2Vec(**settings, seed=1).fit(corpus)
    glove = GloVe(vector_size=16, min_count=5, window=5, epochs=15, workers=1).fit(corpus)
    return {"first": first, "second": second, "glove": glove, "epochs": epochs}


def _random_like(table: Vectors) -> Vectors:
    rng = np.random.default_rng(0)
    return Vectors(table.index_to_key, rng.standard_normal(table.vectors.shape))


def test_two_seeds_and_word2vec_against_glove(trained: dict) -> None:
    first = trained["first"].vectors
    baseline = compare(first, _random_like(first), k=5).summary()
    for other, overlap_factor in (
        (trained["second"].vectors, 3.0),
        (trained["glove"].vectors, 1.5),
    ):
        s = compare(first, other, k=5).summary()
        assert s["shared"] == len(set(first.index_to_key) & set(other.index_to_key)) > 50
        # the same corpus learned twice: far more alike than a table and random rows (GloVe
        # on 800 sentences learns less of the planted structure than word2vec)
        assert s["mean_cosine"] > baseline["mean_cosine"] + 0.2
        assert s["mean_overlap"] > overlap_factor * baseline["mean_overlap"]


def test_two_checkpoints_of_one_run(trained: dict) -> None:
    epochs = trained["epochs"]
    assert len(epochs) == 5
    early, late = compare(epochs[0], epochs[-1], k=5), compare(epochs[-2], epochs[-1], k=5)
    # the last epoch (at the smallest learning rate) changes less than the four before it
    assert late.summary()["mean_cosine"] > early.summary()["mean_cosine"]
    assert late.summary()["mean_overlap"] >= early.summary()["mean_overlap"]
    same = compare(epochs[-1], epochs[-1]).summary()
    assert same["mean_overlap"] == 1.0 and same["alignment_error"] < 1e-3


def test_before_and_after_training_on_new_text(trained: dict) -> None:
    from rowbook.models import Word2Vec

    corpus = planted_corpus(400, seed=0)
    model = Word2Vec(vector_size=16, min_count=5, sample=0.0, epochs=3, workers=1, seed=0)
    before = Vectors(model.fit(corpus).index_to_key_, model.W_in_)  # a copy of the table
    new_text = [["the", "king", "and", "the", "queen", "in", "the", "palace"]] * 150
    after = model.train(new_text, epochs=2).vectors
    result = compare(before, after, k=5)
    seen = set(new_text[0])
    assert {key for key, _ in result.most_moved(4)} <= seen  # only words of the new text move
    unseen = [i for i, key in enumerate(result.keys) if key not in seen]
    assert result.cosine[unseen].min() > 0.99
    assert isinstance(result, Comparison) and "mean_overlap@5" in repr(result)
