"""SubwordVectors: word vectors that are mean bags of n-gram rows, so every word has one.

fastText's input table ``W_in`` has ``nwords + bucket`` rows: one per vocabulary word, then
one per hash bucket of character n-grams (:mod:`rowbook.text.subwords`). A word's vector is
an ``EmbeddingBag(mode="mean")`` lookup,

    vector(w) = mean(W_in[i] for i in bag(w)),   bag(w) = [id(w)] + n-gram rows of "<w>",

so a word the corpus never had still gets a vector from its n-grams (``vector_for``), while
``in``, ``len`` and the rows searched by the queries stay the vocabulary's, as in
``fasttext``'s ``get_word_vector`` and gensim's ``FastTextKeyedVectors``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Self

import numpy as np

from rowbook.nn.bag import bag_sum
from rowbook.text.subwords import char_ngrams, subword_ids, subword_table
from rowbook.vectors.core import Term, Vectors
from rowbook.vectors.neighbors import unit_rows

__all__ = ["SubwordVectors"]

PathLike = str | os.PathLike[str]


class SubwordVectors(Vectors):
    """Vectors of a fastText model: vocabulary rows plus a vector for any word from its n-grams.

    Parameters
    ----------
    keys : sequence of str
        The ``nwords`` vocabulary words, in id order.
    input_matrix : array_like
        ``(nwords + bucket, d)`` float32 input table: word rows, then n-gram buckets.
    minn, maxn, bucket : int
        Lengths of the character n-grams (``maxn=0``: none) and the number of hash buckets.
    counts : array_like, optional
        ``(nwords,)`` corpus counts.

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
    ) -> None:
        W_in = np.array(
            input_matrix, dtype=np.float32, order="C", copy=None
        )  # (nwords + bucket, d)
        if W_in.ndim != 2 or W_in.shape[0] != len(keys) + bucket:
            raise ValueError(
                f"input_matrix must have nwords + bucket = {len(keys)} + {bucket} rows, got "
                f"shape {W_in.shape}; pass the whole input table of the model"
            )
        self.minn, self.maxn, self.bucket = int(minn), int(maxn), int(bucket)
        starts, ids = subword_table(keys, minn=self.minn, maxn=self.maxn, bucket=self.bucket)
        rows, _ = bag_sum(W_in, ids, starts, mean=True)  # (nwords, d): one mean bag per word
        super().__init__(keys, rows, counts, copy=False)
        self._input = W_in.view()  # shared with a trainer's table, read-only through here
        self._input.flags.writeable = False

    @property
    def input_matrix(self) -> np.ndarray:
        """The ``(nwords + bucket, d)`` input table (read-only): word rows, then buckets."""
        return self._input

    # -- the bag of a word -------------------------------------------------------------

    def subword_ids(self, word: str) -> np.ndarray:
        """Rows of ``input_matrix`` in the bag of ``word``: its own id (if known), then n-grams."""
        return subword_ids(
            word,
            minn=self.minn,
            maxn=self.maxn,
            bucket=self.bucket,
            nwords=len(self),
            word_id=self.key_to_index.get(word),
        )

    def subwords(self, word: str) -> list[tuple[str, int]]:
        """``(piece, row)`` for each member of the bag of ``word``, the word itself first if known.

        The same pieces and ids as ``fasttext``'s ``model.get_subwords(word)``.
        """
        ngrams = char_ngrams(word, self.minn, self.maxn) if self.maxn > 0 and self.bucket else []
        pieces = ([word] if word in self else []) + ngrams
        return list(zip(pieces, self.subword_ids(word).tolist(), strict=True))

    def vector_for(self, word: str) -> np.ndarray:
        """The ``(d,)`` vector of any word: the mean of its bag's rows (zeros for an empty bag).

        For a vocabulary word this is its row of :attr:`vectors`; for an unseen word, the
        mean of its n-gram rows, as ``fasttext``'s ``get_word_vector``.
        """
        if word in self:
            return self.get_vector(word)
        ids = self.subword_ids(word).astype(np.int32)
        return bag_sum(self._input, ids, np.array([0, len(ids)]), mean=True)[0][0]  # (d,)

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

    # -- files -------------------------------------------------------------------------

    @classmethod
    def load(cls, path: PathLike) -> Self:
        """Not for subword vectors: an ``.npz`` holds no n-gram rows (use :meth:`load_fasttext`)."""
        raise TypeError(
            f"{path}: a vectors file holds no n-gram rows; read it with Vectors.load(path), or "
            "read a fastText model with SubwordVectors.load_fasttext(path)"
        )

    @classmethod
    def load_word2vec_format(cls, path: PathLike, *args: object, **kwargs: object) -> Self:
        """Not for subword vectors: word2vec files hold no n-gram rows (use :meth:`load_fasttext`)."""
        raise TypeError(
            f"{path}: a word2vec file holds no n-gram rows; read it with "
            "Vectors.load_word2vec_format(path), or a fastText model with SubwordVectors.load_fasttext(path)"
        )

    @classmethod
    def load_fasttext(cls, path: PathLike) -> Self:
        """The vectors of a Facebook fastText ``.bin`` (unquantised); see :mod:`.fasttext_format`."""
        from rowbook.vectors.fasttext_format import read_fasttext_bin

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
