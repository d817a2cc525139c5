r"""The neural probabilistic language model (Bengio, Ducharme, Vincent & Jauvin 2003).

One file over 400 lines on purpose: the paper's network, the model that trains it and its
sampling are read top to bottom as one model.

Predict each token from the ``n`` tokens before it. Each context token is looked up in
one table ``C`` (V, d), the ``n`` rows are concatenated, so position is kept, and a
tanh layer and a softmax over the vocabulary follow:

    x = [C(w_{t-n}); ...; C(w_{t-1})]                  # (B, n d)
    y = b + U tanh(d + H x)                            # (B, V) logits
    P(w_t | context) = softmax(y)[w_t]

trained by integer-target cross entropy (the paper's optional direct connections
``W x`` are left out). With ``tied=True`` the output reuses the input table: the hidden
layer is projected back to d and scored against every row, ``y = b + (P a) C^T``, so
``C`` gets gradient from both uses. Perplexity is ``exp`` of the mean cross entropy.

Every text is one sequence, framed by a boundary token ``<s>``: the first tokens are
predicted from a context of ``<s>`` and the sequence ends by predicting ``<s>``. Tokens
are characters (``level="char"``) or words (``level="word"``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rowbook.autograd import Tensor, no_grad, ops
from rowbook.checks import InputTypeError, check_choice, check_int, check_number
from rowbook.models.network import (
    NetworkModel,
    NetworkState,
    OptimizerName,
    PipelineExtras,
    check_tokens_kept,
    pipeline_from_state,
    pipeline_of_0_1,
    sparse_table,
)
from rowbook.models.pretrained import copy_rows, with_start_vectors
from rowbook.nn import Embedding, Linear, Module, init
from rowbook.nn import functional as F
from rowbook.nn.position import TiedOutput
from rowbook.text import CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.text.pipeline_file import normalizer_from_dict
from rowbook.training import Trainer, hold_out
from rowbook.vectors import Vectors

__all__ = ["BOUNDARY", "NPLM", "NPLMNet", "context_windows"]

BOUNDARY = "<s>"
_EVAL_BATCH = 4096


def context_windows(ids: np.ndarray, context: int, boundary: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(previous context ids, next id)`` pair of one sequence framed by ``boundary``.

    Examples
    --------
    >>> X, y = context_windows(np.array([5, 6]), 2, boundary=0)
    >>> X.tolist(), y.tolist()
    ([[0, 0], [0, 5], [5, 6]], [5, 6, 0])
    """
    padded = np.concatenate([np.full(context, boundary), ids, [boundary]]).astype(np.int64)
    X = sliding_window_view(padded[:-1], context)  # (len + 1, context)
    return np.ascontiguousarray(X), padded[context:]


class NPLMNet(Module):
    """``logits = b + U tanh(d + H [C(w_1); ...; C(w_n)])``, or the tied variant.

    Shape
    -----
    - Input: ``(B, n)`` context ids
    - Output: ``(B, V)`` logits of the next token
    """

    def __init__(
        self,
        vocab_size: int,
        context: int,
        dim: int,
        hidden: int,
        *,
        tied: bool = False,
        sparse: bool = False,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        rng = init.as_generator(rng)
        self.context, self.dim, self.tied = context, dim, tied
        self.C = Embedding(vocab_size, dim, sparse=sparse, dtype=dtype, rng=rng)
        # N(0, 0.1^2) as in the language model example; tied, the rows are also output
        # vectors: N(0, 1/d) starts the scores h @ C^T at unit scale.
        init.normal_(self.C.weight, std=1.0 / math.sqrt(dim) if tied else 0.1, rng=rng)
        self.H = Linear(context * dim, hidden, dtype=dtype, rng=rng)  # weights H, bias d
        if tied:
            self.P = Linear(hidden, dim, dtype=dtype, rng=rng)
            self.U = TiedOutput(self.C, bias=True)  # h @ C^T + b
        else:
            self.U = Linear(hidden, vocab_size, dtype=dtype, rng=rng)  # weights U, bias b

    def forward(self, contexts: np.ndarray) -> Tensor:
        x = self.C(contexts).reshape(len(contexts), self.context * self.dim)  # (B, n d)
        a = ops.tanh(self.H(x))  # (B, hidden)
        return self.U(self.P(a) if self.tied else a)  # (B, V)


def _mean_cross_entropy(net: NPLMNet, X: np.ndarray, y: np.ndarray) -> float:
    """Mean cross entropy (nats per token) over all windows, in batches, without a graph."""
    total = 0.0
    with no_grad():
        for start in range(0, len(y), _EVAL_BATCH):
            logits = net(X[start : start + _EVAL_BATCH])
            total += F.cross_entropy(logits, y[start : start + _EVAL_BATCH], reduction="sum").item()
    return total / max(len(y), 1)


def _metrics(net: Module, data: tuple[np.ndarray, ...]) -> dict[str, float]:
    loss = _mean_cross_entropy(net, data[0], data[1])
    return {"loss": loss, "perplexity": math.exp(loss)}


class NPLM(NetworkModel[PipelineExtras]):
    """Bengio et al.'s neural language model over characters or words.

    Parameters
    ----------
    level
        ``"char"`` or ``"word"`` tokens (:class:`~rowbook.text.CharTokenizer` or
        :class:`~rowbook.text.WordTokenizer`).
    context
        n, the number of previous tokens the model sees.
    dim
        d, the embedding size.
    hidden
        the tanh layer's size.
    tied
        reuse the input table ``C`` as the output layer (through a hidden -> d projection).
    epochs, batch_size, seed
        training loop settings (seeded shuffling and initialisation).
    lr
        learning rate; None picks 0.01 for Adam and SparseAdam, 0.1 for SGD.
    optimizer
        ``"adam"`` (dense), ``"sgd"``, or ``"sparse_adam"`` (lazy SparseAdam for the
        table, which then has row-sparse gradients, and Adam for the rest; not with ``tied``).
    min_count
        tokens seen fewer times in the training texts map to ``<unk>``.
    normalizer
        optional :class:`~rowbook.text.Normalizer` applied before tokenizing.
    val_fraction
        share of the texts held out (a seeded random choice, rounded down) to
        report held-out loss and perplexity each epoch, when ``fit`` gets no ``val_texts``;
        0 holds out nothing.
    patience
        stop after this many epochs without a better validation loss (None: never).
    progress
        report progress (batches, with an ETA) on standard error.
    freeze_embeddings
        keep the table ``C`` as it starts (random, or the rows of :meth:`from_vectors`).

    Attributes
    ----------
    pipeline_
        the fitted :class:`~rowbook.text.TextPipeline` (vocabulary in ``vocab_``).
    net_
        the trained :class:`NPLMNet`.
    history_
        :class:`~rowbook.training.History`; each epoch has ``loss`` and ``perplexity``
        (training, averaged over the epoch's batches) and, with validation texts (given or
        held out), ``val_loss`` and ``val_perplexity``; without them, ``eval_loss`` and
        ``eval_perplexity`` over the training texts after the epoch. ``history_.initial``
        holds the same scores before training.
    vectors
        the table ``C`` as :class:`~rowbook.Vectors` keyed by the vocabulary.

    Examples
    --------
    >>> lm = NPLM(context=2, dim=8, hidden=16, epochs=2).fit(["abab", "abba"])
    >>> len(lm.vocab_), lm.sample(4, prompt="ab", seed=0)[:2]
    (4, 'ab')
    """

    #: 2: the pipeline is a :mod:`rowbook.text.pipeline_file` document.
    _state_version: ClassVar[int] = 2
    _object_params: ClassVar[dict[str, Any]] = {"normalizer": normalizer_from_dict}

    def __init__(
        self,
        *,
        level: Literal["char", "word"] = "char",
        context: int = 3,
        dim: int = 16,
        hidden: int = 64,
        tied: bool = False,
        epochs: int = 10,
        lr: float | None = None,
        batch_size: int = 64,
        optimizer: OptimizerName = "adam",
        seed: int = 0,
        min_count: int = 1,
        normalizer: Normalizer | None = None,
        val_fraction: float = 0.1,
        patience: int | None = None,
        progress: bool = False,
        freeze_embeddings: bool = False,
    ) -> None:
        self.level, self.context, self.dim, self.hidden, self.tied = (
            level,
            context,
            dim,
            hidden,
            tied,
        )
        self.epochs, self.lr, self.batch_size, self.optimizer = epochs, lr, batch_size, optimizer
        self.seed, self.min_count, self.normalizer = seed, min_count, normalizer
        self.val_fraction, self.patience, self.progress = val_fraction, patience, progress
        self.freeze_embeddings = freeze_embeddings
        self._check_params()

    @classmethod
    def from_vectors(cls, vectors: Vectors, **params: Any) -> NPLM:
        """An unfitted model whose ``fit`` starts the table ``C`` from ``vectors``' rows for
        the tokens of its vocabulary they hold (:mod:`rowbook.models.pretrained`); ``dim``
        defaults to their size, ``params`` are the other parameters.

        >>> start = Vectors(["a", "b"], np.eye(2, dtype=np.float32))
        >>> lm = NPLM.from_vectors(start, context=1, epochs=0).fit(["ab", "ba"])
        >>> lm.vectors["b"].tolist()
        [0.0, 1.0]
        """
        return with_start_vectors(cls, vectors, params)

    def _check_params(self) -> None:
        check_choice("level", self.level, ("char", "word"), owner="NPLM")
        check_choice("optimizer", self.optimizer, ("adam", "sgd", "sparse_adam"), owner="NPLM")
        check_choice("freeze_embeddings", self.freeze_embeddings, (False, True), owner="NPLM")
        self._check_ints(
            "NPLM", context=1, dim=1, hidden=1, epochs=0, batch_size=1, seed=0, min_count=1
        )
        check_int("patience", self.patience, 1, allow_none=True, owner="NPLM")
        check_number("lr", self.lr, 0.0, low_open=True, allow_none=True, owner="NPLM")
        check_number("val_fraction", self.val_fraction, 0.0, 1.0, high_open=True, owner="NPLM")
        if self.normalizer is not None and not isinstance(self.normalizer, Normalizer):
            raise InputTypeError(
                f"NPLM: normalizer must be a rowbook.text.Normalizer or None, got "
                f"{type(self.normalizer).__name__}"
            )
        if self.tied and self.optimizer == "sparse_adam":
            raise ValueError(
                "optimizer='sparse_adam' needs row-sparse gradients for the table, but "
                "tied=True also gives it a dense gradient from the output layer; use "
                "optimizer='adam' (or 'sgd') with tied=True"
            )

    @classmethod
    def _upgrade(cls, params: dict[str, Any], state: dict[str, Any], version: int):
        """Version 1 (rowbook 0.1) kept the pipeline in a form of its own."""
        return params, state | {"pipeline": pipeline_of_0_1(state["pipeline"])}

    # -- fitting ------------------------------------------------------------------------
    def fit(
        self,
        texts: Sequence[str],
        val_texts: Sequence[str] | None = None,
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: str | os.PathLike[str] | None = None,
    ) -> NPLM:
        """Build the vocabulary from ``texts`` and train; returns ``self``.

        ``val_texts`` are scored after every epoch; without them, ``val_fraction`` of
        ``texts`` is held out for that (and not trained on). ``checkpoint`` and ``resume``
        follow the model contract (:mod:`rowbook.models.base`): resuming needs the same
        texts and parameters (``epochs``, ``patience`` and ``progress`` may change).
        """
        texts = _check_texts(texts, "texts")
        if val_texts is None:
            texts, val_texts = hold_out(texts, self.val_fraction, self.seed)
        else:
            val_texts = _check_texts(val_texts, "val_texts")
        state = self._resume_state(resume)
        if state is None:
            tokenizer = CharTokenizer() if self.level == "char" else WordTokenizer()
            vocab = Vocab(
                min_count=self.min_count, pad_token=None, unk_token="<unk>", bos_token=BOUNDARY
            )
            pipeline = TextPipeline(self.normalizer, tokenizer, vocab).fit(texts)
            check_tokens_kept(pipeline, self.min_count)
            extras = PipelineExtras(pipeline)
        else:
            extras = self._extras_from_state(state)
        train = _windows(extras.pipeline, self.context, texts)
        val = _windows(extras.pipeline, self.context, val_texts) if val_texts else None
        self._train(extras, train, val, checkpoint=checkpoint, state=state)
        return self

    def _build(self, extras: PipelineExtras) -> tuple[NPLMNet, Any]:
        net = NPLMNet(
            len(extras.pipeline.vocab_),
            self.context,
            self.dim,
            self.hidden,
            tied=self.tied,
            sparse=sparse_table(self.optimizer),
            rng=self.seed,
        )
        return net, self._optimizer_for(net, net.C.weight)

    def _start_rows(self, net: NPLMNet, extras: PipelineExtras, vectors: Vectors) -> None:
        copy_rows(net.C.weight.data, extras.pipeline.vocab_.itos, vectors)

    def _trainer_for(self, net: NPLMNet, optimizer: Any) -> Trainer:
        return self._language_model_trainer(
            net, optimizer, _loss, _metrics, eval_on_start=True, eval_on_train=True
        )

    def _extras_to_state(self, fitted: NetworkState[PipelineExtras]) -> dict[str, Any]:
        return {"pipeline": fitted.extras.pipeline.to_dict()}

    def _extras_from_state(self, state: dict[str, Any]) -> PipelineExtras:
        return PipelineExtras(pipeline_from_state(state))

    # -- learned state ------------------------------------------------------------------
    @property
    def pipeline_(self) -> TextPipeline:
        """The fitted text pipeline (normalizer, tokenizer, vocabulary)."""
        return self._require_fitted(".pipeline_").extras.pipeline

    @property
    def vocab_(self) -> Vocab:
        """The vocabulary: ``<unk>``, the boundary ``<s>``, then tokens by count."""
        return self.pipeline_.vocab_

    @property
    def vectors(self) -> Vectors:
        """The input table ``C`` (V, d) as :class:`~rowbook.Vectors`, keyed by ``vocab_``."""
        vocab = self.vocab_
        counts = vocab.counts
        return Vectors(vocab.itos, self.net_.C.weight.data, [counts[t] for t in vocab.itos])

    # -- using the model --------------------------------------------------------------------
    def windows(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(contexts (N, n), next ids (N,))`` of every prediction in ``texts``."""
        pipeline = self._require_fitted(".windows()").extras.pipeline
        return _windows(pipeline, self.context, _check_texts(texts, "texts"))

    def perplexity(self, texts: Sequence[str]) -> float:
        """``exp`` of the mean cross entropy per token (end boundaries counted) over ``texts``."""
        net = self._require_fitted(".perplexity()").net
        X, y = self.windows(texts)
        return math.exp(_mean_cross_entropy(net, X, y))

    def sample(
        self, n: int, prompt: str = "", temperature: float = 1.0, seed: int | None = None
    ) -> str:
        """``prompt`` followed by ``n`` sampled tokens; a sampled boundary starts a new line.

        ``temperature`` divides the logits (0 takes the most likely token); ``<unk>`` is
        never sampled. The same ``seed`` gives the same text.
        """
        net = self._require_fitted(".sample()").net
        check_int("n", n, 0)
        check_number("temperature", temperature, 0.0)
        rng = np.random.default_rng(seed)
        vocab, pipeline = self.vocab_, self.pipeline_
        boundary, unk = vocab.bos_id, vocab.unk_id
        lines: list[list[str]] = [pipeline.tokenize(prompt)]
        ids = [boundary] * self.context + pipeline.encode(prompt).tolist()
        for _ in range(n):
            with no_grad():
                logits = net(np.array([ids[-self.context :]])).data[0].astype(np.float64)  # (V,)
            if len(logits) > 2:
                logits[unk] = -np.inf
            nxt = _draw(logits, temperature, rng)
            if nxt == boundary:
                lines.append([])
                ids += [boundary] * self.context
            else:
                lines[-1].append(vocab.id_to_token(nxt))
                ids.append(nxt)
        return "\n".join(pipeline.tokenizer_.detokenize(line) for line in lines)


def _loss(net: NPLMNet, batch: tuple[np.ndarray, ...]) -> Tensor:
    return F.cross_entropy(net(batch[0]), batch[1])


def _windows(
    pipeline: TextPipeline, context: int, texts: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    boundary = pipeline.vocab_.bos_id
    pairs = [context_windows(pipeline.encode(t), context, boundary) for t in texts]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def _draw(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    if temperature == 0:
        return int(np.argmax(logits))
    z = logits / temperature
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def _check_texts(texts: Any, name: str) -> list[str]:
    if isinstance(texts, str):
        raise InputTypeError(f"{name} must be a list of texts, got one str; wrap it: [{name}]")
    texts = list(texts)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError(
            f"{name} must be a non-empty list of str, got {len(texts)} items "
            f"of types {sorted({type(t).__name__ for t in texts})}"
        )
    return texts
