"""Unigram, SentencePiece's default subword model: :mod:`~rowbook.text.unigram.lattice` (the numba
kernels: Viterbi, two best paths, sampling), :mod:`~rowbook.text.unigram.em` (training's
E-step on every core), :mod:`~rowbook.text.unigram.prune` (training's pruning step),
:mod:`~rowbook.text.unigram.nbest`,
:mod:`~rowbook.text.unigram.model` (:class:`Unigram`, encoding as ``tokenizers`` does),
:mod:`~rowbook.text.unigram.seeds` (the seed pieces and the words' lattices from a suffix array),
:mod:`~rowbook.text.unigram.train` (``tokenizers``' ``UnigramTrainer``) and
:mod:`~rowbook.text.unigram.files` (``tokenizer.json``).
"""

from rowbook.text.unigram.model import Unigram

__all__ = ["Unigram"]
