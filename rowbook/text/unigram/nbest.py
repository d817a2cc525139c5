"""The n best segmentations of a word, and sampling among them (``nbest_size`` > 1).

A k-best Viterbi: every position keeps its ``n`` best partial paths (score, last piece,
where it came from); a position's candidates are every kept path of every position a piece
ending here starts at, plus that piece. Positions are few (one word), so this is plain
Python. ``tokenizers`` and SentencePiece find the same paths with an A* search; where two
paths tie, their order is the order in which they are met here (theirs follows the heap).

Sampling among them (``sample_nbest``) draws one of the ``n`` best with probability
proportional to ``exp(alpha * score)``, as both libraries do.

Examples
--------
>>> from rowbook.text.unigram import Unigram
>>> uni = Unigram.from_pieces([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5)],
...                           pre_tokenizer=None)
>>> [(pieces, round(score, 2)) for pieces, score in uni.nbest("ab", 3)]
[(['ab'], -1.5), (['a', 'b'], -2.0)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.text.trie import codepoints
from rowbook.text.unigram import lattice

__all__ = ["nbest", "sample_nbest"]


def _lattice_nodes(model: Any, word: str) -> list[tuple[int, int, int, float]]:
    """``(begin, end, id or -1, score)`` of every node of ``word``'s lattice."""
    trie, scores, kinds, unk_score = model._model
    data = codepoints(word)
    nodes = lattice._nodes(data, 0, data.size, trie, kinds, -1)
    return [
        (
            begin,
            end,
            -1 if unknown else token,
            lattice._node_score(data, 0, node, scores, kinds, unk_score, model.mode),
        )
        for node, (begin, end, token, unknown) in zip(nodes, nodes.tolist(), strict=True)
    ]


def _paths(model: Any, word: str, n: int) -> list[tuple[float, list[tuple[int, int, int]]]]:
    """The ``n`` best ``(score, [(id, begin, end), ...])`` of ``word``."""
    ending: dict[int, list[tuple[int, int, int, float]]] = {}
    for node in _lattice_nodes(model, word):
        ending.setdefault(node[1], []).append(node)
    kept: list[list[tuple[float, list[tuple[int, int, int]]]]] = [[(0.0, [])]]
    for k in range(1, len(word) + 1):
        candidates = []
        for begin, end, token, score in ending.get(k, []):
            for before, path in kept[begin]:
                candidates.append((before + score, [*path, (token, begin, end)]))
        order = sorted(range(len(candidates)), key=lambda i: -candidates[i][0])  # stable on ties
        kept.append([candidates[i] for i in order[:n]])
    return kept[len(word)] if word else [(0.0, [])]


def nbest(model: Any, word: str, n: int) -> list[tuple[list[str], float]]:
    """The ``n`` best segmentations of ``word`` as token lists, with their scores."""
    out = []
    for score, path in _paths(model, word, n):
        ids = [token for token, _, _ in path]
        pos = [begin for _, begin, _ in path]
        out.append(([t for _, t, _, _ in model._pieces_of(word, ids, pos)], score))
    return out


def sample_nbest(
    model: Any, words: list[str], n: int, alpha: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One of the ``n`` best paths of each word, drawn with probability ``exp(alpha * score)``,
    in :func:`rowbook.text.unigram.lattice.viterbi`'s layout."""
    ids, pos, bounds = [], [], [0]
    for word in words:
        paths = _paths(model, word, n)
        scores = np.array([alpha * s for s, _ in paths])
        p = np.exp(scores - scores.max())
        path = paths[int(rng.choice(len(paths), p=p / p.sum()))][1]
        ids += [token for token, _, _ in path]
        pos += [begin for _, begin, _ in path]
        bounds.append(len(ids))
    return np.array(ids, np.int64), np.array(pos, np.int64), np.array(bounds, np.int64)
