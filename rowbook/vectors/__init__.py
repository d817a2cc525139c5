"""The query side of word vectors: :class:`Vectors`, its evaluation and its file formats.

One stored table and modules of functions over it; the classes' methods call them:

* :mod:`rowbook.vectors.table` -- :class:`~rowbook.vectors.table.KeyedTable`, the one store:
  keys, rows, norms, counts, lookup, files, and the rows every query reads;
* :mod:`rowbook.vectors.keys` -- the checks of keys, counts and storage type;
* :mod:`rowbook.vectors.pairs` -- pairwise questions: similarity, distances, ranks, means;
* :mod:`rowbook.vectors.queries` -- neighbours (3CosAdd, 3CosMul), analogies, batches, the index;
* :mod:`rowbook.vectors.edit` -- building and editing: ``add_vectors``, ``table[key] = v``;
* :mod:`rowbook.vectors.searchable` -- :class:`~rowbook.vectors.searchable.SearchableTable`:
  the table with the queries as methods (what float and quantised tables share);
* :mod:`rowbook.vectors.core` -- :class:`Vectors`: a searchable float table that can be
  edited, quantised and pruned;
* :mod:`rowbook.vectors.neighbors` -- the array math (3CosAdd, 3CosMul, top-k);
* :mod:`rowbook.vectors.evaluate` -- analogy and word-pair benchmarks, gensim's conventions;
* :mod:`rowbook.vectors.compare` -- two tables side by side: Procrustes alignment, the words
  that moved, neighbour overlap;
* :mod:`rowbook.vectors.formats` -- word2vec text/binary, GloVe (rows parsed by
  :mod:`rowbook.vectors.word2vec_reader`); ``.npz`` in :mod:`rowbook.vectors.npz`;
* :mod:`rowbook.vectors.subword_bags` -- the bags of n-gram rows of a fastText table;
* :mod:`rowbook.vectors.subword` -- :class:`SubwordVectors`: a vector for any word from its n-grams;
* :mod:`rowbook.vectors.fasttext_format` -- Facebook fastText ``.bin`` files;
* :mod:`rowbook.vectors.mapped` -- opening big files mapped, the conversion cache;
* :mod:`rowbook.vectors.prune` -- keeping the most frequent keys (and their n-gram buckets);
* :mod:`rowbook.vectors.quantize` -- :class:`QuantizedVectors`: int8 and product-quantised rows.
"""

from typing import TYPE_CHECKING

import lazy_loader

from rowbook.vectors.compare import Comparison, compare
from rowbook.vectors.core import Vectors
from rowbook.vectors.evaluate import evaluate_analogies, evaluate_word_pairs

if TYPE_CHECKING:
    from rowbook.vectors.quantize import QuantizedVectors
    from rowbook.vectors.subword import SubwordVectors

# SubwordVectors sums n-gram rows with rowbook.nn's bag kernels, the quantised tables need
# their kernels: imported when first used.
__getattr__, _, _ = lazy_loader.attach(
    __name__, submod_attrs={"subword": ["SubwordVectors"], "quantize": ["QuantizedVectors"]}
)

__all__ = [
    "Comparison",
    "QuantizedVectors",
    "SubwordVectors",
    "Vectors",
    "compare",
    "evaluate_analogies",
    "evaluate_word_pairs",
]
