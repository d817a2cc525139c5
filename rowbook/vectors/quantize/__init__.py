"""Quantised tables: rows in a few bytes, queries answered from the codes, the cost measured.

* :mod:`~rowbook.vectors.quantize.kmeans` -- seeded k-means, one numba assignment kernel;
* :mod:`~rowbook.vectors.quantize.pq` -- :class:`ProductQuantizer`, fastText's layout;
* :mod:`~rowbook.vectors.quantize.matrix` -- :class:`QuantizedMatrix`: rows as codes, decoded
  on the fly, scored by the asymmetric distance; its two forms,
  :mod:`~rowbook.vectors.quantize.int8` (:class:`Int8Matrix`) and
  :mod:`~rowbook.vectors.quantize.pqmatrix` (:class:`PQMatrix`, fastText's ``QuantMatrix``);
* :mod:`~rowbook.vectors.quantize.table` -- :class:`QuantizedVectors`, re-ranking against the
  float table mapped from disk, and :class:`QuantizedSubwordVectors` (fastText), with their file;
* :mod:`~rowbook.vectors.quantize.cost` -- quantising a table (``Vectors.quantize``) and
  :class:`QuantizationCost`: bytes, recall@10, evaluation changes.

**One product quantiser.** fastText quantises its supervised models (``.ftz``) with a
product quantiser (``src/productquantizer.{h,cc}``, used by ``src/quantmatrix.{h,cc}``), and
word-vector tables need one too. rowbook has one class, :class:`ProductQuantizer`, laid out
as fastText's: ``dim`` cut into ``nsubq`` sub-spaces of width ``dsub`` except a last one of
``lastdsub``, ``ksub = 2**nbits`` centroids each, the centroids stored sub-space after
sub-space in one float32 array, norms quantised apart by a second, one-dimensional
quantiser (``qnorm``). So the codes and codebooks of an ``.ftz`` are read and written by
this class (:meth:`ProductQuantizer.from_fasttext_bytes`,
:meth:`PQMatrix.from_fasttext_bytes <rowbook.vectors.quantize.pqmatrix.PQMatrix>`) and a
quantised classifier can reuse :class:`PQMatrix` as its input table. Reading fastText's
codebooks needs decoding only; training them is rowbook's own k-means
(:mod:`~rowbook.vectors.quantize.kmeans`), seeded and reproducible, with fastText's and
faiss's settings (25 rounds, at most 256 training points per centroid, seed 1234), not
fastText's ``minstd_rand`` stream, so codebooks agree with fastText's in quality, not bit
for bit. Two extensions fastText lacks: ``m=`` sub-spaces of widths differing by one (a
300-d table in 120 bytes), and ``nbits`` below 8.
"""

from rowbook.vectors.quantize.cost import QuantizationCost
from rowbook.vectors.quantize.int8 import Int8Matrix
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.pq import ProductQuantizer
from rowbook.vectors.quantize.pqmatrix import PQMatrix
from rowbook.vectors.quantize.table import QuantizedSubwordVectors, QuantizedVectors

__all__ = [
    "Int8Matrix",
    "PQMatrix",
    "ProductQuantizer",
    "QuantizationCost",
    "QuantizedMatrix",
    "QuantizedSubwordVectors",
    "QuantizedVectors",
]
