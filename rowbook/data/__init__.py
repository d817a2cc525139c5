"""Data preparation for the word-vector trainers: corpus reading, the vocabulary, sampling,
co-occurrences."""

from typing import TYPE_CHECKING

import lazy_loader

from rowbook.data.corpus import Corpus, iter_sentences, job_boundaries, read_corpus
from rowbook.data.counted_vocab import CountedVocab, truncate_vocab
from rowbook.data.huffman import huffman_tree
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.sampling import (
    draw_negative,
    job_seed,
    keep_probabilities,
    lcg_next,
    negative_guide,
    negative_table,
    sample_thresholds,
    window_bounds,
)

if TYPE_CHECKING:
    from rowbook.data.cooccurrence import (
        cooccurrence_matrix,
        cooccurrence_pairs_reference,
        count_cooccurrences,
    )
    from rowbook.data.cooccurrence_file import (
        CountedCooccurrence,
        load_cooccurrence,
        save_cooccurrence,
    )

# GloVe's co-occurrence counting builds SciPy sparse matrices: imported when first used.
__getattr__, _, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "cooccurrence": [
            "cooccurrence_matrix",
            "cooccurrence_pairs_reference",
            "count_cooccurrences",
        ],
        "cooccurrence_file": ["CountedCooccurrence", "load_cooccurrence", "save_cooccurrence"],
    },
)

__all__ = [
    "Corpus",
    "CountedCooccurrence",
    "CountedVocab",
    "EncodedCorpus",
    "cooccurrence_matrix",
    "cooccurrence_pairs_reference",
    "count_cooccurrences",
    "draw_negative",
    "huffman_tree",
    "iter_sentences",
    "job_boundaries",
    "job_seed",
    "keep_probabilities",
    "lcg_next",
    "load_cooccurrence",
    "negative_guide",
    "negative_table",
    "read_corpus",
    "sample_thresholds",
    "save_cooccurrence",
    "truncate_vocab",
    "window_bounds",
]
