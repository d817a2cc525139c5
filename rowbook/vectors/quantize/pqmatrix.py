"""Product-quantised rows: fastText's ``QuantMatrix``, codes of a :class:`ProductQuantizer`.

See :mod:`rowbook.vectors.quantize.matrix` for the interface and how a scan scores the codes;
the bytes of fastText's quantised matrices (``QuantMatrix::save``) are read and written here.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from rowbook.vectors.neighbors import row_norms
from rowbook.vectors.quantize.matrix import ROWS_PER_BLOCK, QuantizedMatrix, table_sums
from rowbook.vectors.quantize.pq import ProductQuantizer

__all__ = ["PQMatrix"]

_FASTTEXT_HEAD = struct.Struct("<?2qi")  # QuantMatrix::save: qnorm, rows, dim, code size


class PQMatrix(QuantizedMatrix):
    """Rows as product-quantiser codes, with their norms quantised apart (``qnorm``).

    Parameters
    ----------
    quantizer : ProductQuantizer
        The fitted quantiser of the rows (of their directions with ``qnorm``).
    codes : numpy.ndarray
        ``(V, M)`` uint8 codes.
    norm_quantizer, norm_codes : optional
        With ``qnorm``: a one-dimensional quantiser of the norms and the ``(V,)`` uint8
        code of each row's norm (fastText's ``npq_`` and ``norm_codes_``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = rng.standard_normal((300, 8)).astype(np.float32)
    >>> table = PQMatrix.from_rows(rows, m=4, nbits=6)
    >>> table.codes.shape, table.nbytes < rows.nbytes
    ((300, 4), True)
    >>> q = rng.standard_normal((1, 8)).astype(np.float32); q /= np.linalg.norm(q)
    >>> exact = table.decode() @ q[0] / np.linalg.norm(table.decode(), axis=1)
    >>> bool(np.allclose(table.cosines(q)[0], exact, atol=1e-5))
    True
    """

    method = "pq"

    def __init__(
        self,
        quantizer: ProductQuantizer,
        codes: np.ndarray,
        norm_quantizer: ProductQuantizer | None = None,
        norm_codes: np.ndarray | None = None,
    ) -> None:
        if (norm_quantizer is None) != (norm_codes is None):
            raise ValueError("norm_quantizer and norm_codes go together (qnorm), or neither")
        self.quantizer, self.codes = quantizer, codes  # (V, M) uint8
        self.norm_quantizer, self.norm_codes = norm_quantizer, norm_codes  # (V,) uint8
        self._norm_cache: np.ndarray | None = None

    @property
    def qnorm(self) -> bool:
        """Whether the norms are quantised apart (the codes then hold directions)."""
        return self.norm_codes is not None

    @classmethod
    def from_rows(
        cls,
        rows: np.ndarray,
        *,
        m: int | None = None,
        dsub: int | None = None,
        nbits: int = 8,
        qnorm: bool = True,
        niter: int = 25,
        max_points_per_centroid: int = 256,
        seed: int = 1234,
    ) -> PQMatrix:
        """Fit a quantiser to ``rows`` (V, d) and encode them (see :class:`ProductQuantizer`).

        With ``qnorm`` the rows' directions are quantised and their norms by a 1-d quantiser
        of up to 256 levels (fewer for a table of fewer rows).
        """
        options = {
            "nbits": nbits,
            "niter": niter,
            "seed": seed,
            "max_points_per_centroid": max_points_per_centroid,
        }
        rows = np.asarray(rows)
        norm_quantizer = norm_codes = norms = None
        if qnorm:
            norms = row_norms(rows).astype(np.float32)  # (V,)
            levels = min(8, int(math.log2(max(len(rows), 2))))
            norm_quantizer = ProductQuantizer(m=1, **{**options, "nbits": levels})
            norm_codes = norm_quantizer.fit(norms[:, None]).encode(norms[:, None])[:, 0]
        quantizer = ProductQuantizer(m=m, dsub=dsub, **options)
        ids = quantizer.sample_ids(len(rows))  # only the sampled rows are made unit for training
        quantizer.fit(_directions(rows[ids], None if norms is None else norms[ids]))
        codes = np.empty((len(rows), quantizer.nsubq), dtype=np.uint8)  # (V, M)
        for start in range(0, len(rows), ROWS_PER_BLOCK):
            block = slice(start, start + ROWS_PER_BLOCK)
            part = None if norms is None else norms[block]
            codes[block] = quantizer.encode(_directions(rows[block], part))
        return cls(quantizer, codes, norm_quantizer, norm_codes)

    @property
    def dim(self) -> int:
        return self.quantizer.dim

    def decode(self, rows: Any = None) -> np.ndarray:
        rows = slice(None) if rows is None else rows
        codes = self.codes[rows]
        flat = self.quantizer.decode(codes.reshape(-1, codes.shape[-1]))  # (n, d)
        if self.qnorm:
            flat *= self.norm_quantizer.decode(self.norm_codes[rows].reshape(-1, 1))
        return flat.reshape(*codes.shape[:-1], self.dim)

    def _direction_scores(self, queries: np.ndarray, start: int, stop: int) -> np.ndarray:
        return table_sums(self.codes, self.quantizer.inner_product_tables(queries), start, stop)

    def _direction_norms(self) -> np.ndarray:
        squares = self.quantizer.squared_norm_table()[None]  # (1, M, ksub)
        return np.sqrt(np.maximum(table_sums(self.codes, squares)[0], 0))

    def norms(self) -> np.ndarray:
        norms = self.direction_norms()
        if self.qnorm:
            norms = norms * self.norm_quantizer.decode(self.norm_codes[:, None])[:, 0]
        return norms

    def take(self, rows: np.ndarray) -> PQMatrix:
        norm_codes = None if self.norm_codes is None else self.norm_codes[rows]
        return PQMatrix(self.quantizer, self.codes[rows], self.norm_quantizer, norm_codes)

    @property
    def nbytes(self) -> int:
        total = self.codes.nbytes + self.quantizer.nbytes
        if self.qnorm:
            total += self.norm_codes.nbytes + self.norm_quantizer.nbytes
        return total

    def get_state(self) -> dict[str, Any]:
        state = {
            "method": "pq",
            "quantizer": self.quantizer.get_state(),
            "codes": self.codes,
            "norms": None,
        }
        if self.qnorm:
            state["norms"] = {
                "quantizer": self.norm_quantizer.get_state(),
                "codes": self.norm_codes,
            }
        return state

    @classmethod
    def from_state(cls, state: dict, where: str, n_rows: int | None = None) -> PQMatrix:
        quantizer = ProductQuantizer.from_state(state.get("quantizer"), f"{where}: 'quantizer'")
        codes = _check_codes(
            state.get("codes"), (n_rows, quantizer.nsubq), quantizer.ksub, f"{where}: 'codes'"
        )
        norms = state.get("norms")
        if norms is None:
            return cls(quantizer, codes)
        if not isinstance(norms, dict):
            raise ValueError(f"{where}: 'norms' must be None or an object with quantizer, codes")
        norm_quantizer = ProductQuantizer.from_state(
            norms.get("quantizer"), f"{where}: 'norms.quantizer'"
        )
        if norm_quantizer.dim != 1:
            raise ValueError(
                f"{where}: 'norms.quantizer' must quantise one value (dim 1), "
                f"got dim {norm_quantizer.dim}"
            )
        norm_codes = _check_codes(
            norms.get("codes"), (len(codes),), norm_quantizer.ksub, f"{where}: 'norms.codes'"
        )
        return cls(quantizer, codes, norm_quantizer, norm_codes)

    # -- fastText's QuantMatrix bytes ---------------------------------------------------

    def fasttext_bytes(self) -> bytes:
        """The matrix as fastText writes a quantised one (``QuantMatrix::save``): bool qnorm,
        int64 rows, int64 dim, int32 code size, the codes, the quantiser, then with qnorm the
        norm codes and the norms' quantiser."""
        head = _FASTTEXT_HEAD.pack(self.qnorm, len(self), self.dim, self.codes.size)
        parts = [head, np.ascontiguousarray(self.codes).tobytes(), self.quantizer.fasttext_bytes()]
        if self.qnorm:
            parts += [self.norm_codes.tobytes(), self.norm_quantizer.fasttext_bytes()]
        return b"".join(parts)

    @classmethod
    def from_fasttext_bytes(
        cls, buffer: bytes | memoryview, offset: int, where: str
    ) -> tuple[PQMatrix, int]:
        """Read a matrix laid out as :meth:`fasttext_bytes` at ``offset`` of ``buffer`` (a
        fastText ``.ftz``'s input matrix); returns it and the offset after it. Every size is
        checked against the bytes left before anything is allocated."""
        if len(buffer) - offset < _FASTTEXT_HEAD.size:
            raise ValueError(
                f"{where}: the quantised matrix header needs {_FASTTEXT_HEAD.size} "
                f"bytes, {max(len(buffer) - offset, 0)} are left"
            )
        qnorm, rows, dim, size = _FASTTEXT_HEAD.unpack_from(buffer, offset)
        offset += _FASTTEXT_HEAD.size
        if qnorm not in (0, 1) or rows < 0 or dim < 1 or size < 0 or size > len(buffer) - offset:
            raise ValueError(
                f"{where}: quantised matrix qnorm={qnorm}, rows={rows}, dim={dim}, "
                f"code size={size} do not fit the {len(buffer) - offset} bytes left"
            )
        codes = np.frombuffer(buffer, np.uint8, size, offset)
        quantizer, offset = ProductQuantizer.from_fasttext_bytes(buffer, offset + size, where)
        if quantizer.dim != dim or size != rows * quantizer.nsubq:
            raise ValueError(
                f"{where}: {size} codes for {rows} rows of {quantizer.nsubq} "
                f"sub-spaces of dim {quantizer.dim} (matrix dim {dim}): the codes "
                "and the codebook disagree"
            )
        codes = codes.reshape(rows, quantizer.nsubq).copy()
        if not qnorm:
            return cls(quantizer, codes), offset
        if len(buffer) - offset < rows:
            raise ValueError(
                f"{where}: {rows} norm codes needed, {len(buffer) - offset} bytes left"
            )
        norm_codes = np.frombuffer(buffer, np.uint8, rows, offset).copy()
        norm_quantizer, offset = ProductQuantizer.from_fasttext_bytes(buffer, offset + rows, where)
        if norm_quantizer.dim != 1:
            raise ValueError(f"{where}: the norms' quantiser has dim {norm_quantizer.dim}, not 1")
        return cls(quantizer, codes, norm_quantizer, norm_codes), offset


def _check_codes(codes: Any, shape: tuple[int | None, ...], ksub: int, where: str) -> np.ndarray:
    """Codes of the expected shape (None: any length), uint8, each below ``ksub``."""
    ok = isinstance(codes, np.ndarray) and codes.dtype == np.uint8 and codes.ndim == len(shape)
    ok = ok and all(
        want is None or got == want for got, want in zip(codes.shape, shape, strict=True)
    )
    if not ok:
        want = (
            "("
            + ", ".join("V" if s is None else str(s) for s in shape)
            + ("," if len(shape) == 1 else "")
            + ")"
        )
        raise ValueError(
            f"{where} must be a {want} uint8 array, got "
            f"{getattr(codes, 'dtype', type(codes).__name__)} {getattr(codes, 'shape', None)}; "
            "the codes and the codebook disagree"
        )
    if ksub < 256 and codes.size:
        for start in range(0, len(codes), 1 << 20):  # bounded: no (V, M) mask
            top = int(codes[start : start + (1 << 20)].max(initial=0))
            if top >= ksub:
                raise ValueError(
                    f"{where} holds code {top}, out of range: the codebook has "
                    f"{ksub} centroids per sub-space (codes 0..{ksub - 1})"
                )
    return codes


def _directions(rows: np.ndarray, norms: np.ndarray | None) -> np.ndarray:
    """``rows / norms`` as float32 (zero rows stay zero); the rows as float32 without norms."""
    if norms is None:
        return np.asarray(rows, dtype=np.float32)
    n = norms.astype(np.float64)
    scale = np.divide(1.0, n, out=np.zeros_like(n), where=n > 0)
    return (rows * scale[:, None]).astype(np.float32)
