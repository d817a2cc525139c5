"""SentencePiece's ``.model`` files and the two models they hold, encoding as ``sentencepiece`` does:
:mod:`~rowbook.text.sentencepiece.proto` (the protobuf), :mod:`~rowbook.text.sentencepiece.charsmap`
(the precompiled normalization rules), :mod:`~rowbook.text.sentencepiece.normalizer` (whitespace,
dummy prefix, decoding), :mod:`~rowbook.text.sentencepiece.pieces`,
:mod:`~rowbook.text.sentencepiece.bpe` (:class:`SentencePieceBPE`),
:mod:`~rowbook.text.sentencepiece.files` (the file read into its parts, and written),
:mod:`~rowbook.text.sentencepiece.loading` (:func:`load_model`; Unigram models become a
:class:`~rowbook.text.Unigram`) and :mod:`~rowbook.text.sentencepiece.batch` (many texts
through a model in one compiled pass, on every core).
"""

from rowbook.text.sentencepiece.bpe import SentencePieceBPE
from rowbook.text.sentencepiece.files import save_model
from rowbook.text.sentencepiece.loading import load_model

__all__ = ["SentencePieceBPE", "load_model", "save_model"]
