"""TextPipeline: normalize -> tokenize -> vocab -> int64 ids, one object, one fit.

The three stages before the embedding lookup, as in the cat sat on the mat example. With a
word or character tokenizer, a :class:`~rowbook.text.Vocab` numbers the tokens (``<pad>`` = 0,
``<unk>`` = 1, ...). With a :class:`~rowbook.text.ByteLevelBPE` and no vocab, the BPE's
own ids are used and its ``"<pad>"`` special token (if any) pads batches; the same for a
:class:`~rowbook.text.WordPiece` (``"[PAD]"``), :class:`~rowbook.text.Unigram` or
:class:`~rowbook.text.SentencePieceBPE`.

Examples
--------
>>> from rowbook.text import Normalizer, WordTokenizer, Vocab
>>> pipe = TextPipeline(Normalizer(case="lower", strip=True), WordTokenizer(), Vocab())
>>> pipe = pipe.fit(["The cat sat on the mat"])
>>> pipe.encode("The cat sat on the mat")
array([2, 3, 4, 5, 2, 6])
>>> ids, mask = pipe.encode_batch(["the cat", "a mat sat"])
>>> ids
array([[2, 3, 0],
       [1, 6, 4]])
>>> mask.astype(int)
array([[1, 1, 0],
       [1, 1, 1]])
>>> pipe.decode(ids[0])
'the cat'

:meth:`TextPipeline.save` keeps all three stages in one JSON file, so text encodes the
same way after :meth:`TextPipeline.load`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from rowbook.checks import InputTypeError
from rowbook.corpus_files import iter_lines, source_files
from rowbook.io import read_json, write_json
from rowbook.text import pipeline_file
from rowbook.text.bpe.model import ByteLevelBPE
from rowbook.text.normalize import Normalizer
from rowbook.text.subword_pipeline import SubwordTokenizer
from rowbook.text.tokenize import CharTokenizer, WordTokenizer
from rowbook.text.vocab import Vocab

__all__ = ["TextPipeline"]

Tokenizer = WordTokenizer | CharTokenizer | ByteLevelBPE | SubwordTokenizer
_SUBWORD = (ByteLevelBPE, SubwordTokenizer)  # number their own tokens
_AUTO_PROGRESS_BYTES = 32 * 2**20
_AUTO_PROGRESS_TEXTS = 100_000


class TextPipeline:
    """Normalizer, tokenizer and vocabulary applied in order; outputs NumPy int64 ids.

    Parameters
    ----------
    normalizer : Normalizer or None, default None
        Applied first; ``None`` leaves text unchanged.
    tokenizer : WordTokenizer, CharTokenizer, ByteLevelBPE, WordPiece, Unigram, SentencePieceBPE or None
        ``None`` means ``WordTokenizer()``.
    vocab : Vocab or None, default None
        Numbers the tokens. ``None`` means ``Vocab()`` for a word or character tokenizer,
        and the subword tokenizer's own ids otherwise.

    Notes
    -----
    :meth:`fit` fits the components that are not fitted yet (an unfitted BPE, then the
    vocabulary) and keeps already fitted ones, such as a loaded ``tokenizer.json``.
    """

    def __init__(
        self,
        normalizer: Normalizer | None = None,
        tokenizer: Tokenizer | None = None,
        vocab: Vocab | None = None,
    ) -> None:
        if normalizer is not None and not callable(normalizer):
            raise InputTypeError(
                f"normalizer must be a Normalizer (or a callable str -> str) or None, "
                f"got {type(normalizer).__name__}"
            )
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise InputTypeError(
                "tokenizer must be a WordTokenizer, CharTokenizer, ByteLevelBPE, WordPiece, "
                f"Unigram or SentencePieceBPE, got {type(tokenizer).__name__}"
            )
        if vocab is not None and not isinstance(vocab, Vocab):
            raise InputTypeError(f"vocab must be a Vocab or None, got {type(vocab).__name__}")
        self.normalizer, self.tokenizer, self.vocab = normalizer, tokenizer, vocab
        self._fitted = False

    # ----------------------------------------------------------------- fitting
    def fit(
        self,
        texts: Iterable[str] | os.PathLike,
        *,
        errors: Literal["strict", "replace"] = "strict",
        show_progress: bool | None = None,
        **tokenizer_fit: Any,
    ) -> TextPipeline:
        """Fit the unfitted components on ``texts``.

        Parameters
        ----------
        texts : Iterable[str], os.PathLike or list of os.PathLike
            The corpus, or UTF-8 text files (a ``pathlib.Path`` to a file or a folder, or a
            list of them; gzip, bzip2 and xz are read transparently) read line by line,
            one text per line, never loaded whole (a line over 1 MiB comes as several
            texts, see :mod:`rowbook.corpus_files`). A one-shot iterator works when only
            one pass is needed (not both a BPE and a vocabulary to fit).
        errors : {"strict", "replace"}, default "strict"
            Invalid UTF-8 in a corpus file: ``ValueError`` with its byte offset, or U+FFFD.
        show_progress : bool or None, default None
            Progress bars; ``None`` shows them for files over 32 MiB or over 100,000 texts.
        **tokenizer_fit
            Passed to ``ByteLevelBPE.fit`` when the BPE is fitted here, e.g.
            ``vocab_size=8000, special_tokens=["<pad>"]``.
        """
        tokenizer = self.tokenizer if self.tokenizer is not None else WordTokenizer()
        bpe_to_fit = isinstance(tokenizer, _SUBWORD) and not tokenizer._fitted
        vocab = self.vocab
        if vocab is None and not isinstance(tokenizer, _SUBWORD):
            vocab = Vocab()
        vocab_to_fit = vocab is not None and vocab._itos is None
        if tokenizer_fit and not bpe_to_fit:
            raise InputTypeError(
                f"unexpected keyword arguments {sorted(tokenizer_fit)}: they go to the fit of a "
                "subword tokenizer, and no unfitted subword tokenizer (ByteLevelBPE, WordPiece, "
                "Unigram) is in this pipeline"
            )
        passes = _corpus_passes(texts, errors, show_progress, bpe_to_fit + vocab_to_fit)
        if bpe_to_fit:
            tokenizer.fit(map(self._normalize, passes()), show_progress=False, **tokenizer_fit)
        if vocab_to_fit:
            vocab.fit(tokenizer.tokenize(self._normalize(t)) for t in passes())
        self._tokenizer, self._vocab, self._fitted = tokenizer, vocab, True
        return self

    def _normalize(self, text: str) -> str:
        if not isinstance(text, str):
            raise InputTypeError(f"texts must be str, got {type(text).__name__}")
        return self.normalizer(text) if self.normalizer is not None else text

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise ValueError("this TextPipeline is not fitted yet: call fit(texts) first")

    @property
    def tokenizer_(self) -> Tokenizer:
        """The tokenizer in use after :meth:`fit` (the given one, or the default)."""
        self._check_fitted()
        return self._tokenizer

    @property
    def vocab_(self) -> Vocab | None:
        """The fitted vocabulary (``None`` when BPE ids are used directly)."""
        self._check_fitted()
        return self._vocab

    @property
    def pad_id(self) -> int | None:
        """Id used for padding: the vocab's pad id, or the BPE's ``"<pad>"`` special token."""
        self._check_fitted()
        if self._vocab is not None:
            return self._vocab.pad_id
        vocab = self._tokenizer.vocab  # specials, or a SentencePiece model's <pad> control piece
        return vocab.get("<pad>", vocab.get("[PAD]"))

    @property
    def vocab_size(self) -> int:
        """Number of distinct ids (the row count of an embedding table for them)."""
        self._check_fitted()
        return len(self._vocab if self._vocab is not None else self._tokenizer)

    # ----------------------------------------------------------------- encoding
    def tokenize(self, text: str) -> list[str]:
        """Normalized tokens of ``text``."""
        self._check_fitted()
        return self._tokenizer.tokenize(self._normalize(text))

    def encode(self, text: str) -> np.ndarray:
        """``(T,)`` int64 ids of one text."""
        self._check_fitted()
        if self._vocab is None:
            return np.array(self._tokenizer.encode(self._normalize(text)).ids, dtype=np.int64)
        return self._vocab.encode(self.tokenize(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        max_length: int | None = None,
        padding: Literal["longest", "max_length"] = "longest",
        truncation: bool = True,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Ids of several texts, padded into one array.

        Parameters
        ----------
        texts : Sequence[str]
        max_length : int or None
            Longest allowed sequence (required for ``padding="max_length"``).
        padding : {"longest", "max_length"}, default "longest"
            Pad to the longest sequence of the batch (at most ``max_length``), or to
            exactly ``max_length``.
        truncation : bool, default True
            Cut sequences longer than ``max_length``; with ``False`` they are an error.

        Returns
        -------
        ids : np.ndarray
            ``(B, T)`` int64, padded with :attr:`pad_id`.
        mask : np.ndarray
            ``(B, T)`` bool, True on real tokens.
        """
        if isinstance(texts, str):
            raise InputTypeError(
                "encode_batch expects a sequence of str; for one text use encode()"
            )
        if padding not in ("longest", "max_length"):
            raise ValueError(f"padding must be 'longest' or 'max_length', got {padding!r}")
        if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
            raise ValueError(f"max_length must be None or an int >= 1, got {max_length!r}")
        if padding == "max_length" and max_length is None:
            raise ValueError(
                "padding='max_length' needs max_length; pass max_length=... or padding='longest'"
            )
        seqs = self._encode_all(texts)
        lengths = [len(s) for s in seqs]
        if max_length is not None and not truncation:
            long = [(i, n) for i, n in enumerate(lengths) if n > max_length]
            if long:
                raise ValueError(
                    f"text {long[0][0]} has {long[0][1]} tokens > max_length={max_length}; "
                    "pass truncation=True or a larger max_length"
                )
        width = max(lengths, default=0) if padding == "longest" else max_length
        width = min(width, max_length) if max_length is not None else width
        if any(n < width for n in lengths) and self.pad_id is None:
            raise ValueError(
                "the batch needs padding but there is no pad id: use a Vocab with a "
                "pad_token, or a subword tokenizer with a '<pad>' or '[PAD]' token "
                "(fit it with special_tokens=['<pad>'])"
            )
        ids = np.full((len(seqs), width), self.pad_id or 0, dtype=np.int64)  # (B, T)
        mask = np.zeros((len(seqs), width), dtype=bool)  # (B, T)
        for i, s in enumerate(seqs):
            n = min(len(s), width)
            ids[i, :n], mask[i, :n] = s[:n], True
        return ids, mask

    def _encode_all(self, texts: Sequence[str]) -> list[Sequence[int]]:
        """The ids of each text: a byte-level BPE's own ``encode_batch`` (each distinct word
        encoded once, on every core) when its ids are the pipeline's, else text by text."""
        self._check_fitted()
        if self._vocab is None and isinstance(self._tokenizer, ByteLevelBPE):
            normalized = [self._normalize(t) for t in texts]
            return [e.ids for e in self._tokenizer.encode_batch(normalized)]
        return [self.encode(t) for t in texts]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of one sequence of ids, padding dropped (word tokens are joined by spaces)."""
        self._check_fitted()
        ids = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids), dtype=np.int64)
        if ids.ndim != 1:
            raise ValueError(
                f"decode takes one sequence (1-d ids), got shape {ids.shape}; "
                "use decode_batch for a (B, T) array"
            )
        if self.pad_id is not None:
            ids = ids[ids != self.pad_id]
        if self._vocab is None:
            return self._tokenizer.decode(ids, skip_special_tokens=False)
        return self._tokenizer.detokenize(self._vocab.decode(ids))

    def decode_batch(self, ids: np.ndarray, mask: np.ndarray | None = None) -> list[str]:
        """Texts of a ``(B, T)`` id array (positions where ``mask`` is False are skipped)."""
        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"decode_batch takes (B, T) ids, got shape {ids.shape}")
        if mask is not None and np.shape(mask) != ids.shape:
            raise ValueError(f"mask shape {np.shape(mask)} differs from ids shape {ids.shape}")
        rows = (
            ids
            if mask is None
            else [row[m] for row, m in zip(ids, np.asarray(mask, bool), strict=True)]
        )
        return [self.decode(row) for row in rows]

    # ----------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        """The pipeline as one versioned JSON document (:mod:`rowbook.text.pipeline_file`):
        the fitted parts once fitted, else the settings :meth:`fit` starts from."""
        if self._fitted:
            return pipeline_file.to_dict(self.normalizer, self._tokenizer, self._vocab)
        return pipeline_file.to_dict(self.normalizer, self.tokenizer, self.vocab, fitted=False)

    @classmethod
    def from_dict(cls, d: Any, where: str = "text pipeline data") -> TextPipeline:
        """The pipeline :meth:`to_dict` described, fitted if it was; errors name ``where``."""
        normalizer, tokenizer, vocab, fitted = pipeline_file.from_dict(d, where)
        pipe = cls(normalizer, tokenizer, vocab)
        if fitted:
            pipe._tokenizer, pipe._vocab, pipe._fitted = tokenizer, vocab, True
        return pipe

    def save(self, path: str | os.PathLike) -> None:
        """Write the normalizer settings, the tokenizer (with a BPE's merges and specials)
        and the vocabulary to one versioned JSON file, atomically (see
        :mod:`rowbook.text.pipeline_file` for the layout)."""
        self._check_fitted()
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> TextPipeline:
        """Read a file written by :meth:`save`: a fitted pipeline that encodes as the saved
        one did. Every field is checked; errors name the file and the field."""
        return cls.from_dict(read_json(path, "text pipeline"), f"text pipeline file {path}")

    def __repr__(self) -> str:
        return f"TextPipeline({self.normalizer!r}, {self.tokenizer!r}, {self.vocab!r})"


def _corpus_passes(
    texts: Any, errors: str, show_progress: bool | None, n_passes: int
) -> Callable[[], Iterator[str]]:
    """A function returning a fresh iterator over the corpus at each call."""
    if isinstance(texts, str):
        raise InputTypeError(
            "texts is a str: pass a list of texts, or pathlib.Path(...) for a corpus file"
        )
    if isinstance(texts, os.PathLike) or (
        isinstance(texts, list | tuple) and texts and all(isinstance(t, os.PathLike) for t in texts)
    ):
        size = sum(f.stat().st_size for f in source_files(texts) if not isinstance(f, str))
        show = size > _AUTO_PROGRESS_BYTES if show_progress is None else show_progress
        return lambda: iter_lines(texts, errors=errors, show_progress=show)
    if not isinstance(texts, Iterable):
        raise InputTypeError(
            f"texts must be an iterable of str or a path, got {type(texts).__name__}"
        )
    if iter(texts) is texts and n_passes > 1:
        raise InputTypeError(
            "texts is a one-shot iterator but fitting both the BPE and the vocabulary "
            "reads the corpus twice: pass a list or a pathlib.Path"
        )
    total = len(texts) if isinstance(texts, Sequence) else None
    show = (total or 0) > _AUTO_PROGRESS_TEXTS if show_progress is None else show_progress
    return lambda: iter(tqdm(texts, total=total, unit="text", disable=not show))
