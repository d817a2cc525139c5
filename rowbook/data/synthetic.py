"""A generated corpus with planted structure, for checking that word vectors learn.

Eight people words carry three binary attributes (gender, royal or common, adult or
young), each expressed by context words: ``king`` appears with one of he/his/him, one
of palace/crown/throne and one of old/wise/rule. Countries appear with country words
and their own marker (``france`` with ``french``), capitals with city words and the
same marker. Filler words pad every sentence and the order is shuffled.

So ``queen - king`` points along gender exactly as ``woman - man`` does, and
``paris - france`` is the country-to-capital offset shared by all eight pairs: a model
that learns from co-occurrence answers the analogies of :func:`planted_analogies`, one
that does not (random or broken updates) answers almost none.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["CAPITALS", "PEOPLE", "planted_analogies", "planted_corpus"]

PEOPLE = {  # word: (gender, rank, age)
    "king": ("male", "royal", "adult"),
    "queen": ("female", "royal", "adult"),
    "prince": ("male", "royal", "young"),
    "princess": ("female", "royal", "young"),
    "man": ("male", "common", "adult"),
    "woman": ("female", "common", "adult"),
    "boy": ("male", "common", "young"),
    "girl": ("female", "common", "young"),
}
_ATTRIBUTE_WORDS = {
    "male": ("he", "his", "him"),
    "female": ("she", "her", "hers"),
    "royal": ("palace", "crown", "throne"),
    "common": ("street", "market", "farm"),
    "adult": ("old", "wise", "rule"),
    "young": ("small", "play", "school"),
}
CAPITALS = {  # country: (capital, marker)
    "france": ("paris", "french"),
    "germany": ("berlin", "german"),
    "italy": ("rome", "italian"),
    "spain": ("madrid", "spanish"),
    "japan": ("tokyo", "japanese"),
    "egypt": ("cairo", "arabic"),
    "russia": ("moscow", "russian"),
    "greece": ("athens", "greek"),
}
_COUNTRY_WORDS = ("country", "nation", "border")
_CITY_WORDS = ("city", "mayor", "downtown")
_FILLER = ("the", "a", "of", "and", "to", "in", "was", "with", "on", "at", "for", "by")


def planted_corpus(
    n_sentences: int = 5000, *, seed: int = 0, fillers: int = 2, noise: int = 1
) -> list[list[str]]:
    """``n_sentences`` shuffled sentences about people (half) and countries or capitals.

    Each sentence also gets ``noise`` words drawn uniformly from all the content words,
    so that every pair co-occurs a little (GloVe learns nothing from pairs that never
    co-occur: zero counts are not in its loss).

    Examples
    --------
    >>> corpus = planted_corpus(4, seed=0)
    >>> len(corpus), all(len(s) == 7 for s in corpus)
    (4, True)
    """
    rng = np.random.default_rng(seed)
    people, countries = list(PEOPLE), list(CAPITALS)
    content = _content_words()
    corpus = []
    for _ in range(n_sentences):
        if rng.random() < 0.5:
            word = people[rng.integers(len(people))]
            words = [word] + [_pick(rng, _ATTRIBUTE_WORDS[a]) for a in PEOPLE[word]]
        else:
            country = countries[rng.integers(len(countries))]
            capital, marker = CAPITALS[country]
            if rng.random() < 0.5:
                words = [country, marker, _pick(rng, _COUNTRY_WORDS)]
            else:
                words = [capital, marker, _pick(rng, _CITY_WORDS)]
        words += [_pick(rng, _FILLER) for _ in range(4 + fillers - len(words))]
        words += [_pick(rng, content) for _ in range(noise)]
        corpus.append([words[i] for i in rng.permutation(len(words))])
    return corpus


def _content_words() -> tuple[str, ...]:
    words = [*PEOPLE, *itertools.chain(*_ATTRIBUTE_WORDS.values()), *_COUNTRY_WORDS, *_CITY_WORDS]
    for country, (capital, marker) in CAPITALS.items():
        words += [country, capital, marker]
    return tuple(words)


def _pick(rng: np.random.Generator, words: tuple[str, ...]) -> str:
    return words[rng.integers(len(words))]


def planted_analogies() -> list[tuple[str, str, str, str]]:
    """``(a, b, c, d)`` meaning "a is to b as c is to d", every one true by construction.

    Examples
    --------
    >>> qs = planted_analogies()
    >>> ("king", "queen", "man", "woman") in qs, ("france", "paris", "japan", "tokyo") in qs
    (True, True)
    """
    out = []
    for axis in range(3):  # pairs of people differing in exactly this attribute
        pairs = [
            (a, b)
            for a, b in itertools.permutations(PEOPLE, 2)
            if _differs_only_in(PEOPLE[a], PEOPLE[b], axis)
        ]
        out += [
            (a, b, c, d)
            for (a, b), (c, d) in itertools.permutations(pairs, 2)
            if {a, b}.isdisjoint({c, d}) and PEOPLE[a][axis] == PEOPLE[c][axis]
        ]
    capitals = [(country, capital) for country, (capital, _) in CAPITALS.items()]
    out += [(a, b, c, d) for (a, b), (c, d) in itertools.permutations(capitals, 2)]
    return out


def _differs_only_in(x: tuple[str, ...], y: tuple[str, ...], axis: int) -> bool:
    return all((x[k] != y[k]) == (k == axis) for k in range(3))
