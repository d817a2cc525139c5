"""Choosing the next token from a language model's logits: temperature, top-k, top-p.

The steps and their order are Hugging Face ``generate``'s logits warpers: divide by the
temperature, keep the ``top_k`` highest scores (ties with the k-th kept), then keep the
smallest set of tokens whose probabilities add up to ``top_p`` (nucleus sampling,
Holtzman et al. 2020; at least one token), and draw from the softmax of what is left.
A temperature of 0 takes the highest score (greedy decoding).
"""

from __future__ import annotations

import numpy as np

from rowbook.checks import check_int, check_number

__all__ = ["check_sampling", "choose_token", "filter_logits"]


def check_sampling(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """Each setting in its range, or a :class:`~rowbook.checks.ParameterError` naming it."""
    check_number("temperature", temperature, 0.0)
    check_int("top_k", top_k, 1, allow_none=True)
    check_number("top_p", top_p, 0.0, 1.0, low_open=True, allow_none=True)


def filter_logits(
    logits: np.ndarray, temperature: float, top_k: int | None = None, top_p: float | None = None
) -> np.ndarray:
    """``(V,)`` float64 scores after the warpers; removed tokens get ``-inf``.

    Examples
    --------
    >>> np.exp(filter_logits(np.log([0.5, 0.3, 0.15, 0.05]), 1.0, top_p=0.75)).round(2)
    array([0.5, 0.3, 0. , 0. ])
    >>> filter_logits(np.array([1.0, 3.0, 2.0]), 1.0, top_k=2)
    array([-inf,   3.,   2.])
    """
    scores = np.asarray(logits, dtype=np.float64) / (temperature if temperature > 0 else 1.0)
    if top_k is not None and top_k < scores.size:
        kth = np.partition(scores, -top_k)[-top_k]
        scores = np.where(scores < kth, -np.inf, scores)
    if top_p is not None and top_p < 1.0:
        order = np.argsort(scores, kind="stable")  # ascending, as the warper sorts
        probs = np.exp(scores[order] - scores[order[-1]])
        cumulative = np.cumsum(probs / probs.sum())
        drop = cumulative <= 1 - top_p
        drop[-1] = False  # the most likely token always stays
        scores = scores.copy()
        scores[order[drop]] = -np.inf
    return scores


def choose_token(
    logits: np.ndarray,
    rng: np.random.Generator,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> int:
    """The next token id: the argmax at temperature 0, else a draw from the filtered softmax.

    >>> choose_token(np.array([0.1, 2.0, 0.3]), np.random.default_rng(0), temperature=0)
    1
    """
    if temperature == 0:
        return int(np.argmax(logits))
    scores = filter_logits(logits, temperature, top_k, top_p)
    probs = np.exp(scores - scores.max())
    return int(rng.choice(probs.size, p=probs / probs.sum()))
