"""The product quantiser: rows cut into sub-spaces, each sub-vector coded by its nearest centroid.

A row ``x`` of ``dim`` values is cut into ``M`` sub-vectors of consecutive coordinates
(widths ``w_0 .. w_{M-1}``, summing to ``dim``). Sub-space m has ``ksub = 2**nbits``
centroids ``c_{m,0..ksub-1}`` learned by k-means on the training rows' sub-vectors; a row
is stored as M codes, ``code_m = argmin_j |x_m - c_{m,j}|^2``, and decoded as the
concatenation of its centroids, ``x^ = [c_{0,code_0}, ..., c_{M-1,code_{M-1}}]``. With
``nbits=8`` a row costs M bytes instead of ``4 * dim``.

**Asymmetric distance** (Jegou et al. 2011): a query ``q`` is not quantised. Its inner
products with every centroid are one table ``T[m, j] = q_m . c_{m,j}`` (M x ksub), and
then ``q . x^ = sum_m T[m, code_m]``: M table reads per row, no row decoded.

The layout is fastText's (``src/productquantizer.{h,cc}``), so the same class reads and
writes the codebooks of fastText's ``.ftz`` files: ``dim``, ``nsubq`` (= M), ``dsub``
(the width of every sub-space but the last) and ``lastdsub`` (the last one's width, where
``dim`` is not a multiple of ``dsub``), then ``dim * ksub`` float32 centroids, sub-space
after sub-space, each a (ksub, w_m) row-major block (``get_centroids(m, i)``). A quantiser
built from ``m=`` may use widths fastText cannot express (``dim=300, m=120``: sixty
sub-spaces of 3 and sixty of 2); it is stored as its list of widths and refuses to be
written as fastText bytes. See :mod:`rowbook.vectors.quantize` for why one class serves both.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any, Self

import numpy as np

from rowbook.checks import NotFittedError, ParameterError, check_int
from rowbook.vectors.quantize.kmeans import kmeans, nearest_centroids, transposed_layout

__all__ = ["ProductQuantizer", "check_float32_field"]

_FASTTEXT_HEAD = struct.Struct("<4i")  # dim, nsubq, dsub, lastdsub
_ENCODE_ROWS = 1 << 14  # rows encoded per kernel call: a bounded float32 copy of the input


class ProductQuantizer:
    """A product quantiser with fastText's layout: fit codebooks, encode rows, decode codes.

    Parameters
    ----------
    m : int, optional
        Number of sub-spaces M (bytes per row with ``nbits=8``). Where ``dim`` is not a
        multiple, the first ``dim % m`` sub-spaces are one coordinate wider.
    dsub : int, optional
        Width of each sub-space instead of their number, as fastText's ``-dsub`` (default
        there: 2): ``ceil(dim / dsub)`` sub-spaces, the last one ``dim % dsub`` wide if that
        is not 0. Give ``m`` or ``dsub``, not both.
    nbits : int, default 8
        Bits per code: ``2**nbits`` centroids per sub-space (1 to 8; codes are one byte each).
    niter : int, default 25
        k-means rounds (fastText's and faiss's default).
    max_points_per_centroid : int, default 256
        Training rows sampled: at most this many per centroid (fastText's and faiss's 256).
    seed : int, default 1234
        Seed of the sample, the first centroids and the split of empty clusters.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((1000, 6)).astype(np.float32)
    >>> pq = ProductQuantizer(m=3, nbits=4).fit(x)
    >>> pq.widths, pq.ksub, pq.encode(x[:2]).shape
    ((2, 2, 2), 16, (2, 3))
    >>> codes = pq.encode(x[:5])
    >>> q = rng.standard_normal(6).astype(np.float32)
    >>> bool(np.allclose(pq.inner_products(q[None], codes)[0], pq.decode(codes) @ q, atol=1e-5))
    True
    """

    def __init__(
        self,
        *,
        m: int | None = None,
        dsub: int | None = None,
        nbits: int = 8,
        niter: int = 25,
        max_points_per_centroid: int = 256,
        seed: int = 1234,
    ) -> None:
        if (m is None) == (dsub is None):
            raise ParameterError(
                "m",
                m,
                "an integer >= 1 when dsub is None",
                fix="give the number of sub-spaces m=, or their width dsub= (fastText's), not both",
            )
        self.m = check_int("m", m, 1, allow_none=True)
        self.dsub = check_int("dsub", dsub, 1, allow_none=True)
        self.nbits = check_int("nbits", nbits, 1)
        if self.nbits > 8:
            raise ParameterError("nbits", nbits, "an integer from 1 to 8 (one byte per code)")
        self.niter = check_int("niter", niter, 1)
        self.max_points_per_centroid = check_int(
            "max_points_per_centroid", max_points_per_centroid, 1
        )
        self.seed = check_int("seed", seed)
        self._widths: tuple[int, ...] | None = None
        self._centroids: np.ndarray | None = None  # (ksub * dim,) float32, fastText's order

    # -- the layout ----------------------------------------------------------------------

    @property
    def ksub(self) -> int:
        """Centroids per sub-space, ``2**nbits``."""
        return 1 << self.nbits

    @property
    def widths(self) -> tuple[int, ...]:
        """Width of each sub-space (sums to ``dim``)."""
        return self._fitted()[0]

    @property
    def dim(self) -> int:
        return sum(self.widths)

    @property
    def nsubq(self) -> int:
        """Number of sub-spaces M (fastText's name)."""
        return len(self.widths)

    @property
    def offsets(self) -> np.ndarray:
        """``(M + 1,)`` first coordinate of each sub-space, then ``dim``."""
        return np.concatenate([[0], np.cumsum(self.widths)]).astype(np.int64)

    @property
    def centroids(self) -> np.ndarray:
        """All centroids, ``(ksub * dim,)`` float32 in fastText's order (read-only)."""
        return self._fitted()[1]

    def centroids_of(self, m: int) -> np.ndarray:
        """The ``(ksub, w_m)`` centroids of sub-space ``m`` (a read-only view)."""
        start, width = self.ksub * int(self.offsets[m]), self.widths[m]
        return self.centroids[start : start + self.ksub * width].reshape(self.ksub, width)

    @property
    def nbytes(self) -> int:
        """Bytes of the codebook (the centroids)."""
        return self.centroids.nbytes

    def _fitted(self) -> tuple[tuple[int, ...], np.ndarray]:
        if self._widths is None or self._centroids is None:
            raise NotFittedError(
                "this ProductQuantizer is not fitted yet; call fit(rows) before "
                "encoding or decoding, or build one with from_centroids"
            )
        return self._widths, self._centroids

    def _split(self, dim: int) -> tuple[int, ...]:
        """Widths of the sub-spaces of ``dim`` coordinates, from ``m`` or fastText's ``dsub``."""
        if self.dsub is not None:
            nsubq, last = -(-dim // self.dsub), dim % self.dsub or self.dsub
            return (self.dsub,) * (nsubq - 1) + (last,)
        if self.m > dim:
            raise ParameterError("m", self.m, f"at most dim={dim} (one coordinate per sub-space)")
        narrow, wide = divmod(dim, self.m)
        return (narrow + 1,) * wide + (narrow,) * (self.m - wide)

    # -- learning ------------------------------------------------------------------------

    def fit(self, x: np.ndarray) -> Self:
        """Learn the codebooks from the rows of ``x`` (n, dim), n >= ``ksub``."""
        x = _check_rows(x, "x")
        n, dim = x.shape
        if n < self.ksub:
            raise ParameterError(
                "nbits",
                self.nbits,
                f"at most log2({n}) for {n} rows",
                fix=f"k-means needs at least 2**nbits = {self.ksub} rows to start "
                "from; use a smaller nbits or int8",
            )
        widths = self._split(dim)
        ids = self.sample_ids(n)
        sample = x if len(ids) == n else x[ids]  # (s, dim)
        rng = np.random.default_rng([self.seed, 1])  # first centroids, splits of empty clusters
        offsets, parts = np.cumsum((0, *widths)), []
        for start, stop in itertools.pairwise(offsets):
            parts.append(kmeans(sample[:, start:stop], self.ksub, niter=self.niter, rng=rng))
        self._widths = widths
        self._centroids = _read_only(np.concatenate([c.ravel() for c in parts]))
        return self

    def sample_ids(self, n: int) -> np.ndarray:
        """Sorted ids of the rows :meth:`fit` trains on out of ``n``: all of them, or a seeded
        sample of ``max_points_per_centroid * ksub`` (so a caller can prepare just those rows)."""
        most = self.max_points_per_centroid * self.ksub
        if n <= most:
            return np.arange(n)
        return np.sort(np.random.default_rng([self.seed, 0]).choice(n, most, replace=False))

    @classmethod
    def from_centroids(
        cls, widths: tuple[int, ...] | list[int], centroids: np.ndarray, nbits: int = 8
    ) -> ProductQuantizer:
        """A fitted quantiser from its codebook: ``widths`` and the ``(2**nbits * dim,)``
        centroids in fastText's order (what a file holds)."""
        pq = cls(m=len(widths), nbits=nbits)
        widths = tuple(int(w) for w in widths)
        flat = np.ascontiguousarray(centroids, dtype=np.float32).reshape(-1)
        if not widths or min(widths) < 1 or flat.size != pq.ksub * sum(widths):
            raise ValueError(
                f"a codebook of widths {widths} and nbits {nbits} holds "
                f"{pq.ksub} x {sum(widths)} centroid values, got {flat.size}"
            )
        pq._widths, pq._centroids = widths, _read_only(flat)
        return pq

    # -- codes ---------------------------------------------------------------------------

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Codes ``(n, M)`` uint8 of the rows of ``x`` (n, dim): each sub-vector's nearest centroid."""
        x = _check_rows(x, "x", self.dim)
        layout = transposed_layout([self.centroids_of(m) for m in range(self.nsubq)])
        codes = np.empty((len(x), self.nsubq), dtype=np.uint8)  # (n, M)
        for start in range(0, len(x), _ENCODE_ROWS):
            block = slice(start, start + _ENCODE_ROWS)
            nearest_centroids(x[block], layout, codes[block])
        return codes

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Rows ``(n, dim)`` float32 from codes ``(n, M)``: each sub-space's centroid, concatenated."""
        codes = np.asarray(codes)
        out = np.empty((len(codes), self.dim), dtype=np.float32)  # (n, dim)
        offsets = self.offsets
        for m in range(self.nsubq):
            out[:, offsets[m] : offsets[m + 1]] = self.centroids_of(m)[codes[:, m]]
        return out

    def inner_product_tables(self, queries: np.ndarray) -> np.ndarray:
        """``T[q, m, j] = queries[q, sub-space m] . c_{m,j}``: (Q, M, ksub) float32."""
        queries = np.asarray(queries, dtype=np.float32)
        offsets = self.offsets
        tables = np.empty((len(queries), self.nsubq, self.ksub), dtype=np.float32)
        for m in range(self.nsubq):
            tables[:, m] = queries[:, offsets[m] : offsets[m + 1]] @ self.centroids_of(m).T
        return tables

    def squared_norm_table(self) -> np.ndarray:
        """``|c_{m,j}|^2`` (M, ksub) float32: ``|x^|^2`` of a row is ``sum_m`` of its codes' entries."""
        return np.stack([(self.centroids_of(m) ** 2).sum(axis=1) for m in range(self.nsubq)])

    def inner_products(self, queries: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """``queries (Q, dim) . decode(codes)`` (Q, n) by the asymmetric distance, in NumPy.

        The plain formulation: one table per query, one table read per code. The fast path
        is :func:`rowbook.vectors.quantize.matrix.table_sums`.
        """
        tables = self.inner_product_tables(queries)  # (Q, M, ksub)
        codes = np.asarray(codes, dtype=np.int64)
        return tables[:, np.arange(self.nsubq), codes].sum(axis=-1)  # (Q, n)

    # -- files ---------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        """What a file stores: ``{"widths", "nbits", "centroids"}``."""
        return {"widths": list(self.widths), "nbits": self.nbits, "centroids": self.centroids}

    @classmethod
    def from_state(cls, state: Any, where: str) -> ProductQuantizer:
        """A quantiser from :meth:`get_state`'s dict read from a file, every field checked
        (``ValueError`` naming ``where`` and the field)."""
        if not isinstance(state, dict):
            raise ValueError(f"{where} must be an object with widths, nbits, centroids")
        widths, nbits, centroids = state.get("widths"), state.get("nbits"), state.get("centroids")
        if not (isinstance(widths, list) and widths and all(_is_int(w) and w >= 1 for w in widths)):
            raise ValueError(f"{where}: 'widths' must be a non-empty list of integers >= 1")
        if not (_is_int(nbits) and 1 <= nbits <= 8):
            raise ValueError(f"{where}: 'nbits' must be an integer from 1 to 8, got {nbits!r}")
        expected = (1 << nbits) * sum(widths)
        check_float32_field(
            centroids,
            expected,
            f"{where}: 'centroids'",
            "(2**nbits x sum(widths))",
            "the codebook shapes disagree",
        )
        return cls.from_centroids(widths, centroids, nbits)

    def fasttext_bytes(self) -> bytes:
        """The quantiser as fastText writes it (``ProductQuantizer::save``): int32 dim, nsubq,
        dsub, lastdsub, then the float32 centroids. Only fastText's layout can be written."""
        widths = self.widths
        if self.nbits != 8 or any(w != widths[0] for w in widths[:-1]) or widths[-1] > widths[0]:
            raise ValueError(
                f"fastText stores 8-bit codes and sub-spaces of one width dsub but a "
                f"narrower last one; this quantiser has nbits={self.nbits}, widths "
                f"{widths}: build it with dsub= and nbits=8"
            )
        head = _FASTTEXT_HEAD.pack(self.dim, self.nsubq, widths[0], widths[-1])
        return head + self.centroids.astype("<f4").tobytes()

    @classmethod
    def from_fasttext_bytes(
        cls, buffer: bytes | memoryview, offset: int, where: str
    ) -> tuple[ProductQuantizer, int]:
        """Read a quantiser laid out as :meth:`fasttext_bytes` at ``offset`` of ``buffer``;
        returns it and the offset after it. Every field is checked against the bytes left."""
        if len(buffer) - offset < _FASTTEXT_HEAD.size:
            raise ValueError(
                f"{where}: the product quantiser header needs 16 bytes, "
                f"{max(len(buffer) - offset, 0)} are left"
            )
        dim, nsubq, dsub, lastdsub = _FASTTEXT_HEAD.unpack_from(buffer, offset)
        if (
            min(dim, nsubq, dsub, lastdsub) < 1
            or lastdsub > dsub
            or (nsubq - 1) * dsub + lastdsub != dim
        ):
            raise ValueError(
                f"{where}: product quantiser dim={dim}, nsubq={nsubq}, dsub={dsub}, "
                f"lastdsub={lastdsub} do not describe a split of dim"
            )
        start, size = offset + _FASTTEXT_HEAD.size, 4 * 256 * dim
        if len(buffer) - start < size:
            raise ValueError(
                f"{where}: the centroids need {size} bytes, {len(buffer) - start} are left"
            )
        centroids = np.frombuffer(buffer, "<f4", 256 * dim, start).astype(np.float32)
        widths = (dsub,) * (nsubq - 1) + (lastdsub,)
        return cls.from_state(
            {"widths": list(widths), "nbits": 8, "centroids": centroids}, where
        ), start + size

    def __repr__(self) -> str:
        if self._widths is None:
            shape = f"m={self.m}" if self.m is not None else f"dsub={self.dsub}"
            return f"ProductQuantizer({shape}, nbits={self.nbits}, not fitted)"
        return f"ProductQuantizer(dim={self.dim}, m={self.nsubq}, nbits={self.nbits})"


def check_float32_field(
    value: Any, size: int, where: str, what: str, fix: str = "", minimum: float | None = None
) -> np.ndarray:
    """A file's field that must be ``size`` finite float32 values (and ``>= minimum``):
    ``ValueError`` naming ``where`` otherwise. ``what`` says what they are."""
    if not (isinstance(value, np.ndarray) and value.dtype == np.float32 and value.shape == (size,)):
        got = f"{getattr(value, 'dtype', type(value).__name__)} {getattr(value, 'shape', None)}"
        raise ValueError(
            f"{where} must be {size} float32 values {what}, got {got}" + (f"; {fix}" if fix else "")
        )
    if not np.isfinite(value).all() or (minimum is not None and (value < minimum).any()):
        bound = "" if minimum is None else f" and >= {minimum:g}"
        raise ValueError(f"{where} must be finite{bound}; it holds inf, nan or smaller values")
    return value


def _check_rows(x: Any, name: str, dim: int | None = None) -> np.ndarray:
    array = np.asarray(x)
    if (
        array.ndim != 2
        or array.dtype.kind not in "fiu"
        or (dim is not None and array.shape[1] != dim)
    ):
        want = f"(n, {dim})" if dim is not None else "(n, dim)"
        raise ValueError(
            f"{name} must be a {want} array of real numbers, got {array.dtype} {array.shape}"
        )
    if array.dtype.kind == "f":
        for start in range(0, len(array), _ENCODE_ROWS):  # a bounded scratch, not a (n, dim) mask
            if not np.isfinite(array[start : start + _ENCODE_ROWS]).all():
                raise ValueError(f"{name} holds inf or nan; quantise finite rows only")
    return array


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
