"""Generated word-vector tables with the geometry real ones have, for tests and benchmarks.

:func:`clustered_vectors` draws each row as a sum of four parts, each a Gaussian in one
random orthonormal basis with a spectrum falling as ``j ** -0.5`` (a word-vector table's
covariance has a few strong directions and a long tail):

* a **common direction** shared by every row (15 % of the expected squared norm): trained
  tables have a non-zero mean;
* a **topic** (25 %) and a **sub-topic** (20 %): about ``n / 500`` topics of 8 sub-topics,
  rows spread over the sub-topics by a Zipf-like law (weight ``1 / sqrt(rank)``);
* the row's **own** part (40 %);

then scaled by a log-normal norm (sigma 0.3), as frequent and rare words differ in length.
Calibrated against word2vec vectors trained on NewsArticles (19,392 x 300): there the
nearest neighbour's cosine is 0.90 and the 10th 0.87, the median pair 0.60, faiss's product
quantiser at 1/20 of the bytes keeps recall@10 0.76 scored by cosine; here, at 100,000 x
300, 0.75, 0.68, 0.16 and 0.80. The neighbourhoods are less tight than in a small corpus's
table (whose rows share one strong direction) and as hard for a quantiser, which is what a
benchmark of quantisation needs. Rows are made a block at a time (bounded scratch).

Examples
--------
>>> table = clustered_vectors(1000, 16, seed=0)
>>> table.shape, table.dtype
((1000, 16), dtype('float32'))
"""

from __future__ import annotations

import numpy as np

from rowbook.checks import check_int, check_number

__all__ = ["clustered_vectors"]

_SHARES = (0.15, 0.25, 0.20, 0.40)  # common direction, topic, sub-topic, own part
_SUBTOPICS = 8  # per topic
_BLOCK = 1 << 16  # rows drawn at a time


def clustered_vectors(
    n: int, d: int, *, seed: int = 0, topics: int | None = None, noise: float | None = None
) -> np.ndarray:
    """``(n, d)`` float32 rows with clustered, anisotropic structure (see the module docstring).

    ``noise`` is the share of the row's own part (default 0.4); the three shared parts
    fill the rest in their proportions. More noise: looser neighbourhoods, harder for an
    index (the tests and ``benchmarks/bench_index.py`` use 0.2, 0.4 and 0.6).
    """
    n, d = check_int("n", n, 1), check_int("d", d, 1)
    topics = check_int("topics", topics, 1, allow_none=True) or max(4, n // 500)
    shares = list(_SHARES)
    if noise is not None:
        noise = check_number("noise", noise, 0.0, 1.0)
        shares = [share * (1 - noise) / (1 - _SHARES[3]) for share in _SHARES[:3]] + [noise]
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)  # (d, d)
    spectrum = np.arange(1, d + 1, dtype=np.float32) ** -0.5
    spectrum /= np.sqrt((spectrum**2).sum())  # a draw's expected squared norm is 1

    def draw(rows: int, share: float) -> np.ndarray:  # (rows, d)
        return (
            rng.standard_normal((rows, d), dtype=np.float32) * (spectrum * np.sqrt(share))
        ) @ basis.T

    common = draw(1, 1.0)[0]
    common *= np.sqrt(shares[0]) / np.linalg.norm(common)  # (d,)
    topic = draw(topics, shares[1])  # (T, d)
    subtopic = draw(topics * _SUBTOPICS, shares[2])  # (T * 8, d)
    weights = 1 / np.sqrt(np.arange(1, len(subtopic) + 1))
    which = rng.choice(len(subtopic), n, p=weights / weights.sum())  # (n,)
    norms = rng.lognormal(0.0, 0.3, n).astype(np.float32)  # (n,)
    out = np.empty((n, d), dtype=np.float32)
    for start in range(0, n, _BLOCK):
        part = which[start : start + _BLOCK]
        rows = common + topic[part // _SUBTOPICS] + subtopic[part] + draw(len(part), shares[3])
        out[start : start + len(part)] = rows * norms[start : start + len(part), None]
    return out
