"""Optimizers for dense and row-sparse gradients, in order of increasing state.

``SGD`` (no state, or a momentum buffer), ``Adagrad`` and ``RowWiseAdagrad`` (an
accumulator per element or per row), ``Adam`` / ``AdamW`` (two moments, dense
gradients only) and ``SparseAdam`` (two moments, updated lazily on the rows a
row-sparse gradient names). ``OptimizerChain`` steps several over disjoint parameters
as one (SparseAdam on a table, Adam on the rest). Built with ``row_stats=True``, each
keeps per-row telemetry (:class:`RowStats`: update counts, gradient norms, last step,
distance travelled).
"""

from rowbook.optim.adagrad import Adagrad, RowWiseAdagrad
from rowbook.optim.adam import Adam, AdamW, SparseAdam
from rowbook.optim.chain import OptimizerChain
from rowbook.optim.optimizer import Optimizer
from rowbook.optim.row_stats import RowStats
from rowbook.optim.sgd import SGD
from rowbook.optim.state import lazy_zeros, memmap_factory

__all__ = [
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "OptimizerChain",
    "RowStats",
    "RowWiseAdagrad",
    "SparseAdam",
    "lazy_zeros",
    "memmap_factory",
]
