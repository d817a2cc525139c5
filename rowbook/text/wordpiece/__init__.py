"""WordPiece, BERT's subword tokenizer: :mod:`~rowbook.text.wordpiece.model` (encoding, the kernel
and ``tokenizers``' loop it is held to), :mod:`~rowbook.text.wordpiece.train` (``tokenizers``'
``WordPieceTrainer``) and :mod:`~rowbook.text.wordpiece.files` (``tokenizer.json``, ``vocab.txt``).
"""

from rowbook.text.wordpiece.model import WordPiece
from rowbook.text.wordpiece.train import BERT_SPECIAL_TOKENS, learn_wordpiece

__all__ = ["BERT_SPECIAL_TOKENS", "WordPiece", "learn_wordpiece"]
