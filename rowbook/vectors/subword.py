"""SubwordVectors: word vectors that are mean bags of n-gram rows, so every word has one.

fastText's input table ``W_in`` has ``nwords + bucket`` rows: one per vocabulary word, then
one per hash bucket of character n-grams (:mod:`rowbook.text.char_ngrams`). A word's vector is
an ``EmbeddingBag(mode="mean")`` lookup,

    vector(w) = mean(W_in[i] for i in bag(w)),   bag(w) = [id(w)] + n-gram rows of "<w>",

so a word the corpus never had still gets a vector from its n-grams (``vector_for``), while
``in``, ``len`` and the rows searched by the queries stay the vocabulary's, as in
``fasttext``'s ``get_word_vector`` and gensim's ``FastTextKeyedVectors``. The bags are
:class:`~rowbook.vectors.subword_bags.SubwordBags`' (shared with the quantised table); this
module holds the float table and its files.

A **pruned** table (:meth:`SubwordVectors.prune`) keeps only the buckets its words use
(:func:`~rowbook.vectors.subword_bags.keep_buckets`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Self

import numpy as np

from rowbook.checks import InputTypeError
from rowbook.nn.bag import bag_sum
from rowbook.text.char_ngrams import subword_table
from rowbook.vectors import prune
from rowbook.vectors.core import Vectors
from rowbook.vectors.fasttext_format import read_fasttext_bin
from rowbook.vectors.mapped import open_cached
from rowbook.vectors.npz import check_vectors_state
from rowbook.vectors.quantize.cost import quantize_subword
from rowbook.vectors.quantize.table import QuantizedSubwordVectors
from rowbook.vectors.subword_bags import SubwordBags

__all__ = ["SubwordVectors"]

PathLike = str | os.PathLike[str]
_WORDS_PER_BLOCK = 1 << 16  # word bags averaged at a time when converting a large model


class SubwordVectors(SubwordBags, Vectors):
    """Vectors of a fastText model: vocabulary rows plus a vector for any word from its n-grams.

    Parameters
    ----------
    keys : sequence of str
        The ``nwords`` vocabulary words, in id order.
    input_matrix : array_like
        ``(nwords + bucket, d)`` float32 input table: word rows, then n-gram buckets
        (``nwords + len(kept_buckets)`` rows for a pruned table).
    minn, maxn, bucket : int
        Lengths of the character n-grams (``maxn=0``: none) and the number of hash buckets.
    counts : array_like, optional
        ``(nwords,)`` corpus counts.
    kept_buckets : array_like, optional
        For a pruned table, the sorted bucket numbers its n-gram rows hold.

    Notes
    -----
    Queries (``most_similar``, ``similarity``, ``analogy``, ``distances``) accept unseen
    words too: their vector is :meth:`vector_for`. The evaluations score the vocabulary
    only, as gensim's do; ``"word" in vectors`` is vocabulary membership. ``save`` and
    ``save_word2vec_format`` write the vocabulary's vectors (read back as
    :class:`Vectors`); the n-gram rows live in a fastText ``.bin``
    (:meth:`load_fasttext`, ``FastText.save_fasttext``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ft = SubwordVectors(["whale", "bone"], rng.random((2 + 50, 4)), minn=3, maxn=4, bucket=50)
    >>> "whalebone" in ft, ft.vector_for("whalebone").shape
    (False, (4,))
    >>> [g for g, _ in ft.subwords("bone")]
    ['bone', '<bo', '<bon', 'bon', 'bone', 'one', 'one>', 'ne>']
    """

    def __init__(
        self,
        keys: Sequence[str],
        input_matrix: np.ndarray,
        *,
        minn: int,
        maxn: int,
        bucket: int,
        counts: np.ndarray | Sequence[int] | None = None,
        kept_buckets: np.ndarray | Sequence[int] | None = None,
    ) -> None:
        W_in = np.array(
            input_matrix, dtype=np.float32, order="C", copy=None
        )  # (nwords + bucket, d)
        buckets = self._set_subwords(minn, maxn, bucket, kept_buckets)
        if W_in.ndim != 2 or W_in.shape[0] != len(keys) + buckets:
            raise ValueError(
                f"input_matrix must have nwords + bucket = {len(keys)} + {buckets} rows, got "
                f"shape {W_in.shape}; pass the whole input table of the model"
            )
        starts, ids = self.bags(keys)
        rows, _ = bag_sum(W_in, ids, starts, mean=True)  # (nwords, d): one mean bag per word
        super().__init__(keys, rows, counts, copy=False)
        self._input = W_in.view()  # shared with a trainer's table, read-only through here
        self._input.flags.writeable = False

    @classmethod
    def _from_rows(
        cls,
        keys: Sequence[str],
        rows: np.ndarray,
        input_matrix: np.ndarray,
        *,
        minn: int,
        maxn: int,
        bucket: int,
        counts: np.ndarray | None = None,
        kept_buckets: np.ndarray | None = None,
    ) -> Self:
        """A table whose word rows are already computed (a mapped cache): nothing is averaged."""
        table = cls.__new__(cls)
        Vectors.__init__(table, keys, rows, counts, copy=False)
        table._set_subwords(minn, maxn, bucket, kept_buckets)
        table._input = input_matrix.view()
        table._input.flags.writeable = False
        return table

    # -- smaller tables ----------------------------------------------------------------

    def _quantized(self, method: str, options: dict, finish: dict) -> QuantizedSubwordVectors:
        """:meth:`Vectors.quantize` of a fastText table: the word rows and the input matrix
        each quantised, so ``vector_for`` works for unseen words too."""
        return quantize_subword(self, method, options, finish)

    def prune(self, keep: int, *, verbose: bool = True) -> SubwordVectors:
        """The ``keep`` most frequent words and the buckets their bags use, the others dropped
        (as fastText's ``-cutoff``); prints the bytes saved unless ``verbose=False``."""
        return prune.prune_subword(self, keep, verbose=verbose)

    def vectors_for_all(self, keys: Iterable[str]) -> Vectors:
        """A :class:`~rowbook.vectors.Vectors` of the given keys, deduplicated, in order,
        unseen words included (their :meth:`vector_for`), as gensim's
        ``FastTextKeyedVectors.vectors_for_all``; counts carried over (0 for unseen words)."""
        chosen = list(dict.fromkeys(keys))
        made = Vectors(self.vector_size)
        if chosen:
            counts = None
            if self.counts is not None:
                counts = [int(self.counts[self.get_index(k)]) if k in self else 0 for k in chosen]
            made.add_vectors(chosen, np.stack([self.vector_for(k) for k in chosen]), counts=counts)
        return made

    # -- files -------------------------------------------------------------------------

    @classmethod
    def load(cls, path: PathLike, **kwargs: Any) -> Self:
        """Not for subword vectors: an ``.npz`` holds no n-gram rows (use :meth:`load_fasttext`)."""
        raise InputTypeError(
            f"{path}: a vectors file holds no n-gram rows; read it with Vectors.load(path), or "
            "read a fastText model with SubwordVectors.load_fasttext(path)"
        )

    @classmethod
    def load_word2vec_format(cls, path: PathLike, *args: object, **kwargs: object) -> Self:
        """Not for subword vectors: word2vec files hold no n-gram rows (use :meth:`load_fasttext`)."""
        raise InputTypeError(
            f"{path}: a word2vec file holds no n-gram rows; read it with "
            "Vectors.load_word2vec_format(path), or a fastText model with SubwordVectors.load_fasttext(path)"
        )

    @classmethod
    def load_fasttext(
        cls, path: PathLike, *, mmap: bool = False, cache_dir: PathLike | None = None
    ) -> Self:
        """The vectors of a Facebook fastText ``.bin`` (unquantised); see :mod:`.fasttext_format`.

        ``mmap=True`` converts the model once into a rowbook ``.npz`` (word rows, input
        matrix, counts) beside it or in ``cache_dir`` and maps that (see
        :mod:`rowbook.vectors.mapped`).
        """
        if not mmap:
            model = read_fasttext_bin(path)
            n = model.nwords
            return cls(
                model.words[:n],
                model.input,
                minn=model.args.minn,
                maxn=model.args.maxn,
                bucket=model.args.bucket,
                counts=model.counts[:n],
            )

        def build(allocate: Any) -> dict[str, Any]:
            model = read_fasttext_bin(path, allocate=allocate)
            words = model.words[: model.nwords]
            starts, ids = subword_table(
                words, minn=model.args.minn, maxn=model.args.maxn, bucket=model.args.bucket
            )
            rows = allocate((len(words), model.args.dim), np.dtype(np.float32))  # (nwords, d)
            for first in range(0, len(words), _WORDS_PER_BLOCK):
                last = min(first + _WORDS_PER_BLOCK, len(words))
                bounds = starts[first : last + 1] - starts[first]
                rows[first:last] = bag_sum(
                    model.input, ids[starts[first] : starts[last]], bounds, mean=True
                )[0]
            return {
                "keys": list(words),
                "vectors": rows,
                "counts": model.counts[: model.nwords],
                "input": model.input,
                "minn": model.args.minn,
                "maxn": model.args.maxn,
                "bucket": model.args.bucket,
            }

        state, cache = open_cached(
            path, "fasttext bin", {}, build, kind="fasttext cache", cache_dir=cache_dir
        )
        return _from_cache(cls, state, cache)


def _from_cache(cls: type[SubwordVectors], state: Any, cache: PathLike) -> SubwordVectors:
    """A mapped :class:`SubwordVectors` from a fastText cache's state, every field checked."""

    keys, rows, counts = check_vectors_state(state, cache, allow_nonfinite=True)
    input_, minn, maxn, bucket = (state.get(k) for k in ("input", "minn", "maxn", "bucket"))
    if not all(isinstance(v, int) and v >= 0 for v in (minn, maxn, bucket)) or not (
        isinstance(input_, np.ndarray)
        and input_.dtype == np.float32
        and input_.shape == (len(keys) + bucket, rows.shape[1])
    ):
        raise ValueError(
            f"{cache}: the fastText cache's 'input', 'minn', 'maxn' or 'bucket' "
            "does not fit its vectors; delete it to rebuild it"
        )
    table = cls._from_rows(keys, rows, input_, minn=minn, maxn=maxn, bucket=bucket, counts=counts)
    table.path = cache
    return table
