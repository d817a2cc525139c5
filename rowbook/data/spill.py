"""Whether a corpus's word ids go to disk: the one decision behind ``spill_dir=None``.

The word-vector trainers keep a corpus as word ids, 4 bytes a token
(:mod:`rowbook.data.id_stream`): in RAM, or in a file read back job by job, which keeps
memory flat however long the corpus (the vectors are the same bit for bit). ``spill_dir``
says which:

* ``None`` (the default): decide from the corpus's size. A corpus of files whose ids would
  take more than 1/:data:`SPILL_SHARE` of the memory available now (``MemAvailable``) goes
  to a temporary folder in the system's temporary folder (``TMPDIR``), which is removed when
  training ends; a one-line :class:`SpillNotice` says so, once. The size of the ids is
  estimated from the files' size, at :data:`TEXT_BYTES_PER_TOKEN` bytes of text a token (a
  compressed file counted :data:`COMPRESSION` times its size), so it errs towards spilling;
  a corpus whose first :data:`SAMPLE_BYTES` of text hold more tokens than that (one CJK
  character a token: 4 bytes) is estimated at its own density, less a fifth
  (:func:`text_bytes_per_token`).
  If that folder's disk has no room for the ids (twice, while they are encoded) they stay
  in RAM, and the note says why. Token lists, and text piped to standard input, stay in
  RAM (their size is unknown before they are read): pass a folder to spill them. A
  :class:`~rowbook.corpus_source.CorpusSource` of files (the command line's corpus) is
  sized as its files are.
* ``False``: always in RAM.
* a folder: always there.

On a machine with 16 GB available the line is at 64 MB of ids: about 16M tokens, a text
file of about 80 MB. Spilling costs no speed (the page cache keeps recently read ids; one
epoch of NewsArticles x36 took 376 s spilled and 385 s in RAM).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any

from rowbook.checks import ParameterError
from rowbook.corpus_files import read_batches
from rowbook.corpus_source import COMPRESSION, CorpusSource, corpus_source

__all__ = [
    "COMPRESSION",
    "SAMPLE_BYTES",
    "SPILL_SHARE",
    "TEXT_BYTES_PER_TOKEN",
    "SpillChoice",
    "SpillNotice",
    "available_memory",
    "choose_spill",
    "corpus_text_bytes",
    "id_bytes",
    "resolve_spill_dir",
    "source_id_bytes",
    "spill_choice",
    "text_bytes_per_token",
]

#: The ids spill when they would take more than this fraction (1/N) of the available memory.
SPILL_SHARE = 256
#: Bytes of text per token assumed when estimating a corpus's tokens from its files' size
#: (NewsArticles has 5.9; fewer means more tokens estimated, so spilling sooner).
TEXT_BYTES_PER_TOKEN = 5
#: Bytes of text (decompressed) read from the start of a corpus to measure its bytes a token.
SAMPLE_BYTES = 1 << 20
_SAMPLE_MARGIN = 0.8  # the sample's bytes a token taken a fifth lower: the start of a corpus
# need not be its densest part
_ID_BYTES = 4  # an int32 id per token


class SpillNotice(UserWarning):
    """A trainer chose to keep a corpus's word ids on disk (or could not): said once, as
    Python's default warning filter says things once (a place; again after the filters
    change, which the kernels' compiler does while it compiles one)."""


@dataclass(frozen=True)
class SpillChoice:
    """Where a corpus's ids go: ``folder`` (a parent folder for the spill file) or RAM
    (``None``), and ``note``, the line that tells the user when the choice was made for them
    (``{keep}`` and ``{choose}`` stand for the ways to choose otherwise)."""

    folder: str | os.PathLike[str] | None
    note: str | None = None

    def said(self, keep: str = "spill_dir=False", choose: str = "spill_dir=PATH") -> str | None:
        """The note, naming the options as the caller spells them."""
        return None if self.note is None else self.note.format(keep=keep, choose=choose)


def available_memory() -> int | None:
    """Bytes of memory available to new work now (Linux ``MemAvailable``), or ``None``."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def corpus_text_bytes(corpus: Any) -> int | None:
    """Bytes of text a file corpus holds (compressed files estimated), or ``None`` when that
    is unknown before reading: token lists, a pipe on standard input
    (:meth:`~rowbook.corpus_source.CorpusSource.text_bytes`).

    Examples
    --------
    >>> corpus_text_bytes([["a", "b"]]) is None
    True
    """
    return corpus_source(corpus).text_bytes()


def id_bytes(corpus: Any) -> int | None:
    """The bytes the word ids of a file corpus are estimated to take (see the module
    docstring), or ``None`` when its size is unknown.

    >>> id_bytes([["a"]]) is None
    True
    """
    return source_id_bytes(corpus_source(corpus))


def source_id_bytes(source: CorpusSource) -> int | None:
    """:func:`id_bytes` of a corpus already decided."""
    text = source.text_bytes()
    if text is None:
        return None
    return int(text / text_bytes_per_token(source)) * _ID_BYTES


def text_bytes_per_token(source: CorpusSource) -> float:
    """The bytes of text a token the estimate of a file corpus's ids assumes:
    :data:`TEXT_BYTES_PER_TOKEN`, or fewer for denser text.

    The constant was chosen on English news (5.9 bytes a token), where it errs towards
    spilling; text of one CJK character a token has 4 bytes a token (3 of UTF-8 and a
    space), and the constant underestimated its ids by a fifth (``bench_defaults.py``). So
    the first :data:`SAMPLE_BYTES` of the files' text (decompressed; a few milliseconds) are
    split as the trainer splits them, and a denser sample's own figure, less a fifth, is
    used instead. Standard input is not sampled (it can be read only once).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corpus.txt"
    >>> _ = path.write_text("language models learn embeddings\\n" * 100)
    >>> text_bytes_per_token(corpus_source(path))
    5
    >>> _ = path.write_text("\\u732b \\u5750 \\u5728 \\u57ab \\u4e0a\\n" * 100, encoding="utf-8")
    >>> round(text_bytes_per_token(corpus_source(path)), 2)
    3.2
    """
    if source.reads_stdin:
        return TEXT_BYTES_PER_TOKEN
    text = tokens = 0
    with contextlib.closing(read_batches(source.files, "replace", False, SAMPLE_BYTES)) as lines:
        for batch, ends_line in lines:
            for line in batch:
                text += len(line.encode("utf-8")) + ends_line  # its line end counted
                tokens += len(source.tokenize(line))
            if text >= SAMPLE_BYTES:
                break
    if tokens == 0:
        return TEXT_BYTES_PER_TOKEN
    return min(TEXT_BYTES_PER_TOKEN, _SAMPLE_MARGIN * text / tokens)


def _mb(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def choose_spill(corpus: Any, spill_dir: Any = None) -> SpillChoice:
    """Where the ids of ``corpus`` (anything :func:`~rowbook.corpus_source.corpus_source`
    takes, a :class:`~rowbook.corpus_source.CorpusSource` too) go for this ``spill_dir``
    (see the module docstring).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corpus.txt"
    >>> _ = path.write_text("a b")
    >>> choose_spill([["a", "b"]]), choose_spill(path, spill_dir=False)
    (SpillChoice(folder=None, note=None), SpillChoice(folder=None, note=None))
    >>> choose_spill([["a"]], spill_dir="/scratch").folder
    '/scratch'
    """
    return spill_choice(corpus_source(corpus), spill_dir)


def spill_choice(source: CorpusSource, spill_dir: Any = None) -> SpillChoice:
    """:func:`choose_spill` for a corpus already decided."""
    if spill_dir is False:
        return SpillChoice(None)
    if spill_dir is not None:
        if not isinstance(spill_dir, str | os.PathLike) or isinstance(spill_dir, bool):
            raise ParameterError(
                "spill_dir",
                spill_dir,
                "None (decide from the corpus's size), False (keep the ids in RAM) or a folder",
            )
        return SpillChoice(spill_dir)
    ids, memory = source_id_bytes(source), available_memory()
    if ids is None or memory is None or ids * SPILL_SHARE <= memory:
        return SpillChoice(None)
    folder = tempfile.gettempdir()
    sizes = (
        f"about {_mb(ids)} of word ids, more than 1/{SPILL_SHARE} of the {_mb(memory)} available"
    )
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if free is not None and free < 2 * ids and 4 * ids < memory:
        return SpillChoice(
            None,
            f"the corpus holds {sizes}, but {folder} has only {_mb(free)} free for them "
            "(twice that while encoding): they stay in RAM; {choose} spills them elsewhere",
        )
    return SpillChoice(
        folder,
        f"the corpus holds {sizes}: they go to a temporary folder in {folder}, read back "
        "job by job (removed when training ends); {keep} keeps them in RAM, "
        "{choose} chooses the folder",
    )


def resolve_spill_dir(corpus: CorpusSource, spill_dir: Any = None) -> str | os.PathLike[str] | None:
    """The folder for the ids of ``corpus`` (``None``: RAM), as :func:`choose_spill` decides;
    a choice made for the user is said once, as a :class:`SpillNotice`."""
    choice = spill_choice(corpus, spill_dir)
    if choice.note is not None:
        warnings.warn(choice.said(), SpillNotice, stacklevel=3)
    return choice.folder
