"""Unigram: the subword model of Kudo (2018), SentencePiece's default, read and run as ``tokenizers`` does.

The vocabulary is a list of pieces with scores, ``log P(piece)``. A word's segmentation is
the path through its lattice (:mod:`rowbook.text.unigram.lattice`) with the highest sum of
scores (Viterbi). Characters no piece covers become unknown pieces; as in ``tokenizers``,
consecutive unknown characters are fused into one token whose text is looked up in the
vocabulary, else spelled as ``<0xXX>`` byte pieces when ``byte_fallback`` is set and all of
them exist, else given the ``unk_id``. Tokens keep the text they cover (an unknown token's
``tokens`` entry is that text, not ``"<unk>"``), as there.

Pre-tokenization is ``Metaspace`` by default: spaces become ``"▁"``, one is put in front,
and each ``"▁"`` starts a word, so a piece can hold a word's leading space but never span two
words. ``decode`` turns ``"▁"`` back into spaces and drops the first, so
``decode(encode(s).ids) == s`` whenever ``s`` has no leading space, no run of characters the
vocabulary cannot spell (without byte fallback) and nothing the normalizer changes.

Subword regularisation (Kudo 2018, section 2.3): with ``alpha`` set, :meth:`Unigram.encode`
draws a segmentation instead of taking the best one, with probability proportional to
``P(path) ** alpha`` over all paths, or, with ``nbest_size``, over the ``nbest_size`` best
ones, from a generator seeded with ``seed``. :meth:`Unigram.nbest` lists the best paths.
``tokenizers`` draws from an unseeded generator and scales the forward sums by ``alpha``
at every step (``alpha * (score + alpha_prev)``): the two agree at ``alpha = 1``; rowbook
samples from ``P(path) ** alpha`` exactly, as SentencePiece does.

A model read from a SentencePiece ``.model`` file (:mod:`rowbook.text.sentencepiece`) encodes
as ``sentencepiece`` does instead: whole normalized sentences, 32-bit path scores,
user-defined and unused pieces, unknown characters fused into one id (or spelled in bytes).

Examples
--------
>>> uni = Unigram.from_pieces([("<unk>", 0.0), ("▁", -2.0), ("▁the", -3.0), ("▁cat", -4.0),
...                            ("c", -5.0), ("a", -5.0), ("t", -5.0), ("s", -6.0)])
>>> e = uni.encode("the cats")
>>> e.tokens, e.ids, e.offsets
(['▁the', '▁cat', 's'], [2, 3, 7], [(0, 3), (3, 7), (7, 8)])
>>> uni.decode(e.ids), uni.encode("the dog").tokens
('the cats', ['▁the', '▁', 'dog'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.checks import InputTypeError, check_int, check_number
from rowbook.text.components import Metaspace
from rowbook.text.hf_files import TokenizerJsonFiles
from rowbook.text.postprocess import MetaspaceDecoder
from rowbook.text.sentencepiece.pieces import unknown_tokens
from rowbook.text.subword_pipeline import SubwordTokenizer
from rowbook.text.trie import build_trie, joined_codepoints
from rowbook.text.unigram import lattice
from rowbook.text.unigram.files import FILES
from rowbook.text.unigram.train import fit_unigram

__all__ = ["BYTE_PIECES", "Unigram"]

UNK_PENALTY = 10.0
#: The 256 byte pieces of byte fallback, ``<0x00>`` .. ``<0xFF>``.
BYTE_PIECES = tuple(f"<0x{b:02X}>" for b in range(256))
METASPACE = Metaspace()


class Unigram(SubwordTokenizer, TokenizerJsonFiles):
    """A Unigram tokenizer, learned with :meth:`fit` or read from a file.

    Parameters
    ----------
    normalizer : default None
        Applied to the text first (:mod:`rowbook.text.components`; ``None`` leaves it).
    pre_tokenizer : default Metaspace()
        Cuts the normalized text into words (``None``: the whole text is one word).
    unk_token : str, default "<unk>"
        The unknown piece :meth:`fit` puts first (a loaded file gives its own ``unk_id``).
    byte_fallback : bool, default False
        Spell unknown text in ``<0xXX>`` byte pieces (they must all be in the vocabulary).
    alpha : float, optional
        Sample segmentations with probability ``P ** alpha`` (subword regularisation).
    nbest_size : int, optional
        With ``alpha``: sample among the ``nbest_size`` best segmentations only.
    seed : int, optional
        Seed of the sampling.
    cache_size : int, default 100_000
        Words whose ids are kept (unused while sampling).
    """

    def __init__(
        self,
        *,
        normalizer: Any = None,
        pre_tokenizer: Any = METASPACE,
        unk_token: str = "<unk>",
        byte_fallback: bool = False,
        alpha: float | None = None,
        nbest_size: int | None = None,
        seed: int | None = None,
        cache_size: int = 100_000,
    ) -> None:
        if not isinstance(unk_token, str) or not unk_token:
            raise InputTypeError(f"unk_token must be a non-empty str, got {unk_token!r}")
        if not isinstance(byte_fallback, bool):
            raise InputTypeError(f"byte_fallback must be a bool, got {byte_fallback!r}")
        self.alpha = check_number("alpha", alpha, 0.0, allow_none=True)
        self.nbest_size = check_int("nbest_size", nbest_size, 1, allow_none=True)
        self.normalizer, self.pre_tokenizer = normalizer, pre_tokenizer
        self.unk_token, self.byte_fallback, self.seed = unk_token, byte_fallback, seed
        self.cache_size = check_int("cache_size", cache_size, 0)
        self.decoder = (
            MetaspaceDecoder(pre_tokenizer.replacement, pre_tokenizer.prepend_scheme)
            if isinstance(pre_tokenizer, Metaspace)
            else None
        )
        self._rng = np.random.default_rng(seed)
        self.mode = lattice.HF
        self._word_by_word = False  # a .model's: no piece joins two words

    # --------------------------------------------------------------- the model
    def _set_model(
        self,
        pieces: Sequence[tuple[str, float]],
        unk_id: int | None,
        added: Sequence[tuple[str, bool]] = (),
        kinds: Sequence[int] | None = None,
        model_size: int | None = None,
    ) -> None:
        """Install ``pieces`` (``(piece, score)`` in id order); ``kinds`` marks SentencePiece's
        user-defined (1), unused (2) and control (3) pieces."""
        scores = np.array([s for _, s in pieces], dtype=np.float64)  # (V,)
        if np.isnan(scores).any():
            bad = int(np.flatnonzero(np.isnan(scores))[0])
            raise ValueError(
                f"the score of piece {bad} ({pieces[bad][0]!r}) is NaN; every piece needs a "
                "finite score (a log-probability)"
            )
        if unk_id is not None and not 0 <= unk_id < len(pieces):
            raise ValueError(f"unk_id {unk_id} is out of range [0, {len(pieces)})")
        self._scores, self._unk_id = scores, unk_id
        self._kinds = (
            np.zeros(len(pieces), np.int8) if kinds is None else np.asarray(kinds, np.int8)
        )
        self._model_size = len(pieces) if model_size is None else model_size
        self._install([p for p, _ in pieces], added)

    def _on_install(self) -> None:
        size = self._model_size
        model = self._id_to_token[:size]
        kinds = np.append(self._kinds[:size], np.full(len(self) - size, lattice.NEVER, np.int8))
        if self.mode == lattice.SENTENCEPIECE:
            normal = self._scores[self._kinds[:size] == lattice.NORMAL]
            low = float(np.float32(normal.min())) if normal.size else 0.0
            unk_score = float(np.float32(low) - np.float32(UNK_PENALTY))
        else:
            unk_score = float(self._scores.min()) - UNK_PENALTY if size else -UNK_PENALTY
        self._model = (build_trie(model), self._scores, kinds, unk_score)
        self._byte_ids = (
            [self._vocab.get(b, -1) for b in BYTE_PIECES] if self.byte_fallback else None
        )
        self._job = (None, None)

    def _batch_job(self) -> Any:
        """The compiled job of a model read from a ``.model`` file
        (:mod:`rowbook.text.sentencepiece.batch`), for its normalizer; ``None`` when
        sampling, or with another normalizer or a pre-tokenizer."""
        from rowbook.text.sentencepiece.batch import unigram_job
        from rowbook.text.sentencepiece.normalizer import SentencePieceNormalizer

        if (
            self.mode != lattice.SENTENCEPIECE
            or self.alpha
            or self.pre_tokenizer is not None
            or not isinstance(self.normalizer, SentencePieceNormalizer)
        ):
            return None
        if self._job[0] is not self.normalizer:
            self._job = (self.normalizer, unigram_job(self, self._word_by_word))
        return self._job[1]

    @property
    def pieces(self) -> list[tuple[str, float]]:
        """``(piece, score)`` in id order."""
        self._check_fitted()
        return list(zip(self._id_to_token[: self._model_size], self._scores.tolist(), strict=True))

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown piece (``None``: unknown text is an error)."""
        self._check_fitted()
        return self._unk_id

    def _paths(self, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data, starts = joined_codepoints(words)
        if self.alpha:
            if self.nbest_size and self.nbest_size > 1:
                return self._nbest_sample(words)
            return lattice.sample_paths(
                data, starts, self._model, self._unk_id or 0, self.alpha, self._rng, self.mode
            )
        return lattice.viterbi(data, starts, self._model, self.mode)

    def _pieces_of(
        self, word: str, ids: list[int], pos: list[int]
    ) -> list[tuple[int, str, int, int]]:
        """``(id, token, start, end)`` of a path; unknown nodes fused and resolved. As in
        ``tokenizers``, the unknown piece itself matched in the text fuses with them too."""
        ends = [*pos[1:], len(word)]
        unk = self._unk_id if self.mode == lattice.HF else -1
        out: list[tuple[int, str, int, int]] = []
        k = 0
        while k < len(ids):
            if ids[k] >= 0 and ids[k] != unk:
                out.append((ids[k], self._id_to_token[ids[k]], pos[k], ends[k]))
                k += 1
                continue
            j = k
            while j + 1 < len(ids) and (ids[j + 1] < 0 or ids[j + 1] == unk):
                j += 1
            out += self._unknown(word, pos[k], ends[j])
            k = j + 1
        return out

    def _unknown(self, word: str, start: int, end: int) -> list[tuple[int, str, int, int]]:
        """Tokens of the unknown text ``word[start:end]``."""
        text = word[start:end]
        if self.mode == lattice.SENTENCEPIECE:
            return unknown_tokens(text, start, self._unk_id, self._byte_ids)
        if text in self._vocab and self._vocab[text] < self._model_size:
            return [(self._vocab[text], text, start, end)]
        if self._byte_ids is not None:
            data = text.encode("utf-8")
            if all(self._byte_ids[b] >= 0 for b in data):
                return [(self._byte_ids[b], BYTE_PIECES[b], start, end) for b in data]
        return [(self._require_unk(text), text, start, end)]

    def _require_unk(self, text: str) -> int:
        if self._unk_id is None:
            raise ValueError(
                f"{text!r} has no piece and this model has no unk_id; add an unknown "
                "piece (fit with unk_token=...) or use byte_fallback"
            )
        return self._unk_id

    def _encode_words(self, words: list[str]) -> list[tuple[int, ...]]:
        ids, pos, bounds = self._paths(words)
        ids, pos, bounds = ids.tolist(), pos.tolist(), bounds.tolist()
        out = []
        for w, word in enumerate(words):
            piece_ids = ids[bounds[w] : bounds[w + 1]]
            if min(piece_ids, default=0) >= 0 and (
                self._unk_id is None or self._unk_id not in piece_ids
            ):
                out.append(tuple(piece_ids))
            else:
                out.append(
                    tuple(
                        p[0]
                        for p in self._pieces_of(word, piece_ids, pos[bounds[w] : bounds[w + 1]])
                    )
                )
        return out

    def _segment_word(self, word: str) -> list[tuple[int, str, int, int]]:
        ids, pos, _ = self._paths([word])
        return self._pieces_of(word, ids.tolist(), pos.tolist())

    def _lookup(self, words: list[str]) -> dict[str, tuple[int, ...]]:
        if self.alpha:  # a new draw for every occurrence
            return _Draws(words, self._encode_words(words))
        return super()._lookup(words)

    # --------------------------------------------------------------- n-best
    def nbest(self, word: str, n: int) -> list[tuple[list[str], float]]:
        """The ``n`` best segmentations of one (normalized, pre-tokenized) word, best first,
        with their scores. Ties keep the order in which the segmentations are met."""
        from rowbook.text.unigram.nbest import nbest

        self._check_fitted()
        return nbest(self, word, check_int("n", n, 1))

    def _nbest_sample(self, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from rowbook.text.unigram.nbest import sample_nbest

        return sample_nbest(self, words, self.nbest_size, self.alpha, self._rng)

    # --------------------------------------------------------------- training and files
    fit = fit_unigram  # the trainer, its parameters in its own signature (``self`` its first)

    @classmethod
    def from_pieces(
        cls, pieces: Sequence[tuple[str, float]], *, unk_id: int | None = 0, **params: Any
    ) -> Unigram:
        """A tokenizer of ``(piece, score)`` pairs in id order; ``params`` as the constructor's."""
        uni = cls(**params)
        uni._set_model(list(pieces), unk_id)
        return uni

    _files = FILES  # where its files are read and written (TokenizerJsonFiles)

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {
            "normalizer": self.normalizer,
            "pre_tokenizer": self.pre_tokenizer,
            "unk_token": self.unk_token,
            "byte_fallback": self.byte_fallback,
            "alpha": self.alpha,
            "nbest_size": self.nbest_size,
            "seed": self.seed,
            "cache_size": self.cache_size,
        }

    def __repr__(self) -> str:
        return f"Unigram({len(self)} pieces)" if self._fitted else "Unigram(not fitted)"


class _Draws(dict):
    """Word -> ids for one call while sampling: each occurrence of a word gets its own draw."""

    def __init__(self, words: list[str], encoded: list[tuple[int, ...]]) -> None:
        super().__init__()
        self._queue: dict[str, list[tuple[int, ...]]] = {}
        for word, ids in zip(words, encoded, strict=True):
            self._queue.setdefault(word, []).append(ids)

    def __getitem__(self, word: str) -> tuple[int, ...]:
        return self._queue[word].pop(0)
