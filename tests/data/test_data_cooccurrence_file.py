"""Co-occurrence files: counted once, trained on later, to the same vectors; every field checked."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from rowbook import GloVe
from rowbook.data import load_cooccurrence, save_cooccurrence
from rowbook.io import load_state, save_state

GLOVE = {"vector_size": 5, "window": 4, "min_count": 2, "epochs": 3, "workers": 1, "seed": 2}


def _corpus(n: int = 300) -> list[list[str]]:
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 81)
    return [
        [f"w{i}" for i in rng.choice(80, size=rng.integers(2, 15), p=p / p.sum())] for _ in range(n)
    ]


def test_counting_then_training_from_the_file_gives_the_vectors_of_fit(tmp_path):
    corpus = _corpus()
    counted = GloVe(**GLOVE).cooccurrence(corpus)
    save_cooccurrence(
        tmp_path / "c.npz", counted.matrix, counted.keys, counted.counts, window=counted.window
    )
    back = load_cooccurrence(tmp_path / "c.npz")
    assert back.keys == counted.keys and back.window == 4 and back.symmetric and back.weighted
    np.testing.assert_array_equal(back.counts, counted.counts)
    assert (back.matrix != counted.matrix).nnz == 0
    fitted = GloVe(**GLOVE).fit(corpus)
    from_file = GloVe(**GLOVE).fit_cooccurrence(back.matrix, back.keys, counts=back.counts)
    np.testing.assert_array_equal(from_file.vectors.vectors, fitted.vectors.vectors)


def test_a_budget_counts_the_same_file(tmp_path):
    corpus = _corpus()
    in_ram = GloVe(**GLOVE).cooccurrence(corpus)
    budgeted = GloVe(**GLOVE, memory=0.001).cooccurrence(corpus, spill_dir=tmp_path)
    assert budgeted.keys == in_ram.keys and (budgeted.matrix != in_ram.matrix).nnz == 0


def _state(path):
    return load_state(path, kind="cooccurrence")


EDITS = [
    (lambda s: s.update(keys=["a", "a", "c"]), "field 'keys' repeats a word"),
    (lambda s: s.update(keys=["a", 3, "c"]), "field 'keys' must be a list of words"),
    (lambda s: s.update(counts=s["counts"].astype(np.float64)), "field 'counts' must be int64"),
    (
        lambda s: s.update(indptr=np.array([0, 2, 1, 4])),
        "'indptr' must start at 0 and never decrease",
    ),
    (lambda s: s["indices"].__setitem__(0, 7), "'indices' holds a column outside [0, 3)"),
    (
        lambda s: s["indices"].__setitem__(slice(0, 2), [2, 1]),
        "strictly increasing within each row",
    ),
    (lambda s: s["data"].__setitem__(0, np.inf), "'data' must hold finite counts > 0"),
    (lambda s: s["data"].__setitem__(0, -1.0), "'data' must hold finite counts > 0"),
    (lambda s: s.update(data=s["data"][:-1]), "field 'data' must be float64 (4,)"),
    (lambda s: s.update(window=0), "field 'window' must be an integer >= 1, got 0"),
    (lambda s: s.update(symmetric="yes"), "'symmetric' and 'weighted' must be true or false"),
    (lambda s: s.pop("indptr"), "damaged or was not written by this rowbook (KeyError: 'indptr')"),
]


@pytest.mark.parametrize(("edit", "message"), EDITS)
def test_every_field_is_checked_and_named(tmp_path, edit, message):
    X = sp.csr_matrix([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    path = tmp_path / "c.npz"
    save_cooccurrence(path, X, ("a", "b", "c"), [3, 2, 1], window=5)
    state = _state(path)
    edit(state)
    save_state(path, state, kind="cooccurrence")
    with pytest.raises(
        ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ) as err:
        load_cooccurrence(path)
    assert str(path) in str(err.value)


def test_a_file_of_another_kind_is_refused(tmp_path):
    GloVe(**GLOVE).fit(_corpus(100)).save(tmp_path / "model.npz")
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "model.npz"))):
        load_cooccurrence(tmp_path / "model.npz")
