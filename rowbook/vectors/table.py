"""KeyedTable: the one stored table behind :class:`~rowbook.vectors.Vectors`.

Keys (strings) mapped to the rows of a read-only float32 (or float16) table, optional
counts, cached row norms and unit rows, the read-only flag, the index once built, and the
file formats. It answers lookups, and it is where every query reads rows: the four methods
under "how queries read rows" (:meth:`KeyedTable.rows_at`, :meth:`~KeyedTable.unit_rows_at`,
:meth:`~KeyedTable.cosines`, :meth:`~KeyedTable.term_rows`, with
:meth:`~KeyedTable.rerank_pool`) are the whole contract between a table and the modules of
functions that query it (:mod:`~rowbook.vectors.pairs`, :mod:`~rowbook.vectors.queries`,
:mod:`~rowbook.vectors.evaluate`), so a mapped, a quantised and a subword table answer
the same functions by answering those methods. Edits go through
:meth:`~KeyedTable.replace_rows` (:mod:`rowbook.vectors.edit`).

Over 400 lines for the file formats' classmethods (word2vec, GloVe, projector, ``.npz`` and
safetensors): each is a documented door into :mod:`~rowbook.vectors.formats`,
:mod:`~rowbook.vectors.npz` and :mod:`~rowbook.vectors.sidefiles`, where the reading is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Self

import numpy as np

from rowbook.checks import InputTypeError, UnknownKeyError, check_finite, check_finite_rows
from rowbook.io import MAX_INFLATED_BYTES, kind_of
from rowbook.vectors import formats, npz, sidefiles
from rowbook.vectors.keys import check_counts, check_dtype, index_keys, read_only
from rowbook.vectors.mapped import maps_a_file, open_cached
from rowbook.vectors.neighbors import row_norms, unit_rows
from rowbook.vectors.projector import read_projector, write_projector

__all__ = ["KeyedTable", "Term"]

PathLike = str | os.PathLike[str]
Term = str | np.ndarray  # a key, or a (d,) vector used as given
_SCAN_BYTES = 8 << 20  # float64 bytes of a mapped table's rows handled at a time (scratch)


def _scan_rows(dim: int) -> int:
    """Rows of a mapped table scanned at a time: a scratch of at most 8 MB in float64."""
    return max(256, _SCAN_BYTES // (8 * dim))


class KeyedTable:
    """Keys (strings) mapped to rows of a float32 table ``vectors`` (V, d).

    Parameters
    ----------
    keys : sequence of str, or int
        One unique key per row, in row order (trainers use descending frequency, which
        is what ``restrict_vocab`` arguments assume). An int is a ``vector_size``:
        ``Vectors(100)`` is an empty table to fill with ``add_vectors``, as gensim's
        ``KeyedVectors(100)``.
    vectors : array_like
        ``(V, d)`` table; stored as C-contiguous ``dtype``.
    counts : array_like, optional
        ``(V,)`` non-negative corpus counts, kept and saved alongside.
    copy : bool, default True
        Copy ``vectors``. With ``copy=False`` a C-contiguous array of ``dtype`` is used as
        is (cheap for trainers); edits then copy it first, so the caller's array is never
        written to.
    dtype : numpy.float32 or numpy.float16, default float32
        Storage type. A float16 table halves the memory; queries compute in float32.
    allow_nonfinite : bool, default False
        Keep rows holding ``inf`` or ``nan`` (refused otherwise, as the file loaders refuse
        them: they make every query score ``nan``); queries then treat such rows as zero
        rows. The same goes for rows added later (``add_vectors``, ``table[key] = row``).

    Examples
    --------
    >>> table = KeyedTable(["king", "queen"], [[1.0, 0.1], [0.9, 0.2]], counts=[7, 3])
    >>> table["queen"], table.key_to_index["king"], len(table)
    (array([0.9, 0.2], dtype=float32), 0, 2)
    """

    def __init__(
        self,
        keys: Sequence[str] | int,
        vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
        counts: np.ndarray | Sequence[int] | None = None,
        *,
        copy: bool = True,
        dtype: Any = np.float32,
        allow_nonfinite: bool = False,
    ) -> None:
        dtype = check_dtype(dtype)
        if isinstance(keys, int | np.integer) and not isinstance(keys, bool):
            keys, vectors = (), _empty_table(keys, vectors, counts, dtype)
        elif vectors is None:
            raise InputTypeError(
                "vectors is missing: pass Vectors(keys, vectors) with a (n_keys, d) array, "
                "or Vectors(vector_size) for an empty table to fill with add_vectors"
            )
        table = np.array(vectors, dtype=dtype, order="C", copy=True if copy else None)
        if table.ndim != 2 or table.shape[1] < 1:
            raise ValueError(
                f"vectors must be a 2-D (n_keys, vector_size >= 1) array, got shape {table.shape}"
            )
        self._set_keys(keys, counts, len(table), "vector rows")
        self._allow_nonfinite = bool(allow_nonfinite)
        if not maps_a_file(table):  # a mapped table is not scanned: its rows stay on disk
            check_finite_rows("vectors", table, self._keys, allow_nonfinite=self._allow_nonfinite)
        # (V, d) read-only view: queries cannot alter it, yet the caller's array stays writeable
        self._vectors = read_only(table)
        self._owned = table if copy else None  # the writeable array behind _vectors, if ours
        self._norms: np.ndarray | None = None  # (V,), filled on first query
        self._unit: np.ndarray | None = None  # (V, d) unit rows; never made for a mapped table
        self._mapped = maps_a_file(table)  # queries then scan the file's rows in blocks
        self.path: Path | None = None  # the file a mapped table was opened from
        self.vector_index = None  # a VectorIndex over the unit rows, once built (build_index)

    def _set_keys(self, keys: Any, counts: Any, n_rows: int, rows: str) -> None:
        """Keys (unique str, one per of the ``n_rows`` ``rows``), their index and counts."""
        self._keys = tuple(keys)
        if len(self._keys) != n_rows:
            raise ValueError(f"got {len(self._keys)} keys for {n_rows} {rows}; they must match")
        self._key_to_index = index_keys(self._keys)
        self._counts = None if counts is None else check_counts(counts, n_rows)

    # -- lookup --------------------------------------------------------------------

    @property
    def key_to_index(self) -> Mapping[str, int]:
        """Read-only mapping key -> row."""
        return MappingProxyType(self._key_to_index)

    @property
    def index_to_key(self) -> tuple[str, ...]:
        """Keys in row order."""
        return self._keys

    @property
    def vectors(self) -> np.ndarray:
        """The (V, d) table (float32, or float16 if stored so), as a read-only view."""
        return self._vectors

    @property
    def counts(self) -> np.ndarray | None:
        """The (V,) int64 counts given at construction, read-only, or None."""
        return self._counts

    @property
    def vector_size(self) -> int:
        return self._vectors.shape[1]

    @property
    def allow_nonfinite(self) -> bool:
        """Whether rows holding inf or nan are kept (and added rows may hold them)."""
        return self._allow_nonfinite

    @property
    def norms(self) -> np.ndarray:
        """Euclidean norm of every row, (V,) float32 (computed once, then cached)."""
        self.fill_norms()
        return self._norms

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._key_to_index

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_keys={len(self)}, vector_size={self.vector_size})"

    @property
    def mapped(self) -> bool:
        """Whether the table is mapped from a file (``load(..., mmap=True)``) rather than held in memory."""
        return self._mapped

    def __getitem__(self, key_or_keys: str | Iterable[str]) -> np.ndarray:
        """The (d,) row of one key (read-only view), or an (n, d) copy for a list of keys."""
        if isinstance(key_or_keys, str) or not isinstance(key_or_keys, Iterable):
            return self.get_vector(key_or_keys)
        return self.rows_at([self.get_index(k) for k in key_or_keys])  # (n, d)

    def get_index(self, key: str, default: int | None = None) -> int:
        """Row of ``key``; ``default`` if given and the key is absent, else ``KeyError``."""
        if not isinstance(key, str):
            raise InputTypeError(
                f"keys are str, got {type(key).__name__} {key!r}; for row i use .vectors[i]"
            )
        index = self._key_to_index.get(key)
        if index is not None:
            return index
        if default is not None:
            return default
        raise UnknownKeyError(
            f"key {key!r} is not among the {len(self)} keys; check its spelling and case"
        )

    def get_vector(self, key: str, norm: bool = False) -> np.ndarray:
        """The (d,) row of ``key`` (read-only), scaled to unit length if ``norm``."""
        index = self.get_index(key)
        return self.unit_rows_at(index) if norm else self.rows_at(index)

    def fill_norms(self, force: bool = False) -> None:
        """Compute and cache row norms and unit rows (done lazily by every query).

        Both come from :func:`~rowbook.vectors.neighbors.unit_rows`, the package's one
        norm; every edit of the table drops them, to be computed again on the next query.
        A mapped table caches its norms only (V,), a block of rows at a time: its unit rows
        would be a second full-size copy of the file in memory.
        """
        if self._mapped and self._unit is None:
            if self._norms is None or force:
                step = _scan_rows(self.vector_size)
                norms = np.concatenate(
                    [row_norms(self._vectors[i : i + step]) for i in range(0, len(self), step)]
                    or [np.zeros(0)]
                )
                self._norms = read_only(norms.astype(np.float32))
        elif self._unit is None or force:
            norms, unit = unit_rows(self._vectors)  # (V,) float64, (V, d)
            self._norms, self._unit = read_only(norms.astype(np.float32)), read_only(unit)

    def get_normed_vectors(self) -> np.ndarray:
        """All rows scaled to unit length, (V, d) float32 read-only (a zero row stays zero).

        For a mapped table this builds (and keeps) a full-size copy in memory; its queries
        do not need one.
        """
        if self._unit is None:
            norms, unit = unit_rows(self._vectors)  # (V,) float64, (V, d)
            self._norms, self._unit = read_only(norms.astype(np.float32)), read_only(unit)
        return self._unit

    # -- how queries read rows: one place, so mapped, quantised and subword tables answer them --

    def rows_at(self, index: Any) -> np.ndarray:
        """Raw rows ``vectors[index]`` (an int gives a (d,) row, ids an (n, d) array)."""
        return self._vectors[index]

    def unit_rows_at(self, index: Any) -> np.ndarray:
        """Unit rows ``get_normed_vectors()[index]``, computed on the fly for a mapped table."""
        if self._mapped and self._unit is None:
            return unit_rows(self._vectors[index])[1]
        return self.get_normed_vectors()[index]

    def cosines(self, queries: np.ndarray, stop: int) -> np.ndarray:
        """Cosines of unit ``queries`` with the first ``stop`` rows: (stop,) for a (d,) query,
        (Q, stop) for (Q, d). A mapped table is scanned a block of rows at a time. Queries
        holding inf or nan are refused."""
        check_finite("queries", queries)
        if not (self._mapped and self._unit is None):
            unit = self.get_normed_vectors()[:stop]
            return unit @ queries if queries.ndim == 1 else queries @ unit.T
        self.fill_norms()
        scale = np.divide(
            np.float32(1),
            self._norms,
            out=np.zeros_like(self._norms),
            where=(self._norms > 0) & np.isfinite(self._norms),
        )
        out = np.empty((*queries.shape[:-1], stop), dtype=np.float32)  # (stop,) or (Q, stop)
        # one query against float32 rows: one BLAS product over the map, no scratch (a
        # product per block cost 7x the CPU time, each call waking and joining BLAS's
        # threads); several queries, or rows to convert, go a block at a time
        whole = queries.ndim == 1 and self._vectors.dtype == np.float32
        step = stop if whole else _scan_rows(self.vector_size)
        for start in range(0, stop, step):
            end = min(start + step, stop)
            block = self._vectors[start:end].astype(np.float32, copy=False)  # (b, d), paged in
            dots = block @ queries if queries.ndim == 1 else queries @ block.T
            with np.errstate(invalid="ignore"):  # inf * 0 in rows that score 0 anyway
                out[..., start:end] = np.where(scale[start:end] > 0, dots * scale[start:end], 0)
        return out

    def rerank_pool(self, wanted: int) -> int | None:
        """How many of the best-scored rows a scan re-scores exactly before ranking them:
        None, as :meth:`cosines` is exact here (a quantised table linked to its float
        table answers a number)."""
        return None

    def term_rows(
        self, terms: Sequence[Term], normalise_keys: bool
    ) -> tuple[np.ndarray, list[int]]:
        """The inputs of a query as rows: ``(vectors (n, d), rows of the inputs that are keys)``.

        A key gives its row (its unit row if ``normalise_keys``), a (d,) vector is used as
        given (refused if it holds inf or nan). A subword table answers unseen words too.
        """
        rows, exclude = [], []
        for term in terms:
            if isinstance(term, str):
                exclude.append(self.get_index(term))
                rows.append(
                    self.unit_rows_at(exclude[-1]) if normalise_keys else self.rows_at(exclude[-1])
                )
            elif isinstance(term, np.ndarray) and term.shape == (self.vector_size,):
                check_finite("a query vector", term)  # the doors name it first, when they can
                rows.append(term.astype(np.float32, copy=False))
            else:
                raise InputTypeError(
                    f"expected a key (str) or a ({self.vector_size},) vector, got "
                    f"{type(term).__name__} {getattr(term, 'shape', term)!r}"
                )
        return np.stack(rows), exclude

    # -- the door edits go through (rowbook.vectors.edit) ---------------------------------

    def own_rows(self) -> np.ndarray:
        """The writeable (V, d) array behind :attr:`vectors`, copied first if it is not this
        table's own (a caller's array given with ``copy=False``, or a mapped file)."""
        if self._owned is None:
            self._owned = np.array(self._vectors, order="C")
        return self._owned

    def replace_rows(
        self, table: np.ndarray, added: Sequence[str] = (), *, unit: bool = False
    ) -> None:
        """Install an edited ``table`` (now owned by this object) with the keys ``added`` at
        its end; the cached norms and unit rows, and an index of the old rows, are dropped.
        ``unit=True`` says the rows are this table's own unit rows (read-only, shared with
        its cache): they stay its unit rows and its index, their norms 1 (0 for a zero row),
        and the next edit copies them first."""
        if unit:
            norms = np.where(self.norms > 0, 1, 0).astype(np.float32)
            self._owned, self._vectors, self._unit = None, table, table
            self._norms, self._mapped, self.path = read_only(norms), False, None
            return
        if added:
            self._keys += tuple(added)
            self._key_to_index = index_keys(self._keys)
        self._owned, self._vectors = table, read_only(table)
        self._norms = self._unit = self.vector_index = None
        self._mapped, self.path = maps_a_file(table), None

    def set_counts(self, counts: np.ndarray | Sequence[int] | None) -> None:
        """Replace the counts (one non-negative integer per key), or drop them with None."""
        self._counts = None if counts is None else check_counts(counts, len(self))

    # -- files ---------------------------------------------------------------------

    def save_word2vec_format(
        self,
        path: PathLike,
        fvocab: PathLike | None = None,
        binary: bool = False,
        write_header: bool = True,
    ) -> None:
        """Write word2vec text (or ``binary``) format, rows in index order, atomically.

        ``write_header=False`` (text only) writes GloVe's format. Keys containing a space
        or newline cannot be stored (``ValueError``). ``fvocab`` also writes the counts, one
        ``key count`` line per key, as gensim's ``fvocab=`` and word2vec.c's
        ``-save-vocab`` do. Rows stay in index order (gensim re-sorts them by count; a
        trainer's table is already in that order).
        """
        if fvocab is not None and self._counts is None:
            raise ValueError(
                "fvocab= writes the counts, but this table has none; build it with counts= "
                "or load it with fvocab="
            )
        formats.write_word2vec(
            path, self._keys, self.vectors, binary=binary, write_header=write_header
        )
        if fvocab is not None:
            sidefiles.write_vocab_counts(fvocab, self._keys, self._counts)

    @classmethod
    def load_word2vec_format(
        cls,
        path: PathLike,
        fvocab: PathLike | None = None,
        binary: bool = False,
        encoding: str = "utf8",
        unicode_errors: str = "strict",
        limit: int | None = None,
        datatype: Any = np.float32,
        no_header: bool = False,
        allow_nonfinite: bool = False,
        *,
        mmap: bool = False,
        cache_dir: PathLike | None = None,
    ) -> Self:
        """Read a word2vec text/binary file (or GloVe text with ``no_header=True``).

        Parameters as gensim's ``KeyedVectors.load_word2vec_format``: ``fvocab`` reads the
        counts from a ``key count`` per line file (keys it lacks get 0, with a warning;
        without it there are no counts, where gensim makes up descending ones); ``limit``
        reads only the first rows; ``datatype=np.float16`` stores the table in half
        precision. Malformed files raise ``ValueError`` with the line or byte offset; a
        repeated key keeps its first row, with a warning (as gensim). ``inf`` / ``nan``
        values are refused with their line or row, unless ``allow_nonfinite=True`` (queries
        then treat such rows as zero rows). A header claiming more than the file can hold is
        refused before anything is allocated (a compressed file's table grows with its rows).

        ``mmap=True`` converts the file once into a rowbook ``.npz`` beside it (or in
        ``cache_dir``) and maps that; later calls map the cache straight away, and rebuild it
        when the source changes (see :mod:`rowbook.vectors.mapped`).
        """
        dtype = check_dtype(datatype, "datatype")
        options = {
            "binary": binary,
            "no_header": no_header,
            "limit": limit,
            "encoding": encoding,
            "unicode_errors": unicode_errors,
            "datatype": dtype.name,
            "allow_nonfinite": allow_nonfinite,
        }

        def read(allocate: Any = np.empty) -> dict[str, Any]:
            keys, table = formats.read_word2vec(
                path,
                dtype=dtype,
                allocate=allocate,
                **{k: v for k, v in options.items() if k not in ("datatype",)},
            )
            return {"keys": keys, "vectors": table, "counts": None}

        if mmap:
            kind = "binary" if binary else "glove" if no_header else "text"
            loaded = cls._open_cache(path, f"word2vec {kind}", options, read, cache_dir)
            keys = loaded.index_to_key
        else:
            state = read()
            keys = state["keys"]
            loaded = cls(
                keys,
                state["vectors"],
                None,
                copy=False,
                dtype=dtype,
                allow_nonfinite=allow_nonfinite,
            )
        if fvocab is not None:
            counts = sidefiles.read_vocab_counts(fvocab, keys, unicode_errors=unicode_errors)
            loaded.set_counts(counts)
        return loaded

    @classmethod
    def _open_cache(
        cls,
        source: PathLike,
        fmt: str,
        options: dict[str, Any],
        read: Any,
        cache_dir: PathLike | None,
    ) -> Self:
        """The table of ``source`` mapped from its conversion cache (made by ``read`` if needed)."""
        state, cache = open_cached(source, fmt, options, read, kind="vectors", cache_dir=cache_dir)
        keys, table, counts = npz.check_vectors_state(state, cache, allow_nonfinite=True)
        loaded = cls(keys, table, counts, copy=False, dtype=table.dtype)
        loaded.path = cache
        return loaded

    @classmethod
    def load_glove(
        cls,
        path: PathLike,
        limit: int | None = None,
        encoding: str = "utf8",
        allow_nonfinite: bool = False,
        *,
        mmap: bool = False,
        cache_dir: PathLike | None = None,
    ) -> Self:
        """Read GloVe text vectors (word2vec text rows without a header); ``mmap`` as in
        :meth:`load_word2vec_format`."""
        return cls.load_word2vec_format(
            path,
            no_header=True,
            limit=limit,
            encoding=encoding,
            allow_nonfinite=allow_nonfinite,
            mmap=mmap,
            cache_dir=cache_dir,
        )

    def save_projector(
        self,
        folder: PathLike,
        metadata: Mapping[str, Sequence[Any]] | None = None,
        *,
        name: str = "embedding",
    ) -> Path:
        """Write the table for TensorBoard's Embedding Projector into ``folder``.

        ``tensors.tsv`` (the rows), ``metadata.tsv`` (the keys, a ``count`` column when the
        table has counts, and the columns of ``metadata``: name to one value per row) and
        ``projector_config.pbtxt`` naming the table ``name``; keys and values holding tabs or
        newlines are escaped (:mod:`rowbook.vectors.projector`). Point TensorBoard at the folder
        (``tensorboard --logdir FOLDER``) and open its Projector tab. Returns the config path.
        """
        columns = dict(metadata or {})
        if self._counts is not None and "count" not in columns:
            columns = {"count": self._counts.tolist(), **columns}
        return write_projector(folder, self._keys, self._vectors, columns, name=name)

    @classmethod
    def load_projector(
        cls, folder: PathLike, *, tensor: str | None = None, key_column: str | None = None
    ) -> Self:
        """Read a table of a TensorBoard projector folder (:meth:`save_projector`'s, or one
        TensorBoard's own ``projector.visualize_embeddings`` describes).

        The keys are the metadata column ``key_column`` (default: ``"label"``, else the first
        column), or the row numbers without metadata; they must be unique. A ``count``
        column of non-negative integers becomes the counts. ``tensor`` picks the table when
        the folder lists several. :func:`rowbook.vectors.projector.read_projector` gives every
        metadata column.
        """
        found = read_projector(folder, tensor=tensor)
        columns = found.metadata
        if key_column is None:
            key_column = "label" if "label" in columns or not columns else next(iter(columns))
        if columns and key_column not in columns:
            raise UnknownKeyError(
                f"{folder}: no metadata column {key_column!r}; it has {list(columns)}"
            )
        keys = columns.get(key_column) or [str(i) for i in range(len(found.vectors))]
        missing = [i for i, key in enumerate(keys) if key is None]
        if missing:
            raise ValueError(
                f"{folder}: row {missing[0]} has no {key_column!r}; every row needs a "
                "key (choose another column with key_column=)"
            )
        counts = columns.get("count") if key_column != "count" else None
        if counts is not None and not all(c is not None and c.isdigit() for c in counts):
            counts = None  # not counts after all: left in the metadata, not taken as counts
        try:
            return cls(
                keys,
                found.vectors,
                None if counts is None else [int(c) for c in counts],
                copy=False,
            )
        except ValueError as err:
            if "duplicate key" not in str(err):
                raise
            raise ValueError(
                f"{folder}: the metadata column {key_column!r} repeats a value ({err}); "
                "choose a column of unique values with key_column=, or read the rows "
                "and metadata with rowbook.vectors.projector.read_projector"
            ) from None

    def save(self, path: PathLike) -> None:
        """Write keys, vectors and counts to one file (no pickle), atomically, at exactly ``path``.

        A path ending in ``.safetensors`` gets the safetensors format (readable by
        ``safetensors.torch.load_file``: ``["vectors"]`` is the table for
        ``torch.nn.Embedding.from_pretrained``); any other, rowbook's ``.npz``.
        """
        write = sidefiles.write_safetensors if _is_safetensors(path) else npz.write_npz
        write(path, self._keys, self._vectors, self._counts)

    @classmethod
    def load(
        cls,
        path: PathLike,
        *,
        mmap: bool = False,
        max_inflated_bytes: int | None = MAX_INFLATED_BYTES,
        allow_nonfinite: bool = False,
    ) -> Self:
        """Read a file written by :meth:`save` (safetensors or ``.npz``, told apart by their
        content, whatever the file's name; fields checked, no pickle).

        ``mmap=True`` maps the table from the file read-only instead of reading it: opening
        reads the keys only, queries page in the rows they touch, and the norms they need are
        computed a block at a time (see :mod:`rowbook.vectors.mapped`). The mapped values are
        not scanned, so inf / nan rows score as zero rows instead of being refused.
        A quantised file (``QuantizedVectors.save``) comes back from ``Vectors.load`` as a
        :class:`~rowbook.vectors.quantize.QuantizedVectors`.
        ``max_inflated_bytes`` caps what compressed ``.npz`` members may expand to (rowbook
        writes none; ``None`` lifts the cap for a file you trust, see ``docs/safety.md``);
        ``allow_nonfinite`` as in :meth:`load_word2vec_format`.
        """
        if Path(path).is_file() and sidefiles.is_safetensors(path):
            keys, table, counts = sidefiles.read_safetensors(
                path, mmap=mmap, allow_nonfinite=allow_nonfinite
            )
        elif kind_of(path) == "quantized vectors":
            return cls._load_quantized(path, mmap)
        else:
            keys, table, counts = npz.read_npz(
                path,
                max_inflated_bytes=max_inflated_bytes,
                allow_nonfinite=allow_nonfinite,
                mmap=mmap,
            )
        dtype = np.float16 if table.dtype == np.float16 else np.float32
        loaded = cls(
            keys, table, counts, copy=False, dtype=dtype, allow_nonfinite=allow_nonfinite or mmap
        )
        loaded.path = Path(path) if loaded.mapped else None
        return loaded

    @classmethod
    def _load_quantized(cls, path: PathLike, mmap: bool) -> Any:
        """What :meth:`load` does with a quantised file: a float table refuses it
        (:class:`~rowbook.vectors.Vectors` reads it as a ``QuantizedVectors``)."""
        raise InputTypeError(
            f"{path} holds quantised vectors; read it with Vectors.load(path) or "
            "QuantizedVectors.load(path)"
        )


def _is_safetensors(path: PathLike) -> bool:
    return os.fspath(path).endswith(".safetensors")


def _empty_table(vector_size: int, vectors: Any, counts: Any, dtype: np.dtype) -> np.ndarray:
    if vectors is not None or counts is not None:
        raise InputTypeError(
            "Vectors(vector_size) makes an empty table and takes no vectors or counts; "
            "pass keys and vectors, or call add_vectors afterwards"
        )
    if vector_size < 1:
        raise ValueError(f"vector_size must be an int >= 1, got {vector_size!r}")
    return np.zeros((0, int(vector_size)), dtype=dtype)  # (0, d)
