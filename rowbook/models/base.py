"""The one contract every rowbook model follows, and the file every model saves to.

A model is anything fitted to data (scikit-learn's estimator contract, with gensim's
save / load / keep training on top):

1. **Parameters.** ``__init__`` takes keyword-only parameters, each with a default, stores
   each one unchanged as an attribute of the same name, validates them with
   :mod:`rowbook.checks`, and does nothing else: no training, no reading. ``help(Model)``,
   editors, :meth:`Model.get_params` and ``repr`` all see the real signature.
2. **Fitting.** ``fit(data, *, checkpoint=None, resume=None) -> self`` learns everything
   from ``data``. ``checkpoint`` is a path: after every epoch the model is saved there,
   exactly as :meth:`Model.save` would (atomically). ``resume`` is a path to such a file
   (a checkpoint, or any saved model of the same class): training continues from the
   state it holds and stops where the uninterrupted run would have, bit for bit with one
   worker and the same seed. A ``resume`` path with no file yet starts afresh, so passing
   the same path to both is the way to make a run that survives being killed: the first
   run writes it, a rerun after a crash continues from it.
3. **Learned state** is set only by ``fit`` and ``load`` (and a reader of another
   program's file, which is a load), and read in attributes whose names end in an
   underscore (scikit-learn's convention: ``history_``, ``W_in_``, ``net_``). Reading it
   before raises :class:`NotFittedError`, one exception for every model. Underneath, it is
   one typed state object that only :meth:`Model._learning` (while ``fit`` trains it) and
   :meth:`Model._adopt` (a state made whole: loaded, read, or a vocabulary built) set.
4. **One way into the learned table.** Every model that learns an embedding table has
   ``vectors``, a :class:`rowbook.Vectors` (keys and rows), so the query side, the pictures
   and the CLI read every model the same way.
5. **One file.** ``model.save(path)`` writes parameters, learned state and training progress
   (optimizer moments, random state, history) as one pickle-free ``.npz``
   (:func:`rowbook.io.save_state`, kind ``"model"``). ``Cls.load(path)`` or
   :func:`rowbook.load` gives back a model that predicts, answers queries and takes its next
   training step exactly as the saved one would. A file of another class or of a newer
   state version is refused with a message saying which; a file of an older state version
   is brought up to date as it loads (``_upgrade``).

A new model subclasses :class:`Model`, implements ``fit``, ``_get_state`` and
``_set_state``, and is listed in ``rowbook.models.MODELS``; ``tests/models/test_contract.py``
then checks it follows all of the above.
"""

from __future__ import annotations

import inspect
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from rowbook.checks import NotFittedError, check_int
from rowbook.io import fields_of, load_state, save_state

__all__ = ["MODEL_KIND", "Model", "NotFittedError", "read_model_file", "same_json"]

MODEL_KIND = "model"

M = TypeVar("M", bound="Model")


class Model(ABC):
    """Base class of every model; see the module docstring for the contract it stands for.

    Subclasses set ``_state_version`` (bumped whenever what ``_get_state`` returns changes
    shape, with ``_upgrade`` reading the older shape), implement ``fit``,
    ``_get_state`` and ``_set_state``, list in ``_run_only`` the parameters a resumed
    ``fit`` may change, and name in ``_object_params`` the parameters that are objects
    with a ``to_dict()`` document (a :class:`~rowbook.text.TextPipeline`, a
    :class:`~rowbook.text.Normalizer`), each with the reader of that document; only a
    parameter saved another way overrides ``_params_to_json`` / ``_params_from_json``.
    """

    _state_version: ClassVar[int] = 1
    #: Parameters a resumed ``fit`` may change: they do not alter what is learned.
    _run_only: ClassVar[tuple[str, ...]] = ()
    #: Parameters saved as their ``to_dict()`` document: name -> ``read(document, where)``.
    _object_params: ClassVar[dict[str, Callable[[Any, str], Any]]] = {}
    #: The learned state: the family's typed state (a dataclass), None before ``fit``.
    _fitted: Any = None

    # -- parameters -------------------------------------------------------------------

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        """The names of the keyword parameters of ``__init__``, in signature order."""
        signature = inspect.signature(cls.__init__)
        return tuple(
            name
            for name, p in signature.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        )

    def get_params(self) -> dict[str, Any]:
        """The parameters as a dict (scikit-learn's accessor); ``Cls(**get_params())`` is a copy."""
        return {name: getattr(self, name) for name in self.param_names()}

    def __repr__(self) -> str:
        defaults = inspect.signature(type(self).__init__).parameters
        changed = {k: v for k, v in self.get_params().items() if v != defaults[k].default}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def _check_ints(self, owner: str | None = None, **minimums: int) -> None:
        """Each parameter named in ``minimums`` an integer ``>= minimum``
        (:func:`rowbook.checks.check_int`; ``owner``: the class its message names)."""
        for name, minimum in minimums.items():
            check_int(name, getattr(self, name), minimum, owner=owner)

    def _params_to_json(self) -> dict[str, Any]:
        params = self.get_params()
        for name in self._object_params:
            if params[name] is not None:
                params[name] = params[name].to_dict()
        return params

    @classmethod
    def _params_from_json(cls, params: dict[str, Any]) -> dict[str, Any]:
        params = dict(params)
        for name, read in cls._object_params.items():
            if params.get(name) is not None:
                params[name] = read(params[name], f"field 'params.{name}'")
        return params

    # -- learned state ----------------------------------------------------------------

    @property
    def is_fitted(self) -> bool:
        """Whether ``fit`` (or ``load``) has set the learned state."""
        return self._fitted is not None

    def _require_fitted(self, what: str) -> Any:
        """The learned state, or a :class:`NotFittedError` naming ``what`` was asked for."""
        if self._fitted is None:
            name = type(self).__name__
            raise NotFittedError(
                f"this {name} is not fitted yet; call fit(...) before using {what}, "
                f"or load a saved model with {name}.load(path)"
            )
        return self._fitted

    def _adopt(self: M, state: Any) -> M:
        """Make ``state`` the learned state: one made whole outside the training loop (a
        saved file's, another program's file read, a vocabulary built before ``train``).
        Returns ``self``."""
        self._fitted = state
        return self

    @contextmanager
    def _learning(self, state: Any, *, keep_on_error: bool = False) -> Iterator[None]:
        """``state`` is the learned state while the block trains it, so a checkpoint written
        meanwhile saves it. If the block raises (an error, Ctrl-C) the model keeps ``state``
        when ``keep_on_error`` (more training of a fitted model, updated in place), else gets
        back what it had: a ``fit`` that did not finish leaves no learned state."""
        previous, self._fitted = self._fitted, state
        try:
            yield
        except BaseException:
            if not keep_on_error:
                self._fitted = previous
            raise

    @abstractmethod
    def fit(self, data: Any, *, checkpoint: Any = None, resume: Any = None) -> Model:
        """Learn everything from ``data``; returns ``self`` (see the module docstring)."""

    @abstractmethod
    def _get_state(self) -> dict[str, Any]:
        """Learned state and training progress: nested dicts/lists of arrays and JSON values."""

    @abstractmethod
    def _set_state(self, state: dict[str, Any]) -> None:
        """Set the learned state from what :meth:`_get_state` returned (parameters are set)."""

    @classmethod
    def _upgrade(
        cls, params: dict[str, Any], state: dict[str, Any], version: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(params, state)`` as state version ``version`` (older than ``_state_version``)
        saved them, in the current shape. A class that bumps its version reads the old
        shape here, one version step at a time."""
        raise ValueError(
            f"{cls.__name__} state version {version} is not one this rowbook reads "
            f"(it reads version {cls._state_version})"
        )

    @classmethod
    def _current(cls, document: dict[str, Any], path: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The parameters (as saved) and learned state a saved ``document`` holds, in the
        current shape: a newer state version is refused (upgrade rowbook), an older one
        upgraded."""
        version, params, state = document["state_version"], document["params"], document["state"]
        if version > cls._state_version:
            raise ValueError(
                f"{path} holds {cls.__name__} state version {version}, written "
                f"by a newer rowbook; this one reads up to version {cls._state_version}: upgrade "
                "rowbook to load it"
            )
        with fields_of(path, f"saved {cls.__name__}"):
            while version < cls._state_version:
                params, state = cls._upgrade(params, state, version)
                version += 1
        return params, state

    def _resume_state(self, resume: str | os.PathLike[str] | None) -> dict[str, Any] | None:
        """The saved state a ``fit(..., resume=resume)`` continues, or ``None`` to start afresh
        (no ``resume``, or a path not written yet: the same path can be ``checkpoint`` too).

        The one rule for every model: the file holds a model of this class, of a state
        version this rowbook reads, saved with the same parameters (compared as saved, so a
        tuple equals the list it was written as) except the ``_run_only`` ones. What the
        state must also agree with (the corpus's vocabulary, say) is the model's to check.
        A parameter the file does not hold (added to the class since) counts as its default.
        """
        if resume is None or not Path(resume).exists():
            return None
        document = read_model_file(resume)
        name = type(self).__name__
        if document["class"] != name:
            raise ValueError(
                f"cannot resume from {resume}: it holds a {document['class']} model, not a {name}"
            )
        theirs, state = type(self)._current(document, resume)
        ours = self._params_to_json()
        # a parameter added since the file was written: it trained with the default
        defaults = inspect.signature(type(self).__init__).parameters
        theirs = {k: theirs.get(k, defaults[k].default) for k in ours} | theirs
        diff = {
            k: (theirs.get(k), v)
            for k, v in ours.items()
            if k not in self._run_only and not same_json(theirs.get(k), v)
        }
        if diff:
            changed = "; ".join(f"{k} saved {a!r}, now {b!r}" for k, (a, b) in diff.items())
            may_change = ", ".join(self._run_only) or "none"
            raise ValueError(
                f"cannot resume from {resume}: it was saved with other parameters ({changed}); "
                f"resume with the saved ones (only these may change: {may_change})"
            )
        return state

    # -- files ------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write parameters, learned state and training progress to ``path`` (``.npz``), atomically."""
        self._require_fitted("save()")
        document = {
            "class": type(self).__name__,
            "state_version": type(self)._state_version,
            "params": self._params_to_json(),
            "state": self._get_state(),
        }
        save_state(path, document, kind=MODEL_KIND)

    @classmethod
    def load(cls: type[M], path: str | os.PathLike[str], *, mmap: bool = False) -> M:
        """The model saved at ``path`` by :meth:`save` (or a ``checkpoint``), ready to use.

        ``mmap=True`` maps its large arrays (the tables) from the file copy-on-write instead
        of reading them: pages are read when first touched, and a write stays private."""
        document = read_model_file(path, mmap=mmap)
        if document["class"] != cls.__name__:
            raise ValueError(
                f"{path} holds a {document['class']} model, not a {cls.__name__}; load it with "
                f"rowbook.load(path) or {document['class']}.load(path)"
            )
        return cls._from_document(document, path)

    @classmethod
    def _from_document(cls: type[M], document: dict[str, Any], path: Any) -> M:
        params, state = cls._current(document, path)
        try:
            model = cls(**cls._params_from_json(dict(params)))
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"{path}: field 'params' does not fit {cls.__name__} ({err})"
            ) from None
        with fields_of(path, f"saved {cls.__name__}"):
            model._set_state(state)
        return model


def read_model_file(path: str | os.PathLike[str], *, mmap: bool = False) -> dict[str, Any]:
    """The document of a saved model, its fields checked: ``class``, ``state_version``, ``params``,
    ``state``; with ``mmap`` its large arrays are mapped copy-on-write."""
    document = load_state(path, kind=MODEL_KIND, mmap_mode="c" if mmap else None)
    expected = {"class": str, "state_version": int, "params": dict, "state": dict}
    if not isinstance(document, dict):
        raise ValueError(
            f"{path}: a saved model must hold a JSON object, got {type(document).__name__}"
        )
    for field, kind in expected.items():
        value = document.get(field)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(
                f"{path}: field {field!r} must be a {kind.__name__}, got {type(value).__name__}; "
                "the file is not a rowbook model or is damaged"
            )
    return document


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as they would be written (tuples as lists).

    >>> same_json((1, 2), [1, 2]), same_json({"a": 1}, {"a": 1.5})
    (True, False)
    """
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
