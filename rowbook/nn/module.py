"""Module and Parameter: containers for learnable tables, in PyTorch's shape.

A :class:`Parameter` is a leaf :class:`~rowbook.autograd.Tensor` that requires a
gradient. A :class:`Module` finds its parameters and sub-modules by walking its
attributes (in assignment order), so ``named_parameters()`` yields dotted names such
as ``"embedding.weight"`` exactly as PyTorch does, and ``state_dict()`` maps those
names to arrays.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from rowbook.autograd import RowSparse, Tensor, no_grad
from rowbook.checks import InputTypeError, UnknownKeyError

__all__ = ["Module", "Parameter"]


class Parameter(Tensor):
    """A learnable tensor: a leaf with ``requires_grad=True`` (unless frozen)."""

    def __init__(self, data: Any, *, requires_grad: bool = True, dtype: Any = None) -> None:
        super().__init__(data, requires_grad=requires_grad, dtype=dtype)

    def __repr__(self) -> str:
        return "Parameter" + super().__repr__()[len("Tensor") :]


class Module:
    """Base class of layers and models: holds parameters and sub-modules, computes ``forward``.

    Sub-classes set parameters and sub-modules as attributes in ``__init__`` and
    implement ``forward``; calling the module calls ``forward``.
    """

    training: bool = True
    #: names of float array attributes that are state but not parameters (torch's buffers)
    _buffers: tuple[str, ...] = ()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- discovery ----------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs, each parameter once, in definition order."""
        seen: set[int] = set()
        for name, param in self._named_parameters(prefix):
            if id(param) not in seen:  # a tied table is one parameter, reported once
                seen.add(id(param))
                yield name, param

    def _named_parameters(self, prefix: str) -> Iterator[tuple[str, Parameter]]:
        for name, value in vars(self).items():
            if isinstance(value, Parameter):
                yield prefix + name, value
        for name, child in self.named_children():
            yield from child._named_parameters(f"{prefix}{name}.")

    def parameters(self) -> Iterator[Parameter]:
        for _, param in self.named_parameters():
            yield param

    def modules(self) -> Iterator[Module]:
        yield self
        for _, child in self.named_children():
            yield from child.modules()

    # -- training state -----------------------------------------------------------------
    def zero_grad(self) -> None:
        """Drop every parameter's gradient (``grad = None``, as PyTorch's default)."""
        for param in self.parameters():
            param.grad = None

    def train(self, mode: bool = True) -> Module:
        for module in self.modules():
            module.training = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    # -- dtype ---------------------------------------------------------------------------
    def to(self, dtype: Any) -> Module:
        """Convert every parameter (and its gradient) and float buffer to ``dtype``, in place.

        As ``torch.nn.Module.to(dtype)``: the parameters stay the same objects, so an
        optimizer built on them keeps working; its state follows the parameters' dtype
        at the next ``step`` (or ``Optimizer.to``). float16 is for storage and lookup:
        layers compute in float32 where torch does on CPU and return float16.
        """
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise InputTypeError(f"Module.to: dtype must be a floating type, got {dtype}")
        with no_grad():
            for param in self.parameters():
                param.data = param.data.astype(dtype)
                if isinstance(param.grad, RowSparse):
                    grad = param.grad
                    param.grad = RowSparse(grad.indices, grad.values.astype(dtype), grad.shape)
                elif param.grad is not None:
                    param.grad = param.grad.astype(dtype)
            for module in self.modules():
                for name in module._buffers:
                    setattr(module, name, getattr(module, name).astype(dtype))
        return self

    def float(self) -> Module:
        """``to(np.float32)``."""
        return self.to(np.float32)

    def double(self) -> Module:
        """``to(np.float64)``."""
        return self.to(np.float64)

    def half(self) -> Module:
        """``to(np.float16)``: half the memory for tables that are looked up, not trained."""
        return self.to(np.float16)

    # -- persistence --------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Parameter name -> copy of its array, in torch's names, shapes and layouts.

        ``Embedding`` / ``EmbeddingBag`` ``weight`` (V, d); ``Linear`` ``weight`` (out, in)
        and ``bias``; ``LSTM`` ``weight_ih_l{k}`` (4H, I), ``weight_hh_l{k}`` (4H, H),
        ``bias_ih_l{k}``, ``bias_hh_l{k}`` with gates in torch's order i, f, g, o. The
        layers store them that way, so no conversion is needed: save with
        ``rowbook.io.save_safetensors(path, module.state_dict())`` and load in torch with
        ``safetensors.torch.load_file`` + ``load_state_dict`` (and the reverse).
        """
        return {name: param.data.copy() for name, param in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        """Copy arrays into the parameters in place (identity and ties are kept).

        Raises
        ------
        KeyError
            With ``strict=True``, when names are missing or unexpected.
        ValueError
            When an array's shape differs from the parameter's.
        """
        params = dict(self.named_parameters())
        missing = sorted(set(params) - set(state))
        unexpected = sorted(set(state) - set(params))
        if strict and (missing or unexpected):
            raise UnknownKeyError(
                f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}; "
                "pass strict=False to load a subset"
            )
        for name, value in state.items():
            if name not in params:
                continue
            array = np.asarray(value)
            target = params[name]
            if array.shape != target.shape:
                raise ValueError(
                    f"load_state_dict: {name!r} has shape {array.shape}, the module expects "
                    f"{target.shape}"
                )
            target.data[...] = array

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = [
            f"  ({n}): {repr(c).replace(chr(10), chr(10) + '  ')}" for n, c in self.named_children()
        ]
        if not children:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}({extra}\n" + "\n".join(children) + "\n)"

    def extra_repr(self) -> str:
        return ""
