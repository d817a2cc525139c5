"""A generated corpus with planted morphology, for checking that subword vectors learn.

Made-up stems (consonant-vowel syllables and a final consonant: ``bazalop``) take the
suffixes ``""``, ``s``, ``ed``, ``ing``. Each sentence mixes two or three inflections of
one stem, two or three of the stem's four *partner* words (the stem reversed plus a digit,
so they share no n-gram with it) and two inflected words of random stems, shuffled. So
the forms of a stem share both a meaning (the partners they appear with) and their
n-grams, while ``stem + "er"`` never occurs: a subword model should place those unseen
inflections next to their stems, and a model without subwords has no vector for them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HELD_OUT_SUFFIX", "SUFFIXES", "made_up_stems", "morphology_corpus", "partners"]

SUFFIXES = ("", "s", "ed", "ing")
HELD_OUT_SUFFIX = "er"  # never in the corpus
_CONSONANTS, _VOWELS = tuple("bcdfghjklmnprstvz"), tuple("aeiou")


def made_up_stems(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct stems of 2-3 consonant-vowel syllables plus a consonant, sorted.

    Examples
    --------
    >>> made_up_stems(3)
    ['nigebab', 'romives', 'sovin']
    """
    rng = np.random.default_rng(seed)
    stems: set[str] = set()
    while len(stems) < n:
        syllables = [
            str(rng.choice(_CONSONANTS)) + str(rng.choice(_VOWELS))
            for _ in range(rng.integers(2, 4))
        ]
        stems.add("".join(syllables) + str(rng.choice(_CONSONANTS)))
    return sorted(stems)


def partners(stem: str) -> list[str]:
    """The four words ``stem`` keeps company with: its reversal and a digit.

    Examples
    --------
    >>> partners("zalef")
    ['felaz0', 'felaz1', 'felaz2', 'felaz3']
    """
    return [f"{stem[::-1]}{k}" for k in range(4)]


def morphology_corpus(n_stems: int = 120, sentences: int = 3000, seed: int = 0) -> list[list[str]]:
    """Sentences of the planted-morphology corpus described in the module docstring.

    Examples
    --------
    >>> corpus = morphology_corpus(n_stems=3, sentences=2)
    >>> len(corpus), all(not w.endswith("er") for s in corpus for w in s)
    (2, True)
    """
    rng = np.random.default_rng(seed)
    stems = made_up_stems(n_stems, seed)
    corpus = []
    for _ in range(sentences):
        stem = stems[rng.integers(len(stems))]
        words = [
            stem + SUFFIXES[k] for k in rng.integers(0, len(SUFFIXES), size=rng.integers(2, 4))
        ]
        words += [partners(stem)[k] for k in rng.integers(0, 4, size=rng.integers(2, 4))]
        words += [
            stems[k] + SUFFIXES[x]
            for k, x in zip(
                rng.integers(0, n_stems, size=2),
                rng.integers(0, len(SUFFIXES), size=2),
                strict=True,
            )
        ]
        corpus.append([words[i] for i in rng.permutation(len(words))])
    return corpus
