"""The temporary folders of out-of-core work: removed on every exit, never taken for finished work.

Three kinds of work write temporary files: a corpus's word ids
(:mod:`rowbook.data.id_stream`), co-occurrence runs (:mod:`rowbook.data.cooccurrence_runs`)
and GloVe's shuffled records (:mod:`rowbook.data.shuffle`). Each writes into a
:class:`SpillFolder` of its own, made inside the folder the user chose (``spill_dir``) or
the system's temporary folder (``TMPDIR``), and named ``rowbook-<kind>-XXXXXXXX``:

* **Removed on every exit.** The owner removes the folder when its work ends, on success,
  on error and on Ctrl-C (a ``finally``), and otherwise when it is garbage-collected or
  the interpreter exits.
* **Left by a killed process, swept by the next one.** A process killed with ``kill -9``
  (or by the kernel's out-of-memory killer) cannot clean up. Each folder is locked
  (``flock`` on the folder itself) by the process that made it, for as long as it lives:
  the kernel drops the lock when the process dies, however it dies. Making a new spill
  folder sweeps its siblings: a ``rowbook-<kind>-XXXXXXXX`` folder that nobody holds locked
  is a dead process's and is removed. A folder is locked before it gets that name (it is
  made as ``.rowbook-new-XXXXXXXX``, locked, then renamed), so a sweep never sees a live
  folder unlocked.
* **Never taken for finished work.** Nothing reads a spill folder it did not make in the
  same call, so a stale file cannot stand in for a finished one; finished outputs are
  written by :func:`rowbook.io.atomic_write` (write, then rename).
* **A full disk is one error,** :class:`SpillSpaceError` (an ``OSError`` with
  ``errno.ENOSPC``), naming the folder, what was being written, the room it needs and the
  room that was free (:meth:`SpillFolder.writing`). The owner removes its partial files as
  the error propagates.

The locks are :mod:`rowbook._locks`'s; where they do not exist (Windows, a file system
without them) the sweep removes only folders left more than a day ago.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from rowbook._locks import abandoned, lock

__all__ = [
    "STALE_SECONDS",
    "SpillFolder",
    "SpillSpaceError",
    "pread_into",
    "pwrite_all",
    "sweep_stale",
]

#: Where locks do not exist, a spill folder unchanged for this long is a dead process's.
STALE_SECONDS = 24 * 3600
_NAME = re.compile(r"rowbook-(ids|records|cooccur)-[a-z0-9_]{8}")
_NEW = re.compile(r"\.rowbook-new-[a-z0-9_]{8}")
_FULL = (errno.ENOSPC, errno.EDQUOT)


class SpillSpaceError(OSError):
    """No room left on the disk of a spill folder (``errno.ENOSPC``); the message says how
    much was needed and how much was free, and how to give the work more room."""

    #: The parameter that gives the work another folder (a front end names its own option).
    name = "spill_dir"

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)

    def __reduce__(self) -> tuple:
        # raised in a forked worker it crosses a pipe: rebuilt from its message alone
        return (type(self), (self.strerror,))

    def __str__(self) -> str:
        return self.message_for(self.name)

    def message_for(self, name: str) -> str:
        """The message, naming the option that chooses the folder as ``name``."""
        return self.strerror.format(option=name)


def _megabytes(n: int) -> str:
    """A size in MB, for messages.

    >>> _megabytes(3 * 2**20), _megabytes(10)
    ('3.0 MB', '0.0 MB')
    """
    return f"{n / 2**20:,.1f} MB"


class SpillFolder:
    """A new temporary folder ``rowbook-<kind>-XXXXXXXX`` inside ``parent`` (``None``: the
    system's temporary folder), locked by this process until :meth:`remove`.

    Making one first sweeps the stale siblings of dead processes (:func:`sweep_stale`).
    The folder is removed by :meth:`remove` (also on leaving a ``with`` block), or when
    the object is garbage-collected or the interpreter exits.

    Examples
    --------
    >>> import tempfile
    >>> parent = tempfile.mkdtemp()
    >>> with SpillFolder(parent, "ids") as folder:
    ...     _ = (folder.path / "ids.i32").write_bytes(b"1234")
    ...     folder.path.name.startswith("rowbook-ids-")
    True
    >>> folder.path.exists()
    False
    """

    def __init__(self, parent: str | os.PathLike[str] | None, kind: str) -> None:
        where = Path(tempfile.gettempdir() if parent is None else parent)
        if not where.is_dir():
            raise FileNotFoundError(
                f"spill_dir {where} is not a folder; create it, or pass None for the "
                "system's temporary folder"
            )
        sweep_stale(where)
        pending = Path(tempfile.mkdtemp(prefix=".rowbook-new-", dir=where))
        fd = os.open(pending, os.O_RDONLY)
        lock(fd)  # locked before it has a name the sweep looks at
        self.path = where / f"rowbook-{kind}-{pending.name[-8:]}"
        os.rename(pending, self.path)
        self.parent = where
        try:
            self.free_at_start: int | None = shutil.disk_usage(where).free
        except OSError:
            self.free_at_start = None
        self._finalizer = weakref.finalize(self, _remove, self.path, fd)

    def __enter__(self) -> SpillFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove the folder and everything in it, now (again: nothing happens)."""
        self._finalizer()

    @property
    def removed(self) -> bool:
        return not self._finalizer.alive

    def full(self, what: str, need: int | None, written: int | None = None) -> SpillSpaceError:
        """The error for a disk that filled up while ``what`` was written here: the room
        ``need`` (or at least more than ``written``) against the room free when it began."""
        free = self.free_at_start
        if free is None:
            with contextlib.suppress(OSError):
                free = shutil.disk_usage(self.parent).free
        if need is not None:
            needs = f"it needs about {_megabytes(need)}"
        else:
            needs = f"it needs more than the {_megabytes(written or 0)} written"
        had = "an unknown amount" if free is None else _megabytes(free)
        return SpillSpaceError(
            f"no space left in {self.parent} for {what}: {needs}, and {had} was free when it "
            "began; its partial files were removed. Give {option} a folder on a disk with "
            "more room"
        )

    def check_room(self, what: str, need: int, minimum: int | None = None) -> None:
        """Raise :meth:`full` (saying ``need``) now if the disk has less than ``minimum``
        bytes free (default: ``need``); an estimate of ``need`` passes half of it, so that
        only a hopeless case fails before anything is written."""
        if self.free_at_start is not None and self.free_at_start < (minimum or need):
            raise self.full(what, need)

    @contextlib.contextmanager
    def writing(
        self, what: str, need: int | None = None, written: int | None = None
    ) -> Iterator[None]:
        """Turn a full disk (``ENOSPC``, ``EDQUOT``) met inside the block into :meth:`full`."""
        try:
            yield
        except SpillSpaceError:
            raise
        except OSError as err:
            if err.errno not in _FULL:
                raise
            raise self.full(what, need, written) from None

    def __repr__(self) -> str:
        return f"SpillFolder({str(self.path)!r})"


def _remove(path: Path, fd: int) -> None:
    """Remove ``path`` and what it holds, then let go of its lock (the folder's ``fd``)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(fd)


def sweep_stale(parent: str | os.PathLike[str]) -> list[Path]:
    """Remove the spill folders in ``parent`` that no living process holds; returns them.

    A folder is stale when nobody holds its lock (its process died), or, where there are
    no locks, when it has not changed for :data:`STALE_SECONDS`. A half-made
    ``.rowbook-new-*`` folder (its process died between making and naming it) is removed
    after :data:`STALE_SECONDS` too.
    """
    removed = []
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            named, pending = _NAME.fullmatch(entry.name), _NEW.fullmatch(entry.name)
            if not (named or pending) or not entry.is_dir(follow_symlinks=False):
                continue
            if _take_if_stale(Path(entry.path), by_lock=bool(named)):
                removed.append(Path(entry.path))
    return removed


def _take_if_stale(path: Path, *, by_lock: bool) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # gone already, or not ours to open
        return False
    try:
        dead = abandoned(fd) if by_lock else None
        if dead is False:
            return False  # its process is alive
        if dead is None and time.time() - os.fstat(fd).st_mtime < STALE_SECONDS:
            return False
        shutil.rmtree(path, ignore_errors=True)
        return True
    finally:
        os.close(fd)


def pread_into(fd: int, out: np.ndarray, offset: int) -> None:
    """Fill the contiguous array ``out`` with the bytes of file ``fd`` from ``offset`` on."""
    view, done = memoryview(out).cast("B"), 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], offset + done)
        if got == 0:
            raise OSError(f"a spilled file was cut short at byte {offset + done}")
        done += got


def pwrite_all(fd: int, values: np.ndarray, offset: int) -> None:
    """Write the contiguous array ``values`` into file ``fd`` at byte ``offset``."""
    view, done = memoryview(np.ascontiguousarray(values)).cast("B"), 0
    while done < len(view):
        done += os.pwrite(fd, view[done:], offset + done)
