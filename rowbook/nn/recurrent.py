r"""LSTM (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000).

One step reads the input ``x_t`` and the previous state ``(h, c)`` and computes all four
gates with one fused matrix product, in PyTorch's gate order (input, forget, cell, output):

    [i; f; g; o] = [x_t; h_{t-1}] @ [W_ih | W_hh]^T + b_ih + b_hh      # (B, 4H)
    i, f, o = sigmoid(.)        g = tanh(.)
    c_t = f * c_{t-1} + i * g
    h_t = o * tanh(c_t)

Everything is built from the differentiable ops of :mod:`rowbook.autograd.ops`, so the
backward (through time) is the engine's; the layer only loops over time steps. The
parameters carry PyTorch's names and shapes (``weight_ih_l0`` ``(4H, I)``,
``weight_hh_l0`` ``(4H, H)``, ``bias_ih_l0`` and ``bias_hh_l0`` ``(4H,)``), so a
``torch.nn.LSTM`` state dict loads as is.

Padded batches: with a ``mask`` (or ``lengths``), a position where the mask is False
leaves ``(h, c)`` unchanged and outputs zeros, which is what ``pack_padded_sequence``
gives in PyTorch: the final state is the state after each sequence's last real token.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, as_tensor, ops
from rowbook.checks import InputTypeError, check_int
from rowbook.nn import init
from rowbook.nn.module import Module, Parameter

__all__ = ["LSTM", "LSTMCell", "lengths_to_mask", "lstm_cell"]

State = tuple[Tensor, Tensor]


def lengths_to_mask(lengths: Any, max_length: int | None = None) -> np.ndarray:
    """``(B, T)`` boolean mask, True on the first ``lengths[b]`` positions of row ``b``.

    Examples
    --------
    >>> lengths_to_mask([2, 0, 3]).astype(int)
    array([[1, 1, 0],
           [0, 0, 0],
           [1, 1, 1]])
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and lengths.dtype.kind not in "iu"):
        raise ValueError(
            f"lengths must be a 1-d array of ints, got shape {lengths.shape}, dtype {lengths.dtype}"
        )
    T = int(lengths.max(initial=0)) if max_length is None else int(max_length)
    if lengths.size and (lengths.min() < 0 or lengths.max() > T):
        raise ValueError(
            f"lengths must be in [0, {T}] (the sequence length), got {lengths.tolist()}"
        )
    return np.arange(T)[None, :] < lengths[:, None]  # (B, T)


def lstm_cell(x: Tensor, state: State, weight_t: Tensor, bias: Tensor | None) -> State:
    """One LSTM step with the gates from one fused product (see the module docstring).

    Parameters
    ----------
    x
        ``(B, I)`` input at this step.
    state
        ``(h, c)``, each ``(B, H)``.
    weight_t
        ``[W_ih | W_hh]^T``, ``(I + H, 4H)``, gate blocks ordered i, f, g, o.
    bias
        ``b_ih + b_hh``, ``(4H,)``, or None.

    Returns
    -------
    ``(h_t, c_t)``, each ``(B, H)``.
    """
    h, c = state
    H = h.shape[-1]
    gates = ops.matmul(ops.concatenate([x, h], axis=-1), weight_t)  # (B, 4H)
    if bias is not None:
        gates = gates + bias
    i = ops.sigmoid(gates[:, 0 * H : 1 * H])  # (B, H) input gate
    f = ops.sigmoid(gates[:, 1 * H : 2 * H])  # forget gate
    g = ops.tanh(gates[:, 2 * H : 3 * H])  # candidate cell
    o = ops.sigmoid(gates[:, 3 * H : 4 * H])  # output gate
    c = f * c + i * g
    return o * ops.tanh(c), c


def _fused(weight_ih: Tensor, weight_hh: Tensor, bias_ih: Tensor | None, bias_hh: Tensor | None):
    """``[W_ih | W_hh]^T`` and ``b_ih + b_hh``, built once per call, not once per step."""
    weight_t = ops.transpose(ops.concatenate([weight_ih, weight_hh], axis=1))  # (I + H, 4H)
    bias = None if bias_ih is None else bias_ih + bias_hh  # (4H,)
    return weight_t, bias


def _computed(t: Tensor | None) -> Tensor | None:
    """A float16 tensor as float32 (differentiably): float16 is storage, steps run in float32."""
    return t.astype(np.float32) if t is not None and t.dtype == np.float16 else t


def _uniform_params(module: Module, names: list[str], hidden_size: int, rng: Any) -> None:
    """PyTorch's LSTM initialisation: every weight and bias from U(-1/sqrt(H), 1/sqrt(H))."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for name in names:
        init.uniform_(getattr(module, name), -bound, bound, rng=rng)


def _as_input(x: Any, dtype: np.dtype, owner: str) -> Tensor:
    """``x`` as a Tensor of the parameters' dtype (a Tensor of another dtype is an error)."""
    if not isinstance(x, Tensor):
        return Tensor(np.asarray(x), dtype=dtype)
    if x.dtype != dtype:
        raise InputTypeError(
            f"{owner} has {dtype} parameters but got a {x.dtype} input; convert one "
            f"of them (x.astype(np.{dtype}) keeps the graph)"
        )
    return x


def _check_sizes(input_size: int, hidden_size: int) -> None:
    check_int("input_size", input_size, 1)
    check_int("hidden_size", hidden_size, 1)


class LSTMCell(Module):
    """One LSTM step, ``(x, (h, c)) -> (h', c')``, as ``torch.nn.LSTMCell``.

    Parameters
    ----------
    input_size, hidden_size
        I and H.
    bias
        learn ``bias_ih`` and ``bias_hh``.
    dtype
        parameter dtype.
    rng
        generator or seed for the U(-1/sqrt(H), 1/sqrt(H)) initialisation.

    Shape
    -----
    - Input: ``(B, I)``; state ``(h, c)`` each ``(B, H)``, zeros when omitted
    - Output: ``(h', c')``, each ``(B, H)``
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        _check_sizes(input_size, hidden_size)
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        G = 4 * self.hidden_size
        self.weight_ih = Parameter(np.empty((G, self.input_size), dtype=dtype))
        self.weight_hh = Parameter(np.empty((G, self.hidden_size), dtype=dtype))
        self.bias_ih = Parameter(np.empty(G, dtype=dtype)) if bias else None
        self.bias_hh = Parameter(np.empty(G, dtype=dtype)) if bias else None
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if bias else [])
        _uniform_params(self, names, self.hidden_size, init.as_generator(rng))

    def forward(self, x: Any, state: State | None = None) -> State:
        x = _as_input(x, self.weight_ih.dtype, "LSTMCell")
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(
                f"LSTMCell expects input of shape (B, {self.input_size}), got {x.shape}"
            )
        stored, x = x.dtype, _computed(x)  # float16 weights: the step runs in float32
        if state is None:
            zeros = np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
            state = (Tensor(zeros), Tensor(zeros))
        state = tuple(_computed(as_tensor(s)) for s in state)
        weights = (
            _computed(w) for w in (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        )
        h, c = lstm_cell(x, state, *_fused(*weights))
        return (h.astype(stored), c.astype(stored)) if stored != x.dtype else (h, c)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, bias={self.bias_ih is not None}"


class LSTM(Module):
    """A stack of LSTM layers run over whole sequences, as ``torch.nn.LSTM``.

    Parameters
    ----------
    input_size, hidden_size
        I and H.
    num_layers
        stacked layers; layer k > 0 reads the outputs of layer k - 1.
    bias
        learn the biases.
    batch_first
        inputs and outputs are ``(B, T, *)`` (default True here; PyTorch's default
        is False, ``(T, B, *)``). The state is always ``(num_layers, B, H)``.
    dtype, rng
        as in :class:`LSTMCell`.

    Attributes
    ----------
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
        PyTorch's parameters.

    Shape
    -----
    - Input: ``(B, T, I)``; optional ``mask`` ``(B, T)`` or ``lengths`` ``(B,)``;
      optional state ``(h_0, c_0)`` each ``(num_layers, B, H)``
    - Output: ``output`` ``(B, T, H)`` (the last layer's ``h_t``, zeros where masked)
      and ``(h_n, c_n)`` each ``(num_layers, B, H)``

    Examples
    --------
    >>> lstm = LSTM(3, 5, rng=0)
    >>> out, (h, c) = lstm(np.ones((2, 4, 3), dtype=np.float32), lengths=[4, 2])
    >>> out.shape, h.shape
    ((2, 4, 5), (1, 2, 5))
    >>> bool(np.all(out.data[1, 2:] == 0))
    True
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = True,
        *,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        _check_sizes(input_size, hidden_size)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"num_layers must be a positive int, got {num_layers!r}")
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.bias, self.batch_first = num_layers, bool(bias), bool(batch_first)
        G, rng = 4 * self.hidden_size, init.as_generator(rng)
        for k in range(num_layers):
            width = self.input_size if k == 0 else self.hidden_size
            setattr(self, f"weight_ih_l{k}", Parameter(np.empty((G, width), dtype=dtype)))
            setattr(
                self, f"weight_hh_l{k}", Parameter(np.empty((G, self.hidden_size), dtype=dtype))
            )
            if bias:
                setattr(self, f"bias_ih_l{k}", Parameter(np.empty(G, dtype=dtype)))
                setattr(self, f"bias_hh_l{k}", Parameter(np.empty(G, dtype=dtype)))
        _uniform_params(self, [n for n, _ in self.named_parameters()], self.hidden_size, rng)

    def _layer(self, k: int) -> tuple[Tensor, Tensor | None]:
        get = lambda name: _computed(getattr(self, f"{name}_l{k}", None))  # noqa: E731
        return _fused(get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"))

    def forward(
        self, x: Any, state: State | None = None, *, mask: Any = None, lengths: Any = None
    ) -> tuple[Tensor, State]:
        """Run every layer over the sequence; see the class docstring for shapes."""
        x = _as_input(x, self.weight_ih_l0.dtype, "LSTM")
        if x.ndim != 3 or x.shape[2] != self.input_size:
            raise ValueError(
                f"LSTM expects input of shape (B, T, {self.input_size}) (batch_first), got {x.shape}"
            )
        if not self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        B, T, _ = x.shape
        mask = self._mask(mask, lengths, B, T)
        stored, x = x.dtype, _computed(x)  # float16 weights: the steps run in float32
        h0, c0 = self._initial_state(state, B, x.dtype)
        outputs, h_n, c_n = x, [], []
        for k in range(self.num_layers):
            outputs, (h, c) = self._run_layer(k, outputs, (h0[k], c0[k]), mask)
            h_n.append(h)
            c_n.append(c)
        if not self.batch_first:
            outputs = ops.transpose(outputs, (1, 0, 2))
        h_n, c_n = ops.stack(h_n), ops.stack(c_n)
        if stored != x.dtype:  # rounded once to the storage type, as torch's CPU LSTM
            outputs, h_n, c_n = (t.astype(stored) for t in (outputs, h_n, c_n))
        return outputs, (h_n, c_n)

    def _run_layer(self, k: int, x: Tensor, state: State, mask: np.ndarray | None):
        """Layer ``k`` over ``x`` ``(B, T, I_k)``: outputs ``(B, T, H)`` and the final state."""
        weight_t, bias = self._layer(k)
        steps = []
        for t in range(x.shape[1]):
            h, c = lstm_cell(x[:, t], state, weight_t, bias)  # (B, H) each
            if mask is None:
                state, out = (h, c), h
            else:
                m = mask[:, t, None]  # (B, 1): False keeps the old state
                state = (ops.where(m, h, state[0]), ops.where(m, c, state[1]))
                out = ops.where(m, h, np.zeros((), dtype=h.dtype))
            steps.append(out)
        if not steps:
            return Tensor(np.zeros((x.shape[0], 0, self.hidden_size), dtype=x.dtype)), state
        return ops.stack(steps, axis=1), state  # (B, T, H)

    def _mask(self, mask: Any, lengths: Any, B: int, T: int) -> np.ndarray | None:
        if mask is not None and lengths is not None:
            raise ValueError("pass either mask or lengths, not both")
        if lengths is not None:
            if np.shape(lengths) != (B,):
                raise ValueError(
                    f"lengths must have shape ({B},) (one per sequence), got {np.shape(lengths)}"
                )
            mask = lengths_to_mask(lengths, T)
        if mask is None:
            return None
        mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask, dtype=bool)
        if not self.batch_first:
            mask = mask.T
        if mask.shape != (B, T):
            raise ValueError(f"mask must have shape {(B, T)} (batch, time), got {mask.shape}")
        return mask

    def _initial_state(self, state: State | None, B: int, dtype: np.dtype) -> State:
        shape = (self.num_layers, B, self.hidden_size)
        if state is None:
            zeros = Tensor(np.zeros(shape, dtype=dtype))
            return zeros, zeros
        h0, c0 = (as_tensor(s, dtype=dtype) for s in state)
        if h0.shape != shape or c0.shape != shape:
            raise ValueError(
                f"state (h_0, c_0) must both have shape {shape}, got {h0.shape} and {c0.shape}"
            )
        return h0, c0

    def extra_repr(self) -> str:
        return (
            f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
            f"bias={self.bias}, batch_first={self.batch_first}"
        )
