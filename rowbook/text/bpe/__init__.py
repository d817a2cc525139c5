"""Byte-level BPE, from the paper's algorithm to files ``tokenizers`` reads.

Read in this order, simple to complex: :mod:`~rowbook.text.bpe.classic` (Sennrich et
al.'s merge loop, the reference), :mod:`~rowbook.text.bpe.bytelevel` (GPT-2's byte
alphabet and pattern), :mod:`~rowbook.text.bpe.pretokenize` (text to words: special
tokens cut out, the prefix space, the split), :mod:`~rowbook.text.bpe.presplit` (GPT-2's
pattern compiled), :mod:`~rowbook.text.bpe.train` (the fast trainer held to the
reference), :mod:`~rowbook.text.bpe.merge_kernels` (applying merges),
:mod:`~rowbook.text.bpe.files` (``tokenizer.json``, GPT-2's vocab.json + merges.txt and
rowbook's BPE JSON), :mod:`~rowbook.text.bpe.options` (the trainer options),
:mod:`~rowbook.text.bpe.result` (:class:`Encoding`, with character offsets),
:mod:`~rowbook.text.bpe.word_cache` (each word's ids, compiled),
:mod:`~rowbook.text.bpe.encoder` (the state a fitted model encodes with: tables, word
cache, dropout), :mod:`~rowbook.text.bpe.count` (the pool of processes that counts and
encodes), :mod:`~rowbook.text.bpe.batch` (``encode_batch``) and
:mod:`~rowbook.text.bpe.model` (:class:`ByteLevelBPE`, the tokenizer users hold). Beside it,
:mod:`~rowbook.text.bpe.tiktoken_files` (tiktoken's ``.tiktoken`` rank files, read with
tiktoken's merge rule) and :mod:`~rowbook.text.bpe.fallback` (:class:`ByteFallbackBPE`, the
character-level BPE of Llama 2 / Mistral ``tokenizer.json`` files).
"""

from typing import TYPE_CHECKING, Any

from rowbook.text.bpe.bytelevel import GPT2_PATTERN
from rowbook.text.bpe.classic import MergeStep, learn_bpe, segment
from rowbook.text.bpe.model import ByteLevelBPE
from rowbook.text.bpe.result import Encoding

if TYPE_CHECKING:
    from rowbook.text.bpe.fallback import ByteFallbackBPE as ByteFallbackBPE


def __getattr__(name: str) -> Any:
    """``ByteFallbackBPE``, imported on first use: it is a
    :class:`~rowbook.text.subword_pipeline.SubwordTokenizer`, whose module imports parts of
    this package, so importing it here would close an import circle whenever the subword
    pipeline (WordPiece, Unigram, SentencePiece) is imported before this package."""
    if name == "ByteFallbackBPE":
        from rowbook.text.bpe.fallback import ByteFallbackBPE

        return ByteFallbackBPE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GPT2_PATTERN",
    "ByteFallbackBPE",
    "ByteLevelBPE",
    "Encoding",
    "MergeStep",
    "learn_bpe",
    "segment",
]
