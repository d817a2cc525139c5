"""fastText's supervised mode: a text classifier on a bag of word and n-gram rows.

======================  ====================================================================
module                  what it holds
======================  ====================================================================
``model``               :class:`FastTextClassifier`: parameters, ``fit`` / ``train`` / resume,
                        the saved state's hooks; the mixins below give the rest of its methods
``state``               what a fitted model holds, saved and read back; its learned attributes
``training``            the words and labels chosen, the first rows, an epoch as jobs
``prediction``          the best labels of each line, fastText's test figures, the confusion table;
                        the methods that answer with them (``predict``, ``test``, ...)
``metrics``             fastText's ``Meter`` (precision, recall, F1 per label and overall)
``kernels``             the compiled update, the derivation written out, and the pieces that
                        prediction shares (the mean row, a row's score, the tables)
``prediction_kernels``  the compiled prediction: the ``k`` best labels in fastText's order
``reference``           the plain-Python update the kernels are held to
``quantize``            ``fasttext quantize``: the cut-off, retraining, product quantisation
``files``               fastText's ``.bin`` / ``.ftz`` both ways (``save_fasttext``,
                        ``load_fasttext``, ``quantize``), pretrained rows
``autotune``            fastText's parameter search on validation lines
======================  ====================================================================

The textbook classifiers built on the autograd engine (:class:`~rowbook.TextClassifier`, a
mean of embeddings and a linear layer trained by backpropagation, and
:class:`~rowbook.LSTMClassifier`) live in :mod:`rowbook.models.classifier`: the same idea
as this model's default, written as a network, slower but open to any layer.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "model": ["FastTextClassifier"],
        "prediction": ["Confusion", "TestResult"],
    },
)
