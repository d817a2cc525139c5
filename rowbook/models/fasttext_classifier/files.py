"""A :class:`~rowbook.models.fasttext_classifier.model.FastTextClassifier` in fastText's files.

A supervised ``.bin`` is the layout of :mod:`rowbook.vectors.fasttext_format` with
``model = 3`` (sup) and the labels in the dictionary after the words (type 1), so
``nlabels`` output rows; ``bucket`` is 0 when there are no n-grams (the ``fasttext``
package writes it so). The label prefix is not in the file (fastText does not save it):
a loaded model takes ``__label__`` unless told otherwise. A quantised ``.ftz`` holds a
product-quantised input table (and output table with ``qout``) and, when ``cutoff`` pruned
the rows, the kept buckets (``pruneidx``); see :mod:`~rowbook.models.fasttext_classifier.quantize`.

Also here: the pretrained word rows of ``pretrained_vectors=`` (fastText's
``-pretrainedVectors``), and :class:`FastTextFiles`, the classifier's methods that write,
read and quantise these files.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled import LabelVocab
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES
from rowbook.models.fasttext_classifier.state import new_state
from rowbook.models.word_vectors.state import Schedule
from rowbook.vectors import Vectors
from rowbook.vectors.fasttext_format import (
    FastTextArgs,
    FastTextFile,
    read_fasttext_bin,
    write_fasttext_bin,
)

__all__ = [
    "FastTextFiles",
    "load_fasttext",
    "pretrained_rows",
    "save_fasttext",
]

_LOSS_NAMES = {code: name for name, code in LOSS_CODES.items()}
_SUPERVISED = 3
log = logging.getLogger("rowbook")


# -- pretrained rows -----------------------------------------------------------------------


def _pretrained(source: Any) -> Vectors:
    if isinstance(source, Vectors):
        return source
    path = os.fspath(source)
    if path.endswith((".npz", ".safetensors")):
        return Vectors.load(path)
    return Vectors.load_word2vec_format(path)


def pretrained_rows(W_in: np.ndarray, keys: tuple[str, ...], source: Any, show: bool) -> int:
    """Overwrite the rows of ``W_in`` of the words ``source`` has (aligned by word); the
    others keep their initial rows. Logs (and with ``show`` prints) how many; returns it."""
    vectors = _pretrained(source)
    d = W_in.shape[1]
    if vectors.vector_size != d:
        from rowbook.checks import ParameterError

        raise ParameterError(
            "pretrained_vectors",
            f"{vectors.vector_size}-dimensional vectors",
            f"vectors of vector_size={d} dimensions",
            fix="set vector_size to the size of the pretrained vectors",
        )
    found = [(i, vectors.get_index(k)) for i, k in enumerate(keys) if k in vectors]
    if found:
        ours, theirs = (np.array(x, dtype=np.int64) for x in zip(*found, strict=True))
        W_in[ours] = np.asarray(vectors.vectors[theirs], dtype=np.float32)
    message = (
        f"pretrained vectors: {len(found):,} of the {len(keys):,} words found; "
        f"{len(keys) - len(found):,} start at random"
    )
    log.info(message)
    if show:
        print(message, file=sys.stderr)
    return len(found)


# -- fastText's .bin / .ftz ----------------------------------------------------------------


def save_fasttext(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model`` as fastText's ``.bin`` (or ``.ftz`` when quantised), atomically."""
    state = model._require_fitted("save_fasttext()")
    vocab, labels, tables = state.vocab, state.labels, state.tables
    quant = state.quant or {}
    args = FastTextArgs.of_model(
        model, wordNgrams=model.word_ngrams, loss=LOSS_CODES[model.loss], model=_SUPERVISED
    )
    prune = state.prune
    pruneidx = None
    if prune is not None:
        kept = np.flatnonzero(prune >= 0)
        pruneidx = np.stack([kept, prune[kept]], axis=1).astype(np.int32)  # (n, 2)
    write_fasttext_bin(
        path,
        FastTextFile(
            args,
            vocab.keys + labels.keys,
            np.concatenate([vocab.counts, labels.counts]),
            quant.get("input", tables["W_in"]),
            quant.get("output", tables["W_out"]),
            ntokens=vocab.total_words,
            types=np.repeat(np.array([0, 1], dtype=np.int8), [len(vocab), len(labels)]),
            pruneidx=pruneidx,
        ),
    )


def load_fasttext(cls: type, path: str | os.PathLike[str], label_prefix: str = "__label__") -> Any:
    """A fitted ``cls`` from a supervised fastText ``.bin`` or ``.ftz``."""
    file = read_fasttext_bin(path, quantized=True)
    a = file.args
    if a.model != _SUPERVISED:
        raise ValueError(
            f"{path} is a {'skip-gram' if a.model == 2 else 'CBOW'} fastText model (word "
            "vectors), not a supervised one; load it with rowbook.FastText.load_fasttext"
        )
    if a.loss not in _LOSS_NAMES:
        raise ValueError(f"{path}: field 'args.loss' is {a.loss}, not a fastText loss (1 to 4)")
    types = file.types
    if len(types) and types.any() and (np.diff(types.astype(np.int64)) < 0).any():
        raise ValueError(f"{path}: the dictionary's labels do not all follow its words")
    nwords = file.nwords
    if nwords == len(file.words):
        raise ValueError(f"{path}: a supervised model with no label in its dictionary")
    if (a.wordNgrams > 1 or a.maxn > 0) and a.bucket < 1:
        raise ValueError(
            f"{path}: word n-grams ({a.wordNgrams}) or char n-grams (maxn {a.maxn}) with "
            "bucket 0; the file is damaged"
        )
    model = cls(
        vector_size=a.dim,
        epochs=max(a.epoch, 1),
        word_ngrams=max(a.wordNgrams, 1),
        minn=a.minn,
        maxn=a.maxn,
        bucket=max(a.bucket, 1),
        loss=_LOSS_NAMES[a.loss],
        negative=max(a.neg, 1),
        min_count=max(a.minCount, 1),
        label_prefix=label_prefix,
    )
    vocab = CountedVocab(file.words[:nwords], file.counts[:nwords], file.ntokens, 0)
    labels = LabelVocab(file.words[nwords:], file.counts[nwords:])
    rows = _input_rows(file, model, path)
    d = a.dim
    dense_in = file.input if isinstance(file.input, np.ndarray) else None
    dense_out = file.output if isinstance(file.output, np.ndarray) else None
    tables = {
        "W_in": dense_in[:rows] if dense_in is not None else np.zeros((0, d), np.float32),
        "W_out": dense_out if dense_out is not None else np.zeros((0, d), np.float32),
    }
    if (dense_out if dense_out is not None else file.output).shape[0] != len(labels):
        raise ValueError(
            f"{path}: the output matrix has {file.output.shape[0]} rows for {len(labels)} labels"
        )
    state = new_state(vocab, labels, d, Schedule("build_vocab", 0), tables)
    quant = {}
    if dense_in is None:
        quant["input"] = file.input
    if dense_out is None:
        quant["output"] = file.output
    state.quant = quant or None
    if file.pruneidx is not None:
        state.prune = _prune_map(file.pruneidx, model.n_buckets, file.input.shape[0] - nwords, path)
    return model._adopt(state)


def _input_rows(file: FastTextFile, model: Any, path: Any) -> int:
    """How many input rows the model uses: the words and, with n-grams, the buckets (a
    file without n-grams may still hold bucket rows, which fastText never reads)."""
    nwords, rows = file.nwords, file.input.shape[0]
    if file.pruneidx is not None:
        return rows
    wanted = nwords + model.n_buckets
    if rows < wanted:
        raise ValueError(f"{path}: the input matrix has {rows} rows, fewer than {wanted}")
    return wanted


def _prune_map(pairs: np.ndarray, bucket: int, rows: int, path: Any) -> np.ndarray:
    """``(bucket,)`` int32: the kept row of each bucket after the words, -1 where dropped."""
    prune = np.full(bucket, -1, dtype=np.int32)
    if len(pairs):
        first, second = pairs[:, 0], pairs[:, 1]
        if first.min() < 0 or first.max() >= bucket or second.min() < 0 or second.max() >= rows:
            raise ValueError(
                f"{path}: field 'pruneidx' maps buckets outside 0..{bucket - 1} or to rows "
                f"outside 0..{rows - 1}; the file is damaged"
            )
        prune[first] = second
    return prune


class FastTextFiles:
    """The classifier in fastText's files: ``save_fasttext``, ``load_fasttext`` and
    ``quantize``, which makes the model a ``.ftz`` holds (a mixin of
    :class:`~rowbook.models.fasttext_classifier.FastTextClassifier`)."""

    def quantize(
        self,
        *,
        cutoff: int = 0,
        dsub: int = 2,
        qnorm: bool = True,
        qout: bool = False,
        retrain: bool = False,
        data: Any = None,
        labels: Sequence[Any] | None = None,
        epochs: int | None = None,
        seed: int = 1234,
    ) -> Self:
        """Make the model small as ``fasttext quantize`` does; returns ``self``, quantised.

        ``cutoff`` keeps only the rows of ``W_in`` of largest norm (0: all), ``retrain``
        trains those again on ``data`` (``labels``) for ``epochs`` (default: ``epochs``);
        then ``W_in`` becomes product-quantiser codes of ``dsub`` values a byte, with
        ``qnorm`` the norms apart in a byte a row, and with ``qout`` ``W_out`` too. Then
        :meth:`save_fasttext` writes a ``.ftz`` that ``fasttext.load_model`` opens and that
        predicts what this model predicts. See
        :mod:`~rowbook.models.fasttext_classifier.quantize`.
        """
        from rowbook.models.fasttext_classifier.quantize import quantize

        quantize(
            self,
            cutoff=cutoff,
            dsub=dsub,
            qnorm=qnorm,
            qout=qout,
            retrain=retrain,
            data=data,
            labels=labels,
            epochs=epochs,
            seed=seed,
        )
        return self

    def save_fasttext(self, path: str | os.PathLike[str]) -> None:
        """Write fastText's supervised ``.bin`` (a ``.ftz`` once quantised), atomically;
        ``fasttext.load_model`` opens it and predicts what this model predicts."""
        save_fasttext(self, path)

    @classmethod
    def load_fasttext(
        cls, path: str | os.PathLike[str], *, label_prefix: str = "__label__"
    ) -> Self:
        """A fitted classifier from a supervised fastText ``.bin`` or ``.ftz``: the same
        labels and probabilities on every line. The file does not hold the label prefix;
        give the one its training data used if not ``__label__``. ``train`` continues an
        unquantised one."""
        return load_fasttext(cls, path, label_prefix)
