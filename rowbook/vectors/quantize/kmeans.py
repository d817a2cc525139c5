"""k-means for the product quantiser: seeded, reproducible, one numba kernel for assignment.

Lloyd's algorithm as fastText (``ProductQuantizer::kmeans``) and faiss (``Clustering``)
run it for codebooks: ``k`` distinct training points as the first centroids, then
``niter`` rounds of

* **assign** (E-step): each point to its nearest centroid, ``argmin_j |x - c_j|^2``,
  computed as ``argmin_j (|c_j|^2 - 2 x . c_j)`` (``|x|^2`` is the same for every j);
* **update** (M-step): each centroid to the mean of its points; a centroid left without
  points takes half of a large cluster (a copy of its centroid nudged by ``+-eps``
  coordinate by coordinate, the two halves nudged apart), as both tools do.

Rounds stop early when no point changes cluster and no cluster is empty: the centroids
are then a fixed point and further rounds would not change them, so the result is the
one ``niter`` full rounds give. Everything random (the sample, the first centroids, the
cluster to split) comes from one ``numpy.random.Generator``: the same seed gives the same
codebook on every machine.

The assignment kernel (:func:`nearest_centroids`) serves both training and encoding: it
takes the points of several sub-spaces at once (the columns ``offsets[m]:offsets[m + 1]``
of each row) so that encoding reads each row once. :func:`nearest_centroids_reference`
is the same computation in NumPy, which the tests hold the kernel to.
"""

from __future__ import annotations

import numba
import numpy as np

from rowbook.checks import check_int

__all__ = ["kmeans", "nearest_centroids", "nearest_centroids_reference"]

_EPS = np.float32(1e-7)  # the nudge of a split centroid (fastText's eps_)


@numba.njit(cache=True, nogil=True, fastmath=True)
def _nearest_kernel(x, offsets, centroids_t, sq_norms, codes):  # pragma: no cover - compiled
    """codes[i, m] = argmin_j sq_norms[m, j] - 2 x[i, sub-space m] . c_{m, j}.

    ``centroids_t`` (dim, ksub) holds in rows ``offsets[m]:offsets[m + 1]`` the centroids of
    sub-space m transposed, so the inner loop runs over the k centroids (vectorised).
    """
    k = sq_norms.shape[1]
    acc = np.empty(k, dtype=np.float32)
    for i in range(x.shape[0]):
        for m in range(offsets.shape[0] - 1):
            start, width = offsets[m], offsets[m + 1] - offsets[m]
            for j in range(k):
                acc[j] = sq_norms[m, j]
            for t in range(start, start + width):
                v = np.float32(-2.0) * x[i, t]
                for j in range(k):
                    acc[j] += v * centroids_t[t, j]
            # argmin in two steps that vectorise: the minimum of each block of 16 (the first
            # block holding the overall minimum wins), then the first index in it holding
            # that value; measured 2.2x faster than one loop with a branch per centroid
            best, block, step = np.float32(np.inf), 0, 16 if k % 16 == 0 else k
            for b in range(0, k, step):
                low = acc[b]
                if step == 16:  # a fixed trip count: unrolled and vectorised
                    for j in range(b + 1, b + 16):
                        low = min(low, acc[j])
                else:  # fewer than 16 centroids (nbits < 4)
                    for j in range(b + 1, k):
                        low = min(low, acc[j])
                if low < best:
                    best, block = low, b
            arg = block
            while acc[arg] > best:
                arg += 1
            codes[i, m] = arg


def transposed_layout(centroids: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(offsets, centroids_t, sq_norms)`` for :func:`nearest_centroids` from per-sub-space
    centroids ``[(k, w_0), (k, w_1), ...]``: the columns each sub-space covers, its centroids
    transposed one under the other (dim, k), and their squared norms (M, k)."""
    offsets = np.concatenate([[0], np.cumsum([c.shape[1] for c in centroids])]).astype(np.int64)
    stacked_t = np.concatenate([c.T for c in centroids]).astype(np.float32)  # (dim, k)
    sq_norms = np.stack([(c.astype(np.float32) ** 2).sum(axis=1) for c in centroids])  # (M, k)
    return offsets, np.ascontiguousarray(stacked_t), sq_norms.astype(np.float32)


def nearest_centroids(
    x: np.ndarray, layout: tuple[np.ndarray, np.ndarray, np.ndarray], codes: np.ndarray
) -> np.ndarray:
    """Fill ``codes`` (n, M) with, for each row of ``x`` (n, dim) and sub-space m, its nearest
    centroid, ``layout`` being :func:`transposed_layout`'s. Returns ``codes``."""
    offsets, centroids_t, sq_norms = layout
    _nearest_kernel(
        np.ascontiguousarray(x, dtype=np.float32), offsets, centroids_t, sq_norms, codes
    )
    return codes


def nearest_centroids_reference(x: np.ndarray, centroids: list[np.ndarray]) -> np.ndarray:
    """:func:`nearest_centroids` in NumPy: squared distances (n, k) per sub-space, then argmin.

    Examples
    --------
    >>> x = np.array([[0.0, 0.1, 5.0], [1.0, 0.9, -5.0]], dtype=np.float32)
    >>> nearest_centroids_reference(x, [np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[5.0], [-5.0]])])
    array([[0, 0],
           [1, 1]])
    """
    codes, start = np.empty((len(x), len(centroids)), dtype=np.int64), 0
    for m, c in enumerate(centroids):
        part = x[:, start : start + c.shape[1]].astype(np.float64)  # (n, w)
        codes[:, m] = ((part[:, None, :] - c[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        start += c.shape[1]
    return codes


def kmeans(x: np.ndarray, k: int, *, niter: int = 25, rng: np.random.Generator) -> np.ndarray:
    """``k`` centroids (k, d) float32 of the rows of ``x`` (n >= k, d) by Lloyd's algorithm.

    Examples
    --------
    >>> x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.0, 5.1]], dtype=np.float32)
    >>> c = kmeans(x, 2, rng=np.random.default_rng(0))
    >>> c[np.argsort(c[:, 0])].round(2)
    array([[0.05, 0.  ],
           [5.  , 5.05]], dtype=float32)
    """
    x = np.ascontiguousarray(x, dtype=np.float32)  # (n, d)
    n, d = x.shape
    check_int("niter", niter, 1)
    if n < k:
        raise ValueError(
            f"k-means needs at least k={k} points to start from, got {n}; "
            "use fewer centroids (a smaller nbits) or more rows"
        )
    centroids = x[rng.choice(n, k, replace=False)].copy()  # (k, d)
    codes = np.full((n, 1), -1, dtype=np.int64)
    for _ in range(niter):
        previous = codes.copy()
        nearest_centroids(x, transposed_layout([centroids]), codes)
        counts = np.bincount(codes[:, 0], minlength=k)  # (k,)
        if (codes == previous).all() and counts.all():
            break  # a fixed point: more rounds change nothing
        columns = [np.bincount(codes[:, 0], weights=x[:, t], minlength=k) for t in range(d)]
        sums = np.stack(columns, axis=1)  # (k, d) float64
        filled = counts > 0
        centroids[filled] = (sums[filled] / counts[filled, None]).astype(np.float32)
        _split_into_empty(centroids, counts, rng)
    return centroids


def _split_into_empty(centroids: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> None:
    """Give each empty cluster half of a cluster drawn with probability ~ its size - 1."""
    sign = np.where(np.arange(centroids.shape[1]) % 2 == 1, 1, -1).astype(np.float32)  # (d,)
    for empty in np.flatnonzero(counts == 0):
        weights = np.maximum(counts - 1, 0).astype(np.float64)
        if weights.sum() == 0:  # every cluster holds one point (repeated rows): nothing to split
            continue
        donor = int(rng.choice(len(counts), p=weights / weights.sum()))
        centroids[empty] = centroids[donor] + sign * _EPS
        centroids[donor] -= sign * _EPS
        counts[empty] = counts[donor] // 2
        counts[donor] -= counts[empty]
