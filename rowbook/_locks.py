"""Who still holds a temporary file: ``flock`` locks that die with their process.

A temporary file or folder that a process is writing is locked by it (:func:`lock`) for as
long as it is being written; the kernel drops the lock when the process ends, however it
ends (``kill -9`` included). Whoever finds such a file later asks :func:`abandoned`: a file
nobody holds is a dead process's leftover and can be removed. Used by
:func:`rowbook.io.atomic_write` (its temporary files) and
:class:`rowbook.data.spill_folder.SpillFolder` (spill folders).

To leave no moment in which a live file looks abandoned, a writer makes it under a name the
sweepers ignore, locks it, then renames it to the name they look at.

Where ``fcntl`` does not exist (Windows), nothing is locked and :func:`abandoned` answers
``None`` (cannot tell); callers then fall back on the file's age.
"""

from __future__ import annotations

import contextlib

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["abandoned", "lock"]


def lock(fd: int) -> None:
    """Hold an exclusive lock on the open file (or folder) ``fd`` until it is closed."""
    if fcntl is not None:
        with contextlib.suppress(OSError):  # a file system without locks: never swept by lock
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def abandoned(fd: int) -> bool | None:
    """Whether no other process holds the lock of ``fd`` (taking it if so); ``None`` when
    locks cannot tell (no ``fcntl``, or a file system without them)."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True
