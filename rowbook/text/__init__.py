"""Text to ids: normalize -> tokenize -> vocab -> NumPy int64 arrays.

The first four stages of the data flow. Nothing here depends on the autograd engine; the
int64 arrays it produces are what :class:`rowbook.nn.Embedding` looks up.
"""

from typing import TYPE_CHECKING

import lazy_loader

from rowbook.corpus_files import iter_lines

if TYPE_CHECKING:  # the names as editors see them; `as X`: re-exported
    from rowbook.text.bpe import GPT2_PATTERN as GPT2_PATTERN
    from rowbook.text.bpe import ByteFallbackBPE as ByteFallbackBPE
    from rowbook.text.bpe import ByteLevelBPE as ByteLevelBPE
    from rowbook.text.bpe import MergeStep as MergeStep
    from rowbook.text.bpe import learn_bpe as learn_bpe
    from rowbook.text.bpe import segment as segment
    from rowbook.text.normalize import Normalizer as Normalizer
    from rowbook.text.normalize import strip_accents as strip_accents
    from rowbook.text.pipeline import TextPipeline as TextPipeline
    from rowbook.text.sentencepiece import SentencePieceBPE as SentencePieceBPE
    from rowbook.text.sentencepiece import load_model as load_model
    from rowbook.text.tokenize import DEFAULT_WORD_PATTERN as DEFAULT_WORD_PATTERN
    from rowbook.text.tokenize import CharTokenizer as CharTokenizer
    from rowbook.text.tokenize import WordTokenizer as WordTokenizer
    from rowbook.text.unigram import Unigram as Unigram
    from rowbook.text.vocab import Vocab as Vocab
    from rowbook.text.wordpiece import WordPiece as WordPiece

#: Each name's module is imported when the name is first used (as :mod:`rowbook` does): a
#: module of one stage (``char_ngrams`` for the fastText models) does not load every
#: tokenizer (8 MB of resident memory).
__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submodules=[
        "bpe",
        "normalize",
        "pipeline",
        "sentencepiece",
        "tokenize",
        "unigram",
        "vocab",
        "wordpiece",
    ],
    submod_attrs={
        "bpe": [
            "GPT2_PATTERN",
            "ByteFallbackBPE",
            "ByteLevelBPE",
            "MergeStep",
            "learn_bpe",
            "segment",
        ],
        "normalize": ["Normalizer", "strip_accents"],
        "pipeline": ["TextPipeline"],
        "sentencepiece": ["SentencePieceBPE", "load_model"],
        "tokenize": ["DEFAULT_WORD_PATTERN", "CharTokenizer", "WordTokenizer"],
        "unigram": ["Unigram"],
        "vocab": ["Vocab"],
        "wordpiece": ["WordPiece"],
    },
)

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
    "segment",
    "strip_accents",
]
