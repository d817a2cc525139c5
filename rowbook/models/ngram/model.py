r"""NGramLM: the count language model, the baseline an embedding model argues against.

Each text is one sentence ``<s> w_1 ... w_m </s>``; the model predicts every word and the
closing ``</s>`` from at most the ``n - 1`` words before it (``<s>`` included, nothing
before it). The counts of every order come from one NumPy pass
(:mod:`rowbook.models.ngram.counts`); the probabilities are

* ``smoothing="kneser_ney"``: interpolated modified Kneser-Ney as KenLM's ``lmplz`` builds
  it (:mod:`rowbook.models.ngram.kneser_ney`), a backoff model written to and read from ARPA
  files (:meth:`NGramLM.save_arpa`, :meth:`NGramLM.from_arpa`);
* ``smoothing="add_k"``: ``(C(c w) + k) / (C(c .) + k V)`` (Lidstone; Laplace for k = 1);
* ``smoothing="none"``: the maximum likelihood estimate ``C(c w) / C(c .)``, zero for
  anything unseen.

The add-k and unsmoothed estimates follow ``nltk.lm`` (``Lidstone``, ``Laplace``, ``MLE``):
``V`` counts the whole vocabulary, ``<unk>``, ``<s>`` and ``</s>`` included.

Tokens are words (``level="word"``, :class:`~rowbook.text.WordTokenizer`) or characters,
through the same :class:`~rowbook.text.TextPipeline` as :class:`~rowbook.models.NPLM`;
tokens seen fewer than ``min_count`` times become ``<unk>``, which is then counted as a
word. A text may also be given as a list of tokens, already tokenized.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from rowbook.checks import check_choice, check_int, check_number
from rowbook.models.base import Model
from rowbook.models.ngram.arpa import ArpaError, read_arpa, tables_from_entries, write_arpa
from rowbook.models.ngram.counts import count_ngrams, frame_sentences
from rowbook.models.ngram.kneser_ney import kneser_ney_tables
from rowbook.models.ngram.state import (
    BOS,
    EOS,
    NGramState,
    check_discounts,
    ngram_pipeline,
    ngram_vocab,
    sentence_ids,
    tables_from_state,
    tables_to_state,
)
from rowbook.models.ngram.tables import NGramTables, addk_log10, backoff_log10
from rowbook.text import CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.text.pipeline_file import normalizer_from_dict

__all__ = ["NGramLM"]

Smoothing = Literal["kneser_ney", "add_k", "none"]
_LN10 = math.log(10.0)


class NGramLM(Model):
    """An n-gram count language model: Kneser-Ney (KenLM's), add-k or unsmoothed.

    Parameters
    ----------
    n
        the order: each token is predicted from the ``n - 1`` before it.
    smoothing
        ``"kneser_ney"`` (interpolated modified Kneser-Ney), ``"add_k"`` or ``"none"``.
    k
        add-k's pseudo-count (1 is Laplace's rule); only with ``smoothing="add_k"``.
    discounts
        Kneser-Ney's ``(D_1, D_2, D_3+)`` for every order, or one triple per order;
        None estimates them from the count-of-counts (Chen & Goodman).
    discount_fallback
        ``(D_1, D_2, D_3+)`` for an order whose estimate fails (too little or artificial
        text), as ``lmplz --discount_fallback``; None raises instead.
    level
        ``"word"`` or ``"char"`` tokens.
    min_count
        tokens seen fewer times map to ``<unk>``.
    normalizer
        optional :class:`~rowbook.text.Normalizer` applied before tokenizing.

    Attributes
    ----------
    pipeline_, vocab_
        the fitted text pipeline and its vocabulary (``<unk>`` = 0, ``<s>`` = 1, ``</s>`` = 2).
    tables_
        :class:`~rowbook.models.ngram.tables.NGramTables`: keys, counts, and for
        Kneser-Ney the log10 probabilities and backoff weights of every order.
    discounts_
        ``(n, 4)`` Kneser-Ney discounts ``[0, D_1, D_2, D_3+]`` per order, or None.

    Examples
    --------
    >>> lm = NGramLM(n=2, smoothing="add_k").fit(["the cat sat", "the dog sat"])
    >>> round(math.exp(lm.logprob("cat", ["the"])), 4)  # (1 + 1) / (2 + 7)
    0.2222
    """

    _state_version: ClassVar[int] = 1
    _object_params: ClassVar[dict[str, Any]] = {"normalizer": normalizer_from_dict}
    _fitted: NGramState | None

    def __init__(
        self,
        *,
        n: int = 3,
        smoothing: Smoothing = "kneser_ney",
        k: float = 1.0,
        discounts: Sequence[Any] | None = None,
        discount_fallback: Sequence[float] | None = None,
        level: Literal["word", "char"] = "word",
        min_count: int = 1,
        normalizer: Normalizer | None = None,
    ) -> None:
        self.n, self.smoothing, self.k = n, smoothing, k
        self.discounts, self.discount_fallback = discounts, discount_fallback
        self.level, self.min_count, self.normalizer = level, min_count, normalizer
        check_int("n", n, 1, owner="NGramLM")
        check_choice("smoothing", smoothing, ("kneser_ney", "add_k", "none"), owner="NGramLM")
        check_number("k", k, 0.0, low_open=True, owner="NGramLM")
        check_choice("level", level, ("word", "char"), owner="NGramLM")
        check_int("min_count", min_count, 1, owner="NGramLM")
        check_discounts(discounts, discount_fallback, n)
        if normalizer is not None and not isinstance(normalizer, Normalizer):
            raise TypeError(
                f"NGramLM: normalizer must be a rowbook.text.Normalizer or None, got "
                f"{type(normalizer).__name__}"
            )

    @classmethod
    def _params_from_json(cls, params: dict[str, Any]) -> dict[str, Any]:
        tupled = {name: _tuples(params.get(name)) for name in ("discounts", "discount_fallback")}
        return super()._params_from_json(params) | tupled

    # -- fitting ------------------------------------------------------------------------
    def fit(
        self,
        texts: Sequence[str] | Sequence[Sequence[str]],
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: str | os.PathLike[str] | None = None,
    ) -> NGramLM:
        """Count the n-grams of ``texts`` (one sentence each) and estimate; returns ``self``.

        Counting is one pass, so ``resume`` from a saved model of the same parameters
        takes its tables as they are, and ``checkpoint`` saves the fitted model there.
        """
        state = self._resume_state(resume)
        if state is not None:
            self._set_state(state)
        else:
            self._adopt(self._estimate(texts))
        if checkpoint is not None:
            self.save(checkpoint)
        return self

    def _estimate(self, texts: Sequence[Any]) -> NGramState:
        """The learned state from ``texts``: the pipeline, the counts, and the smoothing."""
        pipeline = ngram_pipeline(texts, self.level, self.min_count, self.normalizer)
        vocab = pipeline.vocab_
        V, bos = len(vocab), vocab.bos_id
        ids, pos = frame_sentences(*sentence_ids(pipeline, texts), bos, vocab.eos_id)
        orders = count_ngrams(ids, pos, self.n, V, bos)
        keys, counts = [o.keys for o in orders], [o.counts for o in orders]
        if self.smoothing != "kneser_ney":
            return NGramState(pipeline, NGramTables(V, keys, counts), None)
        fixed = None if self.discounts is None else _discount_rows(self.discounts, self.n)
        probs, backoffs, discounts = kneser_ney_tables(
            orders, V, bos, discounts=fixed, fallback=self.discount_fallback
        )
        with np.errstate(divide="ignore"):  # zero discounts give gamma = 0: log10 -inf
            log10_prob, log10_backoff = (
                [np.log10(p) for p in probs],
                [np.log10(b) for b in backoffs],
            )
        tables = NGramTables(V, keys, counts, log10_prob, log10_backoff)
        return NGramState(pipeline, tables, discounts)

    # -- learned state ------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        fitted = self._require_fitted("save()")
        return {
            "pipeline": fitted.pipeline.to_dict(),
            **tables_to_state(fitted.tables),
            "discounts": fitted.discounts,
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        pipeline = TextPipeline.from_dict(state["pipeline"], "field 'state.pipeline'")
        tables = tables_from_state(state, len(pipeline.vocab_), self.n, self.smoothing)
        discounts = state.get("discounts")
        if discounts is not None:
            discounts = np.asarray(discounts, np.float64)
        self._adopt(NGramState(pipeline, tables, discounts))

    @property
    def pipeline_(self) -> TextPipeline:
        """The fitted text pipeline (normalizer, tokenizer, vocabulary)."""
        return self._require_fitted(".pipeline_").pipeline

    @property
    def vocab_(self) -> Vocab:
        """The vocabulary: ``<unk>``, ``<s>``, ``</s>``, then tokens by count."""
        return self.pipeline_.vocab_

    @property
    def tables_(self) -> NGramTables:
        """The learned tables of every order."""
        return self._require_fitted(".tables_").tables

    @property
    def discounts_(self) -> np.ndarray | None:
        """``(n, 4)`` Kneser-Ney discounts per order, or None."""
        return self._require_fitted(".discounts_").discounts

    # -- ARPA files ----------------------------------------------------------------------
    def save_arpa(self, path: str | os.PathLike[str]) -> None:
        """Write the model as an ARPA file (log10 probabilities and backoff weights),
        atomically; only a backoff model (Kneser-Ney, or one read from ARPA) has that form."""
        tables = self.tables_
        if tables.log10_prob is None:
            raise ValueError(
                f"an ARPA file holds a backoff model, and smoothing={self.smoothing!r} is "
                "none (add-k gives every unseen n-gram its own share, not a backed-off one); "
                "fit with smoothing='kneser_ney' to write ARPA"
            )
        write_arpa(path, self.vocab_.itos, tables)

    @classmethod
    def from_arpa(
        cls,
        path: str | os.PathLike[str],
        *,
        level: Literal["word", "char"] = "word",
        normalizer: Normalizer | None = None,
    ) -> NGramLM:
        """The backoff model of an ARPA file (KenLM's, SRILM's, or :meth:`save_arpa`'s).

        Texts are tokenized by ``level`` (and ``normalizer``) as a fitted model's would be;
        ``<s>`` and ``</s>`` must have entries, and a missing ``<unk>`` gets log10
        probability -100, as KenLM gives it. The model has no counts: it scores and
        generates, and ``fit`` would estimate it anew with Kneser-Ney.
        """
        entries = read_arpa(path)
        for token in (BOS, EOS):
            if token not in entries.words:
                raise ArpaError(f"{path}: no unigram entry for {token}; a sentence model needs one")
        vocab = ngram_vocab().fit_counts(dict.fromkeys(entries.words, 1))
        ids = vocab.encode(entries.words)
        tables = tables_from_entries(path, entries, ids, len(vocab))
        model = cls(n=tables.n, level=level, normalizer=normalizer)
        tokenizer = CharTokenizer() if level == "char" else WordTokenizer()
        pipeline = TextPipeline(normalizer, tokenizer, vocab).fit([])
        return model._adopt(NGramState(pipeline, tables, None))

    # -- using the model ----------------------------------------------------------------
    def _log10(self, W: np.ndarray) -> np.ndarray:
        """``(N,)`` log10 probability of the last id of each window ``(N, n)``."""
        tables = self.tables_
        if tables.log10_prob is not None:
            return backoff_log10(tables, W)
        k = self.k if self.smoothing == "add_k" else 0.0
        return addk_log10(tables, W, k, self.vocab_.bos_id)

    def windows(self, texts: Sequence[str] | Sequence[Sequence[str]]) -> np.ndarray:
        """``(N, n)`` windows of every prediction in ``texts``: n-1 context ids (-1 before
        ``<s>``) and the id predicted (every token and each ``</s>``)."""
        vocab = self.vocab_
        ids, pos = frame_sentences(*sentence_ids(self.pipeline_, texts), vocab.bos_id, vocab.eos_id)
        at = np.flatnonzero(pos > 0)  # (N,) every position but <s>
        offsets = np.arange(-(self.n - 1), 1)  # (n,)
        W = ids[np.maximum(at[:, None] + offsets, 0)]  # (N, n)
        W[pos[at][:, None] + offsets < 0] = -1
        return W

    def logprob(self, word: str, context: Sequence[str] = ()) -> float:
        """``ln P(word | context)``; the context is cut after its last ``<s>`` and to its
        last ``n - 1`` tokens (``<s>`` opens a sentence: nothing stands before it)."""
        vocab = self.vocab_
        ids = [vocab.token_to_id(t) for t in context]
        if vocab.bos_id in ids:
            ids = ids[len(ids) - 1 - ids[::-1].index(vocab.bos_id) :]
        ids = ([-1] * self.n + ids)[len(ids) + 1 :]  # the last n - 1, -1 padded
        W = np.array([[*ids, vocab.token_to_id(word)]], dtype=np.int64)
        return float(self._log10(W)[0]) * _LN10

    def score(self, text: str | Sequence[str]) -> float:
        """log10 probability of one sentence, ``</s>`` included (KenLM's ``Model.score``)."""
        return float(self._log10(self.windows([text])).sum())

    def perplexity(self, texts: Sequence[str] | Sequence[Sequence[str]]) -> float:
        """``exp`` of the mean ``-ln P`` per prediction (each ``</s>`` counted) over ``texts``;
        ``inf`` when one has probability 0 (unsmoothed, unseen)."""
        log10 = self._log10(self.windows(texts))
        return math.exp(-float(log10.mean()) * _LN10) if np.isfinite(log10).all() else math.inf

    def next_distribution(self, context: Sequence[int]) -> np.ndarray:
        """``(V,)`` probabilities of every id after the ids ``context`` (the last n - 1
        are used; start them with ``<s>`` at a sentence start)."""
        V, ids = self.tables_.V, list(context)[-(self.n - 1) :] if self.n > 1 else []
        W = np.empty((V, self.n), dtype=np.int64)
        W[:, : self.n - 1] = [-1] * (self.n - 1 - len(ids)) + ids
        W[:, -1] = np.arange(V)
        return 10.0 ** self._log10(W)

    def generate(self, n_words: int, *, seed: int | None = None, context: str = "") -> str:
        """``context`` followed by ``n_words`` sampled tokens; a sampled ``</s>`` starts a new
        line. ``<s>`` and ``<unk>`` are never drawn; the same ``seed`` gives the same text."""
        check_int("n_words", n_words, 0)
        vocab, pipeline = self.vocab_, self.pipeline_
        rng = np.random.default_rng(seed)
        lines: list[list[str]] = [pipeline.tokenize(context)]
        ids = [vocab.bos_id, *pipeline.encode(context).tolist()]
        for _ in range(n_words):
            p = self.next_distribution(ids)
            p[[vocab.bos_id, vocab.unk_id]] = 0.0
            if p.sum() == 0:  # an unsmoothed model after an unseen context: end the sentence
                p[vocab.eos_id] = 1.0
            nxt = int(rng.choice(len(p), p=p / p.sum()))
            if nxt == vocab.eos_id:
                lines.append([])
                ids = [vocab.bos_id]
            else:
                lines[-1].append(vocab.id_to_token(nxt))
                ids.append(nxt)
        return "\n".join(pipeline.tokenizer_.detokenize(line) for line in lines)


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples they were saved from."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _discount_rows(discounts: Sequence[Any], n: int) -> np.ndarray:
    """``(n, 4)`` ``[0, D_1, D_2, D_3+]`` rows from one triple or one triple per order."""
    rows = np.asarray(discounts, dtype=np.float64).reshape(-1, 3)
    rows = np.repeat(rows, n, axis=0) if len(rows) == 1 else rows
    return np.hstack([np.zeros((n, 1)), rows])
