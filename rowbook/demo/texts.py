"""The demo's built-in text: a short paragraph for BPE, and generated sentences for the
language models (tiny grammars, so a model that learns can be seen to learn).

:func:`slot_sentences` is the corpus of the neural language model's geometry claim: words
of one kind (days, months, countries) fill the same slots of the same templates, so a model
that predicts the next word has every reason to give them nearby rows, and none to give
them nearby rows across kinds (each kind is followed by words of its own).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BPE_PAPER_CORPUS", "PARAGRAPH", "SLOT_WORDS", "slot_sentences", "toy_sentences"]

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


#: The words of each slot of :func:`slot_sentences`, by kind.
SLOT_WORDS = {
    "day": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "month": (
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ),
    "country": ("france", "spain", "italy", "germany", "japan", "egypt", "peru", "canada"),
}
# Each kind has templates of its own: the words after a slot depend only on its kind.
_SLOT_TEMPLATES = (
    ("day", "on {} morning we walked"),
    ("day", "see you {} morning then"),
    ("day", "every {} evening he runs"),
    ("month", "in {} the rain came"),
    ("month", "last {} the river rose"),
    ("month", "by {} the snow melts"),
    ("country", "she lives in {} now"),
    ("country", "he drove to {} alone"),
    ("country", "we flew to {} again"),
)


def slot_sentences(n: int, *, seed: int = 0) -> list[str]:
    """``n`` sentences from templates whose one slot takes a word of one kind (``SLOT_WORDS``).

    A template and the slot's word are drawn uniformly: within a kind, the words are used
    exactly alike.

    >>> slot_sentences(3, seed=0)
    ['he drove to egypt alone', 'last april the river rose', 'every monday evening he runs']
    """
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(n):
        kind, template = _SLOT_TEMPLATES[rng.integers(len(_SLOT_TEMPLATES))]
        words = SLOT_WORDS[kind]
        sentences.append(template.format(words[rng.integers(len(words))]))
    return sentences
