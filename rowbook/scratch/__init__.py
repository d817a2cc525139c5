"""Before the library: embeddings from scratch, in plain Python floats and lists.

Read in this order, each file in one sitting:

1. :mod:`~rowbook.scratch.value`: ``Value``, a number that remembers how it was made;
   reverse-mode autograd in one class.
2. :mod:`~rowbook.scratch.table`: ``EmbeddingTable``, a table of rows looked up by id,
   whose backward (a scatter-add into the rows looked up) is written by hand.
3. :mod:`~rowbook.scratch.mlp`: a fully connected layer and binary cross entropy on Values.
4. :mod:`~rowbook.scratch.color_harmony`: the colour-harmony example trained end to end
   on the three.

Nothing here uses NumPy; the tests hold every gradient to :mod:`rowbook.autograd`'s and
PyTorch's.
"""

from rowbook.scratch.color_harmony import ScratchHarmonyNet, harmony_pairs, train_color_harmony
from rowbook.scratch.mlp import Linear, bce_with_logits, sgd_step, zero_grad
from rowbook.scratch.table import EmbeddingTable
from rowbook.scratch.value import Value

__all__ = [
    "EmbeddingTable",
    "Linear",
    "ScratchHarmonyNet",
    "Value",
    "bce_with_logits",
    "harmony_pairs",
    "sgd_step",
    "train_color_harmony",
    "zero_grad",
]
