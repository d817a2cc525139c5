"""No silent answers at the query door: every public method that takes a vector or a matrix
refuses inf and nan with the words of the table doors, whatever the value and its place."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("faiss")

from rowbook.nn import Embedding
from rowbook.vectors import QuantizedVectors, SubwordVectors, Vectors
from rowbook.vectors.index import VectorIndex

D = 8
REFUSED = "inf and nan make every query score nan"
KEYS = [f"k{i}" for i in range(40)]


def _tables() -> dict[str, Vectors]:
    rows = np.random.default_rng(0).standard_normal((40, D)).astype(np.float32)
    plain = Vectors(KEYS, rows)
    plain.build_index("ivf", nlist=4, nprobe=4)
    small = plain.quantize("int8", verbose=False)
    return {"Vectors": plain, "QuantizedVectors": small}


TABLES = _tables()

# Each door: (method, how it is called with a bad (D,) vector `v`). A new public method that
# takes an array must join this list (see the last test) or NOT_QUERY_DOORS, with its reason.
DOORS = {
    "most_similar": [
        lambda t, v: t.most_similar(positive=[v]),
        lambda t, v: t.most_similar(positive=["k1"], negative=[v]),
        lambda t, v: t.most_similar(positive=[(v, 0.5)]),
        lambda t, v: t.most_similar(batch=["k1", v]),
        lambda t, v: t.most_similar(batch=np.stack([v, v])),
        lambda t, v: t.most_similar(positive=[v], approximate=True),
    ],
    "most_similar_cosmul": [
        lambda t, v: t.most_similar_cosmul(positive=[v]),
        lambda t, v: t.most_similar_cosmul(positive=["k1"], negative=[v]),
    ],
    "similar_by_vector": [lambda t, v: t.similar_by_vector(v)],
    "analogy": [  # typed for keys; a vector given goes through most_similar's door
        lambda t, v: t.analogy("k1", v, "k2"),
        lambda t, v: t.analogy("k1", "k2", v, method="3cosmul"),
    ],
    "distances": [lambda t, v: t.distances(v)],
    "get_mean_vector": [lambda t, v: t.get_mean_vector(["k1", v])],
    "add_vectors": [lambda t, v: Vectors(KEYS[:1], np.ones((1, D))).add_vectors(["x"], v[None])],
    "cosines": [lambda t, v: t.cosines(v, len(t)), lambda t, v: t.cosines(np.stack([v, v]), 5)],
    "term_rows": [lambda t, v: t.term_rows(["k1", v], normalise_keys=True)],
}
INDEX_DOORS = {
    "build": lambda v: VectorIndex.build(np.stack([v, np.ones(D, np.float32)]), "ivf", nlist=1),
    "search": lambda v: TABLES["Vectors"].vector_index.search(v, 3),
    "search_batch": lambda v: TABLES["Vectors"].vector_index.search_batch(np.stack([v, v]), 3),
}
NOT_QUERY_DOORS = {
    "build_index": "takes settings, not arrays; the rows are the table's, checked when stored",
    "load_word2vec_format": "datatype is a dtype",
    "save_projector": "metadata is columns of labels",
    "vectors_for_all": "takes keys",
    "load": "options of a file",
    "rows_at": "takes row numbers",
    "unit_rows_at": "takes row numbers",
    "replace_rows": "the door edits go through, after add_vectors checked the rows it adds",
    "set_counts": "takes counts, integers checked as the constructor's",
}


def _bad_vector(data: st.DataObject) -> np.ndarray:
    values = data.draw(st.lists(st.floats(-1e3, 1e3), min_size=D, max_size=D))
    vector = np.array(values, dtype=np.float32)
    vector[data.draw(st.integers(0, D - 1))] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    return vector


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_vector_door_refuses_inf_and_nan(data):
    vector = _bad_vector(data)
    for table in TABLES.values():
        for name, calls in DOORS.items():
            if name == "add_vectors" and table is not TABLES["Vectors"]:
                continue  # a quantised table is frozen: no rows to add
            for call in calls:
                with pytest.raises(ValueError, match=REFUSED):
                    call(table, vector)
    for call in INDEX_DOORS.values():
        with pytest.raises(ValueError, match=REFUSED):
            call(vector)
    with pytest.raises(ValueError, match=REFUSED):
        Embedding.from_pretrained(np.stack([vector, vector]))


def test_the_refusal_names_the_argument_and_the_place():
    table = TABLES["Vectors"]
    bad = np.ones(D, np.float32)
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"^negative\[1\] holds nan at column 3: " + REFUSED):
        table.most_similar(positive=["k1"], negative=["k2", bad])
    with pytest.raises(ValueError, match=r"^batch\[1\] holds nan at column 3"):
        table.most_similar(batch=np.stack([np.ones(D), bad]))
    with pytest.raises(ValueError, match=r"positive\[0\] weight must be a finite number"):
        table.most_similar(positive=[("k1", float("nan"))])
    with pytest.raises(ValueError, match=r"^weights holds inf at column 1"):
        table.get_mean_vector(["k1", "k2"], weights=[1.0, np.inf])
    with pytest.raises(ValueError, match=r"^queries row 0 holds nan at column 3"):
        table.vector_index.search(bad, 2)
    finite = np.ones(D, np.float32)  # the same doors let finite values through
    assert len(table.most_similar(positive=[finite], topn=3)) == 3
    assert len(table.most_similar(positive=[finite], topn=3, approximate=True)) == 3


def test_every_public_method_that_takes_an_array_is_a_door_checked_above():
    array_like = ("ndarray", "Term", "Weighted", "Any")
    checked = set(DOORS) | set(NOT_QUERY_DOORS)
    for cls in (Vectors, QuantizedVectors, SubwordVectors):
        for name, method in inspect.getmembers(cls, callable):
            if name.startswith("_"):
                continue
            parameters = inspect.signature(method).parameters.values()
            if any(any(t in str(p.annotation) for t in array_like) for p in parameters):
                assert name in checked, f"{cls.__name__}.{name} takes an array: add it to DOORS"
    for name, method in inspect.getmembers(VectorIndex, callable):
        if name.startswith("_"):
            continue
        parameters = inspect.signature(method).parameters.values()
        if any("ndarray" in str(p.annotation) for p in parameters):
            assert name in INDEX_DOORS, f"VectorIndex.{name} takes an array: add it"
