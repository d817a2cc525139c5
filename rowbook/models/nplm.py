r"""The neural probabilistic language model (Bengio, Ducharme, Vincent & Jauvin 2003).

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
from typing import Any, Literal

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rowbook.autograd import Tensor, no_grad, ops
from rowbook.checks import check_choice, check_int, check_number
from rowbook.models._optimizers import DEFAULT_LR, OptimizerName, build_optimizer, sparse_table
from rowbook.models.base import NotFittedError
from rowbook.nn import Embedding, Linear, Module, init
from rowbook.nn import functional as F
from rowbook.nn.position import TiedOutput
from rowbook.text import CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.training import History, TrainConfig, Trainer

__all__ = ["BOUNDARY", "NPLM", "NPLMNet", "context_windows"]

BOUNDARY = "<s>"
_EVAL_BATCH = 4096


def context_windows(ids: np.ndarray, context: int, boundary: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(previous context ids, next id)`` pair of one sequence framed by ``boundary``.

    >>> X, y = context_windows(np.array([5, 6]), 2, boundary=0)
    >>> X.tolist(), y.tolist()
    ([[0, 0], [0, 5], [5, 6]], [5, 6, 0])
    """
    padded = np.concatenate([np.full(context, boundary), ids, [boundary]]).astype(np.int64)
    X = sliding_window_view(padded[:-1], context)  # (len + 1, context)
    return np.ascontiguousarray(X), padded[context:]


class NPLMNet(Module):
    """``logits = b + U tanh(d + H [C(w_1); ...; C(w_n)])``, or the tied variant.

    Shape:
        - Input: ``(B, n)`` context ids
        - Output: ``(B, V)`` logits of the next token
    """

    def __init__(self, vocab_size: int, context: int, dim: int, hidden: int, *, tied: bool = False,
                 sparse: bool = False, dtype: Any = np.float32, rng: Any = None) -> None:  # fmt: skip
        rng = init.as_generator(rng)
        self.context, self.dim, self.tied = context, dim, tied
        self.C = Embedding(vocab_size, dim, sparse=sparse, dtype=dtype, rng=rng)
        # N(0, 0.1^2) as in seed 004; tied, the rows are also output vectors: N(0, 1/d) starts
        # the scores h @ C^T at unit scale.
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


class NPLM:
    """Bengio et al.'s neural language model over characters or words (scikit-learn style).

    Parameters
    ----------
    level : ``"char"`` or ``"word"`` tokens (:class:`~rowbook.text.CharTokenizer` or
        :class:`~rowbook.text.WordTokenizer`).
    context : n, the number of previous tokens the model sees.
    dim : d, the embedding size. hidden : the tanh layer's size.
    tied : reuse the input table ``C`` as the output layer (through a hidden -> d projection).
    epochs, batch_size, seed : training loop settings (seeded shuffling and initialisation).
    lr : learning rate; None picks 0.01 for Adam and SparseAdam, 0.1 for SGD.
    optimizer : ``"adam"`` (dense), ``"sgd"``, or ``"sparse_adam"`` (lazy SparseAdam for the
        table, which then has row-sparse gradients, and Adam for the rest; not with ``tied``).
    min_freq : tokens seen fewer times in the training texts map to ``<unk>``.
    normalizer : optional :class:`~rowbook.text.Normalizer` applied before tokenizing.
    patience : stop after this many epochs without a better validation loss (None: never).
    checkpoint : path of a resumable checkpoint written after every epoch (None: none).
    progress : show a progress bar.

    Attributes
    ----------
    pipeline_ : the fitted :class:`~rowbook.text.TextPipeline` (vocabulary in ``vocab_``).
    net_ : the trained :class:`NPLMNet`.
    history_ : :class:`~rowbook.training.History`; each epoch has ``loss`` and ``perplexity``
        (training, averaged over the epoch's batches) and, with validation texts,
        ``val_loss`` and ``val_perplexity``.

    Examples
    --------
    >>> lm = NPLM(context=2, dim=8, hidden=16, epochs=2).fit(["abab", "abba"])
    >>> len(lm.vocab_), lm.sample(4, prompt="ab", seed=0)[:2]
    (4, 'ab')
    """

    def __init__(self, *, level: Literal["char", "word"] = "char", context: int = 3, dim: int = 16,
                 hidden: int = 64, tied: bool = False, epochs: int = 10, lr: float | None = None,
                 batch_size: int = 64, optimizer: OptimizerName = "adam", seed: int = 0,
                 min_freq: int = 1, normalizer: Normalizer | None = None, patience: int | None = None,
                 checkpoint: str | os.PathLike | None = None, progress: bool = False) -> None:  # fmt: skip
        self.level, self.context, self.dim, self.hidden, self.tied = level, context, dim, hidden, tied
        self.epochs, self.lr, self.batch_size, self.optimizer = epochs, lr, batch_size, optimizer
        self.seed, self.min_freq, self.normalizer, self.patience = seed, min_freq, normalizer, patience
        self.checkpoint, self.progress = checkpoint, progress

    def _check_params(self) -> None:
        check_choice("level", self.level, ("char", "word"))
        check_choice("optimizer", self.optimizer, ("adam", "sgd", "sparse_adam"))
        for name, minimum in (("context", 1), ("dim", 1), ("hidden", 1), ("epochs", 0),
                              ("batch_size", 1), ("seed", 0), ("min_freq", 1)):  # fmt: skip
            check_int(name, getattr(self, name), minimum)
        check_int("patience", self.patience, 1, allow_none=True)
        if self.lr is not None:
            check_number("lr", self.lr, 0.0, low_open=True)
        if self.tied and self.optimizer == "sparse_adam":
            raise ValueError("optimizer='sparse_adam' needs row-sparse gradients for the table, but "
                             "tied=True also gives it a dense gradient from the output layer; use "
                             "optimizer='adam' (or 'sgd') with tied=True")  # fmt: skip

    # -- fitting ------------------------------------------------------------------------
    def fit(self, texts: Sequence[str], val_texts: Sequence[str] | None = None, *,
            resume: bool = False) -> NPLM:  # fmt: skip
        """Build the vocabulary from ``texts`` and train; returns ``self``.

        ``resume=True`` continues from ``checkpoint`` (same texts and parameters).
        """
        self._check_params()
        texts = _check_texts(texts, "texts")
        tokenizer = CharTokenizer() if self.level == "char" else WordTokenizer()
        vocab = Vocab(min_count=self.min_freq, pad_token=None, unk_token="<unk>", bos_token=BOUNDARY)
        self.pipeline_ = TextPipeline(self.normalizer, tokenizer, vocab).fit(texts)
        self.vocab_ = vocab
        self.net_ = NPLMNet(len(vocab), self.context, self.dim, self.hidden, tied=self.tied,
                            sparse=sparse_table(self.optimizer), rng=self.seed)  # fmt: skip
        lr = self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]
        opt = build_optimizer(self.optimizer, self.net_, self.net_.C.weight, lr)
        config = TrainConfig(epochs=self.epochs, batch_size=self.batch_size, seed=self.seed,
                             patience=self.patience, checkpoint=self.checkpoint, progress=self.progress)  # fmt: skip
        trainer = Trainer(self.net_, opt, lambda net, batch: F.cross_entropy(net(batch[0]), batch[1]),
                          evaluate=_metrics, config=config)  # fmt: skip
        val = None if val_texts is None else self.windows(_check_texts(val_texts, "val_texts"))
        history = trainer.fit(self.windows(texts), val, resume=resume)
        for epoch in history.epochs:
            epoch["perplexity"] = math.exp(epoch["loss"])
        self.history_: History = history
        return self

    def _fitted(self) -> NPLMNet:
        if getattr(self, "net_", None) is None:
            raise NotFittedError("this NPLM is not fitted yet; call fit(texts) first")
        return self.net_

    # -- using the model --------------------------------------------------------------------
    def windows(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(contexts (N, n), next ids (N,))`` of every prediction in ``texts``."""
        self._fitted()
        texts = _check_texts(texts, "texts")
        boundary = self.vocab_.bos_id
        pairs = [context_windows(self.pipeline_.encode(t), self.context, boundary) for t in texts]
        return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

    def perplexity(self, texts: Sequence[str]) -> float:
        """``exp`` of the mean cross entropy per token (end boundaries counted) over ``texts``."""
        net = self._fitted()
        X, y = self.windows(texts)
        return math.exp(_mean_cross_entropy(net, X, y))

    def sample(self, n: int, prompt: str = "", temperature: float = 1.0, seed: int | None = None) -> str:
        """``prompt`` followed by ``n`` sampled tokens; a sampled boundary starts a new line.

        ``temperature`` divides the logits (0 takes the most likely token); ``<unk>`` is
        never sampled. The same ``seed`` gives the same text.
        """
        net = self._fitted()
        check_int("n", n, 0)
        check_number("temperature", temperature, 0.0)
        rng = np.random.default_rng(seed)
        boundary, unk = self.vocab_.bos_id, self.vocab_.unk_id
        lines: list[list[str]] = [self.pipeline_.tokenize(prompt)]
        ids = [boundary] * self.context + self.pipeline_.encode(prompt).tolist()
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
                lines[-1].append(self.vocab_.id_to_token(nxt))
                ids.append(nxt)
        return "\n".join(self.pipeline_.tokenizer.detokenize(line) for line in lines)

    def embedding_table(self) -> np.ndarray:
        """The learned ``(V, d)`` table ``C``, one row per entry of ``vocab_``."""
        return self._fitted().C.weight.data.copy()


def _draw(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    if temperature == 0:
        return int(np.argmax(logits))
    z = logits / temperature
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def _check_texts(texts: Any, name: str) -> list[str]:
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of texts, got one str; wrap it: [{name}]")
    texts = list(texts)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError(f"{name} must be a non-empty list of str, got {len(texts)} items "
                         f"of types {sorted({type(t).__name__ for t in texts})}")  # fmt: skip
    return texts
