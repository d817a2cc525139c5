"""SubwordVectors: word vectors that are mean bags of n-gram rows, so every word has one.

fastText's input table ``W_in`` has ``nwords + bucket`` rows: one per vocabulary word, then
one per hash bucket of character n-grams (:mod:`rowbook.text.char_ngrams`). A word's vector is
an ``EmbeddingBag(mode="mean")`` lookup,

    vector(w) = mean(W_in[i] for i in bag(w)),   bag(w) = [id(w)] + n-gram rows of "<w>",

so a word the corpus never had still gets a vector from its n-grams (``vector_for``), while
``in``, ``len`` and the rows searched by the queries stay the vocabulary's, as in
``fasttext``'s ``get_word_vector`` and gensim's ``FastTextKeyedVectors``.

A **pruned** table (:meth:`SubwordVectors.prune`) keeps only the buckets its words use, as
fastText's quantised models do (their ``pruneidx``): ``kept_buckets`` lists the kept bucket
numbers, row ``nwords + k`` holds bucket ``kept_buckets[k]``, and an n-gram whose bucket was
dropped is left out of the bag.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from rowbook.checks import InputTypeError
from rowbook.nn.bag import bag_sum
from rowbook.text.char_ngrams import char_ngrams, subword_ids, subword_table
from rowbook.vectors.core import Term, Vectors
from rowbook.vectors.neighbors import unit_rows

if TYPE_CHECKING:
    from rowbook.vectors.quantize.subword import QuantizedSubwordVectors

__all__ = ["SubwordVectors", "keep_buckets"]

PathLike = str | os.PathLike[str]
_WORDS_PER_BLOCK = 1 << 16  # word bags averaged at a time when converting a large model


class SubwordVectors(Vectors):
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
        starts, ids = self._bags(keys)
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

    @property
    def input_matrix(self) -> np.ndarray:
        """The ``(nwords + bucket, d)`` input table (read-only): word rows, then buckets."""
        return self._input

    @property
    def kept_buckets(self) -> np.ndarray | None:
        """The bucket numbers of the n-gram rows of a pruned table (None: every bucket)."""
        return self._kept

    # -- the bag of a word -------------------------------------------------------------

    def _bags(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ids)`` of every word's bag, rows of this table's input matrix."""
        starts, ids = subword_table(words, minn=self.minn, maxn=self.maxn, bucket=self.bucket)
        if self._kept is None:
            return starts, ids
        rows, kept = keep_buckets(ids.astype(np.int64), len(words), self._kept)
        bag_of = np.repeat(np.arange(len(words)), np.diff(starts))  # (n,)
        counts = np.bincount(bag_of[kept], minlength=len(words))  # (V,) ids kept per bag
        new_starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(counts, out=new_starts[1:])
        return new_starts, rows.astype(np.int32)

    def _set_subwords(self, minn: int, maxn: int, bucket: int, kept_buckets: Any) -> int:
        """Store the n-gram settings; returns the number of bucket rows the table holds."""
        self.minn, self.maxn, self.bucket = int(minn), int(maxn), int(bucket)
        self._kept = _check_kept(kept_buckets, self.bucket)
        return self.bucket if self._kept is None else len(self._kept)

    def _full_bag(self, word: str) -> np.ndarray:
        """The bag of ``word`` in the rows of the unpruned table (``nwords + bucket`` rows)."""
        return subword_ids(
            word,
            minn=self.minn,
            maxn=self.maxn,
            bucket=self.bucket,
            nwords=len(self),
            word_id=self.key_to_index.get(word),
        )

    def subword_ids(self, word: str) -> np.ndarray:
        """Rows of ``input_matrix`` in the bag of ``word``: its own id (if known), then n-grams."""
        ids = self._full_bag(word)
        return ids if self._kept is None else keep_buckets(ids, len(self), self._kept)[0]

    def subwords(self, word: str) -> list[tuple[str, int]]:
        """``(piece, row)`` for each member of the bag of ``word``, the word itself first if known.

        The same pieces and ids as ``fasttext``'s ``model.get_subwords(word)``; a pruned
        table leaves out the n-grams whose bucket it dropped.
        """
        ngrams = char_ngrams(word, self.minn, self.maxn) if self.maxn > 0 and self.bucket else []
        pieces = ([word] if word in self else []) + ngrams
        ids = self._full_bag(word)
        if self._kept is None:
            return list(zip(pieces, ids.tolist(), strict=True))
        rows, kept = keep_buckets(ids, len(self), self._kept)
        return list(
            zip([p for p, k in zip(pieces, kept, strict=True) if k], rows.tolist(), strict=True)
        )

    def vector_for(self, word: str) -> np.ndarray:
        """The ``(d,)`` vector of any word: the mean of its bag's rows (zeros for an empty bag).

        For a vocabulary word this is its row of :attr:`vectors`; for an unseen word, the
        mean of its n-gram rows, as ``fasttext``'s ``get_word_vector``.
        """
        if word in self:
            return self.get_vector(word)
        return self._bag_mean(self.subword_ids(word).astype(np.int32))

    def _bag_mean(self, ids: np.ndarray) -> np.ndarray:
        """The mean of the input rows ``ids`` (zeros for none), summed in order: (d,)."""
        return bag_sum(self._input, ids, np.array([0, len(ids)]), mean=True)[0][0]

    # -- queries that take unseen words ------------------------------------------------

    def similarity(self, key1: str, key2: str) -> float:
        """Cosine similarity of two words, in the vocabulary or not."""
        unit = unit_rows(np.stack([self.vector_for(key1), self.vector_for(key2)]))[1]  # (2, d)
        return float(unit[0] @ unit[1])

    def _resolve(self, terms: Sequence[Term], normalise_keys: bool) -> tuple[np.ndarray, list[int]]:
        """As :class:`Vectors`, with an unseen word standing for its :meth:`vector_for`."""
        known = [
            t if not isinstance(t, str) or t in self else self._unseen(t, normalise_keys)
            for t in terms
        ]
        return super()._resolve(known, normalise_keys)

    def _unseen(self, word: str, normalise: bool) -> np.ndarray:
        vector = self.vector_for(word)
        return unit_rows(vector)[1] if normalise else vector

    # -- smaller tables ----------------------------------------------------------------

    def _quantized(self, method: str, options: dict, finish: dict) -> QuantizedSubwordVectors:
        """:meth:`Vectors.quantize` of a fastText table: the word rows and the input matrix
        each quantised, so ``vector_for`` works for unseen words too."""
        from rowbook.vectors.quantize.subword import quantize_subword

        return quantize_subword(self, method, options, finish)

    def prune(self, keep: int, *, verbose: bool = True) -> SubwordVectors:
        """The ``keep`` most frequent words and the buckets their bags use, the others dropped
        (as fastText's ``-cutoff``); prints the bytes saved unless ``verbose=False``."""
        from rowbook.vectors.prune import prune_subword

        return prune_subword(self, keep, verbose=verbose)

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
        from rowbook.vectors.fasttext_format import read_fasttext_bin

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
        from rowbook.vectors.mapped import open_cached

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


def keep_buckets(ids: np.ndarray, nwords: int, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a pruned table for bag ids of the full one: ``(rows, kept_mask)``.

    Word ids (below ``nwords``) stay; bucket id ``nwords + b`` becomes ``nwords + k`` where
    ``kept[k] == b``, and is dropped (``kept_mask`` False) when ``b`` is not kept.

    Examples
    --------
    >>> keep_buckets(np.array([1, 10, 8 + 2, 13]), 2, np.array([3, 8, 11]))
    (array([1, 3, 3, 4]), array([ True,  True,  True,  True]))
    >>> keep_buckets(np.array([0, 2 + 5]), 2, np.array([3, 8]))
    (array([0]), array([ True, False]))
    """
    buckets = ids - nwords  # (n,), negative for word ids
    at = np.minimum(np.searchsorted(kept, buckets), max(len(kept) - 1, 0))
    found = buckets < 0
    if len(kept):
        found |= kept[at] == buckets
    rows = np.where(buckets < 0, ids, nwords + at)
    return rows[found], found


def _check_kept(kept: Any, bucket: int) -> np.ndarray | None:
    if kept is None:
        return None
    kept = np.asarray(kept, dtype=np.int64)
    if kept.ndim != 1 or (
        kept.size and (kept[0] < 0 or kept[-1] >= bucket or (np.diff(kept) <= 0).any())
    ):
        raise ValueError(f"kept_buckets must be increasing bucket numbers in 0..{bucket - 1}")
    return kept


def _from_cache(cls: type[SubwordVectors], state: Any, cache: PathLike) -> SubwordVectors:
    """A mapped :class:`SubwordVectors` from a fastText cache's state, every field checked."""
    from rowbook.vectors.npz import check_vectors_state

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
