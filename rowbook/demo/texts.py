"""The demo's built-in text: a short paragraph for BPE, and generated sentences for the
language model (a tiny grammar, so a model that learns can be seen to learn)."""

from __future__ import annotations

import numpy as np

__all__ = ["BPE_PAPER_CORPUS", "PARAGRAPH", "toy_sentences"]

#: The word counts of the toy example in Sennrich, Haddow and Birch (2016).
BPE_PAPER_CORPUS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}

#: Written for rowbook: what an embedding table is, in plain words.
PARAGRAPH = """\
An embedding table keeps one row for every token in the vocabulary.
Looking up a token reads its row; looking up a sentence reads one row per token.
The rows start as random numbers, and training nudges the rows of the tokens it reads.
Tokens that keep the same company end up with rows that point the same way.
Reading a row gives the same numbers as multiplying a one-hot vector by the table,
but reading is faster, and the gradient of a lookup touches only the rows it read,
so the update can leave every other row of the table alone.
"""

_SUBJECTS = (
    "the cat",
    "the dog",
    "a small bird",
    "the old king",
    "the queen",
    "my friend",
    "the children",
)
_VERBS = ("sat on", "ran to", "looked at", "slept by", "sang to", "waited near")
_OBJECTS = ("the mat", "the door", "a tall tree", "the red hat", "the river", "the garden wall")
_ENDINGS = (".", " again.", " all day.", " at night.")


def toy_sentences(n: int, *, seed: int = 0) -> list[str]:
    """``n`` sentences "subject verb object ending", each part drawn uniformly.

    >>> toy_sentences(2, seed=0)
    ['my friend slept by the red hat again.', 'a small bird sat on the mat.']
    """
    rng = np.random.default_rng(seed)
    parts = (_SUBJECTS, _VERBS, _OBJECTS)
    sentences = []
    for _ in range(n):
        words = " ".join(p[rng.integers(len(p))] for p in parts)
        sentences.append(words + _ENDINGS[rng.integers(len(_ENDINGS))])
    return sentences
