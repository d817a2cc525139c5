"""Optimizer: parameter groups, per-parameter state, and a state_dict that saves without pickle.

One file over 400 lines on purpose: it is the one base class every optimizer fills in
(groups, state, step, row telemetry, the pickle-free state_dict), its hooks read in one
place.

An optimizer holds a list of *parameter groups*, each a dict with a ``"params"`` list
and its own options (``lr``, ``eps``, ...), exactly as in PyTorch, so one table can
train with a different learning rate than the rest of the model::

    Adam([{"params": model.embedding.parameters(), "lr": 1e-2},
          {"params": model.head.parameters()}], lr=1e-3)

``step()`` walks the groups and hands each parameter with a gradient to the subclass's
``_update``. A gradient is either a dense ``np.ndarray`` or a
:class:`~rowbook.autograd.sparse.RowSparse` (sorted unique rows and their summed
gradient rows); each optimizer declares which kinds it takes, and refuses the other
with a message naming the optimizer that does take it.

``state_dict()`` is plain data: arrays, ints, floats, strings and lists, keyed by the
parameter's position (as a string) across all groups, so :meth:`Optimizer.save`
writes it to one ``.npz`` atomically and :meth:`Optimizer.load` reads it back with
``allow_pickle=False``.

Built with ``row_stats=True``, an optimizer also keeps per-row telemetry of every
parameter it steps (:class:`~rowbook.optim.row_stats.RowStats`: updates, summed gradient
norm, last step, distance travelled), read with :meth:`Optimizer.row_stats`. It is
recorded before each update from the gradient alone, so the weights are exactly those of
an optimizer without it; off (the default), a step does nothing more than before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from rowbook.autograd.sparse import RowSparse
from rowbook.autograd.tensor import Tensor
from rowbook.checks import InputIndexError, InputTypeError
from rowbook.optim.row_stats import RowStats, RowStatsRecorder
from rowbook.optim.state import StateFactory

__all__ = ["Optimizer", "ParamsT"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]
Gradient = np.ndarray | RowSparse


class Optimizer:
    """Base class: parameter groups, ``zero_grad``, ``step``, ``state_dict`` and files.

    Subclasses set ``defaults`` through ``__init__``, validate a group's options in
    :meth:`_check_group`, and update one parameter in :meth:`_update`.

    Parameters
    ----------
    params : iterable of tensors or of param-group dicts
        The tensors to step, or groups of them (``{"params": [...], "lr": ...}``) with
        options of their own.
    defaults : dict
        Every option's value for the groups that do not set it.
    row_stats : bool
        Keep per-row telemetry (:meth:`row_stats`).

    Attributes
    ----------
    param_groups : list[dict]
        One dict per group: ``"params"`` (list of tensors) and every option.
    state : dict
        Per-parameter state (moments, accumulators, step counts), keyed by the tensor.
    """

    #: name of the optimizer to suggest when a row-sparse gradient arrives (None: accepted)
    sparse_alternative: ClassVar[str | None] = None
    #: name of the optimizer to suggest when a dense gradient arrives (None: accepted)
    dense_alternative: ClassVar[str | None] = None
    #: ``(name, shape, dtype) -> array`` giving each state array (None: ``np.full``); the
    #: sparse optimizers default to :func:`rowbook.optim.state.lazy_zeros`, so state of rows
    #: never looked up costs no memory, and take a caller's ``state_factory=``
    state_factory: StateFactory | None = None

    def __init__(
        self, params: ParamsT, defaults: dict[str, Any], *, row_stats: bool = False
    ) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        if not isinstance(row_stats, bool):
            raise InputTypeError(
                f"{type(self).__name__}: row_stats must be True or False, got {row_stats!r}"
            )
        #: per-parameter telemetry recorders when built with ``row_stats=True``, else None
        self._row_stats: dict[Tensor, RowStatsRecorder] | None = {} if row_stats else None
        if isinstance(params, Tensor):
            raise InputTypeError(
                f"{type(self).__name__}: params must be an iterable of tensors or of dicts, "
                "got a single Tensor; pass [tensor] or module.parameters()"
            )
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups -------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group; options it does not set are taken from the optimizer's defaults."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise InputTypeError(f"{name}: a param group must be a dict, got {type(param_group)}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise InputTypeError(f"{name}: can only optimize Tensors, got {type(p).__name__}")
            if p.dtype.kind != "f":
                raise InputTypeError(f"{name}: can only optimize floating tensors, got {p.dtype}")
            if p._backward is not None:
                raise ValueError(f"{name}: cannot optimize a non-leaf Tensor (it has a graph)")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or seen & {id(p) for p in params}:
            raise ValueError(f"{name}: some parameters appear more than once in the param groups")
        group = {**self.defaults, **param_group, "params": params}
        self._check_group(group)
        self.param_groups.append(group)

    def _init_all_states(self) -> None:
        """Create every parameter's state now rather than at its first step."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state.setdefault(p, self._init_state(p.data, group))

    def _check_group(self, group: dict[str, Any]) -> None:
        """Validate a group's options; raise ValueError naming the option and its range."""

    # -- training -----------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every gradient (``grad = None``), or zero dense ones in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or isinstance(p.grad, RowSparse):
                    p.grad = None
                elif p.grad is not None:
                    p.grad[...] = 0

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; return ``closure()`` if given."""
        loss = closure() if closure is not None else None
        for g_index, group in enumerate(self.param_groups):
            for p_index, p in enumerate(group["params"]):
                if p.grad is None:
                    continue
                where = f"param_groups[{g_index}]['params'][{p_index}]"
                grad = self._checked_grad(p, where)
                state = self.state.setdefault(p, {})
                if not state:
                    state.update(self._init_state(p.data, group))
                self._follow_dtype(state, p.dtype)
                if self._row_stats is not None:  # before the update: it keeps starting values
                    self._recorder(p).record(p.data, *_rows_of(grad))
                self._update(p.data, grad, state, group)
        return loss

    def _checked_grad(self, p: Tensor, where: str) -> Gradient:
        name = type(self).__name__
        grad = p.grad
        if isinstance(grad, RowSparse):
            if self.sparse_alternative is not None:
                raise InputTypeError(
                    f"{name} does not support sparse gradients ({where} has a RowSparse "
                    f"gradient), please consider {self.sparse_alternative} instead"
                )
            if grad.shape != p.shape:
                raise ValueError(f"{name}: {where} has shape {p.shape}, its gradient {grad.shape}")
            if grad.nnz and (grad.indices[0] < 0 or grad.indices[-1] >= p.shape[0]):
                raise InputIndexError(
                    f"{name}: gradient rows of {where} span [{grad.indices[0]}, "
                    f"{grad.indices[-1]}], the table has rows [0, {p.shape[0]})"
                )
            if grad.values.dtype != p.dtype:
                grad = RowSparse(grad.indices, grad.values.astype(p.dtype), grad.shape)
            return grad
        if self.dense_alternative is not None:
            raise InputTypeError(
                f"{name} does not support dense gradients ({where}), please consider "
                f"{self.dense_alternative} instead (or a sparse=True embedding lookup)"
            )
        grad = np.asarray(grad, dtype=p.dtype)
        if grad.shape != p.shape:
            raise ValueError(f"{name}: {where} has shape {p.shape}, its gradient {grad.shape}")
        return grad

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        """The state of a parameter before its first update (empty by default)."""
        return {}

    def _state_array(
        self, name: str, shape: tuple[int, ...], dtype: Any, fill: float = 0.0
    ) -> np.ndarray:
        """A state array from ``state_factory`` (``np.full`` without one), set to ``fill``."""
        if self.state_factory is None:
            return np.full(shape, fill, dtype=dtype)
        array = self.state_factory(name, tuple(shape), np.dtype(dtype))
        if array.shape != tuple(shape) or array.dtype != np.dtype(dtype):
            raise ValueError(
                f"{type(self).__name__}: state_factory gave {name!r} shape {array.shape} "
                f"{array.dtype}, expected {tuple(shape)} {np.dtype(dtype)}"
            )
        if fill != 0.0:
            array[...] = fill
        return array

    def _follow_dtype(self, state: dict[str, Any], dtype: np.dtype) -> None:
        """Cast a parameter's float state arrays to its dtype (after ``module.to(dtype)``).

        What torch's ``Optimizer.load_state_dict`` does to state; here it also follows a
        ``module.half()`` / ``.double()`` made after the optimizer was built. The new arrays
        come from ``state_factory``, as the old ones did.
        """
        for key, value in state.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.dtype != dtype:
                state[key] = self._state_array(key, value.shape, dtype)
                state[key][...] = value

    def _update(
        self, param: np.ndarray, grad: Gradient, state: dict[str, Any], group: dict[str, Any]
    ) -> None:
        raise NotImplementedError

    # -- per-row telemetry -------------------------------------------------------------------
    def _recorder(self, p: Tensor) -> RowStatsRecorder:
        recorder = self._row_stats.get(p)
        if recorder is None:
            recorder = self._row_stats[p] = RowStatsRecorder(p.shape, p.dtype)
        return recorder

    def row_stats(
        self, param: Tensor | None = None, *, keys: Any = None, counts: Any = None
    ) -> RowStats:
        """Per-row telemetry of ``param`` (the only parameter when there is one) so far.

        Each row of the parameter's first axis gets its update count, summed gradient norm,
        last step and the distance it travelled since its first update
        (:class:`~rowbook.optim.row_stats.RowStats`); ``keys`` and ``counts`` name the rows
        and give their frequency (a vocabulary's ``itos`` and counts). Needs the optimizer
        built with ``row_stats=True``.

        Examples
        --------
        >>> from rowbook.nn import Embedding
        >>> from rowbook.optim import SGD
        >>> emb = Embedding(5, 2, sparse=True, rng=0)
        >>> opt = SGD(emb.parameters(), lr=0.1, row_stats=True)
        >>> for ids in ([1, 1, 3], [3, 4]):
        ...     opt.zero_grad()
        ...     emb(ids).sum().backward()
        ...     opt.step()
        >>> stats = opt.row_stats()
        >>> stats.updates.tolist(), stats.last_step.tolist(), stats.never_touched()
        ([0, 1, 0, 2, 1], [0, 1, 0, 2, 2], [0, 2])
        """
        name = type(self).__name__
        if self._row_stats is None:
            raise ValueError(
                f"{name} keeps no row statistics; build it with row_stats=True "
                f"(e.g. {name}(params, row_stats=True))"
            )
        params = self._params()
        if param is None:
            if len(params) != 1:
                raise ValueError(
                    f"{name} steps {len(params)} parameters; say which table: "
                    "optimizer.row_stats(embedding.weight)"
                )
            param = params[0]
        if not any(p is param for p in params):
            raise ValueError(
                f"{name}.row_stats: the tensor given is not one of the parameters "
                "this optimizer steps"
            )
        return self._recorder(param).stats(param.data, keys, counts)

    # -- state ----------------------------------------------------------------------------
    def _params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict[str, Any]:
        """Plain-data copy of the state: ``{"state": {"i": {...}}, "param_groups": [...]}``.

        ``"i"`` is the parameter's position across all groups; each group lists its
        parameters by those positions. Arrays are copies; tuples become lists.
        """
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {
            str(index[id(p)]): {
                k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in s.items()
            }
            for p, s in self.state.items()
            if id(p) in index
        }
        groups = []
        for group in self.param_groups:
            options = {k: list(v) if isinstance(v, tuple) else v for k, v in group.items()}
            options["params"] = [index[id(p)] for p in group["params"]]
            groups.append(options)
        saved = {"state": state, "param_groups": groups}
        if self._row_stats is not None:  # only when recording: torch's layout otherwise
            saved["row_stats"] = {
                str(index[id(p)]): r.state_dict()
                for p, r in self._row_stats.items()
                if id(p) in index
            }
        return saved

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore options and state saved by :meth:`state_dict` (arrays are copied)."""
        groups = state_dict["param_groups"]
        self._check_saved_groups(groups)
        params = self._params()
        new_state = {}
        for key, saved in state_dict["state"].items():
            if not 0 <= int(key) < len(params):
                raise ValueError(
                    f"{type(self).__name__}.load_state_dict: state for parameter "
                    f"{key}, but there are {len(params)} parameters"
                )
            p = params[int(key)]
            new_state[p] = {k: self._loaded(p, k, v) for k, v in saved.items()}
        new_groups = []
        for saved, group in zip(groups, self.param_groups, strict=True):
            options = {
                k: tuple(v) if isinstance(self.defaults.get(k), tuple) else v
                for k, v in saved.items()
                if k != "params"
            }
            new_groups.append({**group, **options})
            self._check_group(new_groups[-1])
        self.param_groups[:] = new_groups
        self.state = new_state
        if self._row_stats is not None:  # a state saved without telemetry starts it afresh
            self._row_stats = {}
            for key, saved in state_dict.get("row_stats", {}).items():
                if not 0 <= int(key) < len(params):
                    raise ValueError(
                        f"{type(self).__name__}.load_state_dict: row_stats for "
                        f"parameter {key}, but there are {len(params)} parameters"
                    )
                self._recorder(params[int(key)]).load_state_dict(saved)

    def _check_saved_groups(self, groups: list[dict[str, Any]]) -> None:
        name = type(self).__name__
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the saved state has {len(groups)} param groups, "
                f"this optimizer has {len(self.param_groups)}"
            )
        for saved, group in zip(groups, self.param_groups, strict=True):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: a saved group has {len(saved['params'])} "
                    f"parameters, the matching group has {len(group['params'])}"
                )
            unknown = sorted(set(saved) - set(group))
            if unknown:
                raise ValueError(
                    f"{name}.load_state_dict: unknown options {unknown}; saved "
                    "by a different optimizer?"
                )

    def _state_shapes(self, param: np.ndarray) -> dict[str, tuple[int, ...]]:
        """Shapes of the state arrays of ``param`` (checked when loading)."""
        return {}

    def _loaded(self, p: Tensor, key: str, value: Any) -> Any:
        if not isinstance(value, np.ndarray):
            return value
        expected = self._state_shapes(p.data).get(key)
        if expected is not None and value.shape != expected:
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: state {key!r} has shape {value.shape}, "
                f"expected {expected} for a parameter of shape {p.shape}"
            )
        if value.dtype.kind in "iu" or value.ndim == 0:
            return np.array(value)
        array = self._state_array(key, value.shape, p.dtype)
        array[...] = value
        return array

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`state_dict` to a ``.npz`` file atomically (no pickle)."""
        from rowbook.io import save_state

        save_state(path, {"optimizer": type(self).__name__, **self.state_dict()}, kind="optimizer")

    def load(self, path: str | os.PathLike[str]) -> None:
        """Read a file written by :meth:`save` into this optimizer."""
        from rowbook.io import load_state

        saved = load_state(path, kind="optimizer")
        if saved.get("optimizer") != type(self).__name__:
            raise ValueError(
                f"{path} holds the state of a {saved.get('optimizer')} optimizer, "
                f"not of a {type(self).__name__}"
            )
        self.load_state_dict(saved)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join([*lines, ")"])


def _rows_of(grad: Gradient) -> tuple[np.ndarray | None, np.ndarray]:
    """``(rows, gradient rows)`` of a row-sparse gradient; ``(None, grad)`` for a dense one."""
    if isinstance(grad, RowSparse):
        return grad.indices, grad.values
    return None, grad
