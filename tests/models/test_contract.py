"""Every model follows the one contract of rowbook.models.base; a new model cannot skip it.

The models are enumerated from ``rowbook.models.MODELS`` and from every ``Model``
subclass in the package, so a model that is not listed, or listed but not a ``Model``,
fails here.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import rowbook
from rowbook.models import MODELS, Model, NotFittedError
from rowbook.models.base import read_model_file


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


def test_every_model_subclass_is_listed_and_every_listed_model_is_a_subclass():
    """A family's base class (abstract: it cannot be made) is not a model; any other is."""
    public = {
        cls.__name__
        for cls in _all_subclasses(Model)
        if not cls.__name__.startswith("_") and not inspect.isabstract(cls)
    }
    assert public <= set(MODELS)
    assert all(issubclass(cls, Model) for cls in MODELS.values())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_parameters_are_keyword_only_with_defaults_visible_to_help(name):
    cls = MODELS[name]
    params = inspect.signature(cls.__init__).parameters
    names = [p for p in params if p != "self"]
    assert names, f"{name} has no parameters"
    for p in names:
        assert params[p].kind is inspect.Parameter.KEYWORD_ONLY, (name, p)
        assert params[p].default is not inspect.Parameter.empty, (name, p)
    model = cls()
    assert model.get_params() == {p: params[p].default for p in names}
    assert cls(**model.get_params()).get_params() == model.get_params()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fit_takes_data_then_checkpoint_and_resume(name):
    params = inspect.signature(MODELS[name].fit).parameters
    positional = [p for p, v in params.items() if v.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional[0] == "self" and len(positional) >= 2
    for keyword in ("checkpoint", "resume"):
        assert params[keyword].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[keyword].default is None


#: Models that learn no embedding table (contract point 4 does not apply to them): the
#: learned arrays their round trip compares instead of ``vectors``.
NO_TABLE: dict[str, Callable[[Any], list[np.ndarray]]] = {
    "NGramLM": lambda m: [*m.tables_.keys, *m.tables_.log10_prob, *m.tables_.log10_backoff],
}


def _learned(model: Any, name: str) -> tuple[tuple[str, ...], list[np.ndarray]]:
    """The keys and arrays of the learned table (``vectors``), or a table-less model's arrays."""
    if name in NO_TABLE:
        return tuple(model.vocab_.itos), NO_TABLE[name](model)
    return tuple(model.vectors.index_to_key), [model.vectors.vectors]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_learned_state_before_fit_raises_the_one_not_fitted_error(name, tmp_path):
    model = MODELS[name]()
    assert not model.is_fitted
    with pytest.raises(NotFittedError, match="not fitted"):
        _learned(model, name)
    with pytest.raises(NotFittedError, match="not fitted"):
        model.save(tmp_path / "m.npz")


def test_loading_a_model_of_another_class_names_both(tmp_path):
    from rowbook.io import save_state

    path = tmp_path / "other.npz"
    save_state(
        path, {"class": "GloVe", "state_version": 1, "params": {}, "state": {}}, kind="model"
    )
    with pytest.raises(ValueError, match="holds a GloVe model, not a Word2Vec"):
        rowbook.Word2Vec.load(path)
    assert read_model_file(path)["class"] == "GloVe"


def test_loading_a_newer_state_version_says_to_upgrade(tmp_path):
    from rowbook.io import save_state

    path = tmp_path / "newer.npz"
    save_state(
        path, {"class": "GloVe", "state_version": 999, "params": {}, "state": {}}, kind="model"
    )
    with pytest.raises(ValueError, match="newer rowbook"):
        rowbook.load(path)


def test_loading_an_unknown_class_lists_the_known_ones(tmp_path):
    from rowbook.io import save_state

    path = tmp_path / "unknown.npz"
    save_state(
        path, {"class": "Transformer", "state_version": 1, "params": {}, "state": {}}, kind="model"
    )
    with pytest.raises(ValueError, match="does not know"):
        rowbook.load(path)


# -- fit, save, load: the same learned table bit for bit ------------------------------------

_TINY_TEXT = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["the", "dog", "sat", "on", "the", "rug"],
] * 10

_LINES = ["the cat sat on the mat", "the dog sat on the rug", "a cat is not a dog"] * 4

#: Model name -> (a factory of a small, quick, one-worker model; the arguments of its fit).
ROUND_TRIP: dict[str, tuple[Callable[[], Any], tuple[Any, ...]]] = {
    "Word2Vec": (
        lambda: rowbook.Word2Vec(vector_size=8, min_count=1, epochs=2, workers=1),
        (_TINY_TEXT,),
    ),
    "GloVe": (
        lambda: rowbook.GloVe(vector_size=6, min_count=1, epochs=3, workers=1),
        (_TINY_TEXT,),
    ),
    "ColorHarmony": (lambda: rowbook.ColorHarmony(epochs=2), (None,)),
    "NPLM": (lambda: rowbook.NPLM(context=2, dim=4, hidden=8, epochs=2), (_LINES,)),
    "TextClassifier": (
        lambda: rowbook.TextClassifier(dim=4, hidden=4, epochs=2),
        (_LINES, [0, 1, 0] * 4),
    ),
    "LSTMClassifier": (
        lambda: rowbook.LSTMClassifier(dim=4, hidden=4, epochs=2),
        (_LINES, [0, 1, 0] * 4),
    ),
    "FastText": (
        lambda: rowbook.FastText(vector_size=8, min_count=1, bucket=50, epochs=2, workers=1),
        (_TINY_TEXT,),
    ),
    "TransformerLM": (
        lambda: rowbook.TransformerLM(
            vocab_size=280, d_model=8, n_layers=1, n_heads=2, context=8, epochs=2
        ),
        (_LINES,),
    ),
    "FastTextClassifier": (
        lambda: rowbook.FastTextClassifier(
            vector_size=8, epochs=2, word_ngrams=2, bucket=50, workers=1
        ),
        (_LINES, ["a", "b", "a"] * 4),
    ),
    "NGramLM": (lambda: rowbook.NGramLM(n=3, discount_fallback=(0.5, 1.0, 1.5)), (_LINES,)),
}


def test_every_model_has_a_round_trip_case():
    assert set(ROUND_TRIP) == set(MODELS)


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_fit_save_load_gives_the_same_vectors_bit_for_bit(name, tmp_path):
    factory, args = ROUND_TRIP[name]
    model = factory().fit(*args)
    path = tmp_path / f"{name}.model.npz"
    model.save(path)
    keys, arrays = _learned(model, name)
    for loaded in (rowbook.load(path), MODELS[name].load(path)):
        assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
        for m in (model, loaded):  # the learned state is the family's dataclass, not a dict
            assert dataclasses.is_dataclass(m._fitted), type(m._fitted)
        loaded_keys, loaded_arrays = _learned(loaded, name)
        assert loaded_keys == keys and len(loaded_arrays) == len(arrays)
        assert all(np.array_equal(a, b) for a, b in zip(loaded_arrays, arrays, strict=True))


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_the_same_path_as_checkpoint_and_resume_starts_then_continues(name, tmp_path):
    """A resume path with no file yet starts afresh, in every model: the kill-safe idiom."""
    factory, args = ROUND_TRIP[name]
    path = tmp_path / "run.npz"
    first = factory().fit(*args, checkpoint=path, resume=path)
    assert path.exists()
    again = factory().fit(*args, checkpoint=path, resume=path)  # finished: nothing left to train
    for a, b in zip(_learned(again, name)[1], _learned(first, name)[1], strict=True):
        assert np.array_equal(a, b)
