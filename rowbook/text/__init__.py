"""Text to ids: normalize -> tokenize -> vocab -> NumPy int64 arrays.

The first four stages of the data flow. Nothing here depends on the autograd engine; the
int64 arrays it produces are what :class:`rowbook.nn.Embedding` looks up.
"""

from rowbook.corpus_files import iter_lines
from rowbook.text.bpe import (
    GPT2_PATTERN,
    ByteFallbackBPE,
    ByteLevelBPE,
    MergeStep,
    learn_bpe,
    segment,
)
from rowbook.text.loading import load_tokenizer
from rowbook.text.normalize import Normalizer, strip_accents
from rowbook.text.pipeline import TextPipeline
from rowbook.text.sentencepiece import SentencePieceBPE, load_model
from rowbook.text.tokenize import DEFAULT_WORD_PATTERN, CharTokenizer, WordTokenizer
from rowbook.text.unigram import Unigram
from rowbook.text.vocab import Vocab
from rowbook.text.wordpiece import WordPiece

__all__ = [
    "DEFAULT_WORD_PATTERN",
    "GPT2_PATTERN",
    "ByteFallbackBPE",
    "ByteLevelBPE",
    "CharTokenizer",
    "MergeStep",
    "Normalizer",
    "SentencePieceBPE",
    "TextPipeline",
    "Unigram",
    "Vocab",
    "WordPiece",
    "WordTokenizer",
    "iter_lines",
    "learn_bpe",
    "load_model",
    "load_tokenizer",
    "segment",
    "strip_accents",
]
