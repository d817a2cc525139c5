"""The vocabulary-size question: more entries, shorter sequences, a heavier embedding table.

:func:`vocab_sweep` trains one subword scheme at several vocabulary sizes on the same
counts (the corpus is read and counted once) and measures each on held-out text:

* ``tokens_per_char``: tokens per character of held-out text (no template tokens), so a
  sequence of ``n`` characters costs about ``n * tokens_per_char`` positions;
* ``unknown_share``: the share of tokens that stand for text the vocabulary cannot spell:
  ``[UNK]`` for WordPiece, the unknown piece or a ``<0xXX>`` byte piece for Unigram, and
  for byte-level BPE a token whose bytes are not whole UTF-8 characters;
* ``parameters`` and ``table_bytes``: the ``(V, d)`` embedding table the ids index,
  ``V * d`` numbers of ``dtype``.

:func:`sweep_table` prints the rows as a table, :func:`plot_sweep` draws tokens per
character and the table's size against the vocabulary size, one picture.

Examples
--------
>>> texts = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 30
>>> rows = vocab_sweep(texts, model="wordpiece", sizes=[28, 36], dim=8)
>>> [(r.vocab_size, r.parameters) for r in rows]
[(28, 224), (36, 288)]
>>> rows[0].tokens_per_char > rows[1].tokens_per_char
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_int

__all__ = ["SweepRow", "plot_sweep", "sweep_figure", "sweep_table", "vocab_sweep"]

Model = Literal["wordpiece", "unigram", "bpe"]


@dataclass(frozen=True)
class SweepRow:
    """One vocabulary size's measurements (see the module docstring)."""

    model: str
    vocab_size: int
    tokens_per_char: float
    unknown_share: float
    parameters: int
    table_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _split(
    texts: Iterable[str], held_out: Sequence[str] | None, every: int
) -> tuple[list[str], list[str]]:
    lines = list(texts)
    bad = next((t for t in lines if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"texts must be str, got {type(bad).__name__}")
    if held_out is not None:
        return lines, list(held_out)
    train = [t for i, t in enumerate(lines) if i % every != every - 1]
    test = [t for i, t in enumerate(lines) if i % every == every - 1]
    return train, test or lines[-1:]


def _unknown_ids(tokenizer: Any) -> set[int]:
    """Ids that spell text the vocabulary could not (for byte-level BPE: partial characters)."""
    from rowbook.text import ByteLevelBPE, Unigram, WordPiece
    from rowbook.text.unigram.model import BYTE_PIECES

    if isinstance(tokenizer, WordPiece):
        return {tokenizer._unk_id} - {-1}
    if isinstance(tokenizer, Unigram):
        ids = {tokenizer.vocab[b] for b in BYTE_PIECES if b in tokenizer.vocab}
        return ids | ({tokenizer.unk_id} if tokenizer.unk_id is not None else set())
    if isinstance(tokenizer, ByteLevelBPE):
        out = set()
        for i, spelled in enumerate(tokenizer._id_bytes):
            try:
                spelled.decode("utf-8")
            except UnicodeDecodeError:
                out.add(i)
        return out
    return set()


def _measure(tokenizer: Any, held_out: list[str], model: str, dim: int, itemsize: int) -> SweepRow:
    encode = (lambda ts: tokenizer.encode_batch(ts, add_special_tokens=False)) if model != "bpe" \
        else tokenizer.encode_batch  # fmt: skip
    ids = np.concatenate(
        [np.asarray(e.ids, dtype=np.int64) for e in encode(held_out)] or [np.zeros(0, np.int64)]
    )
    unknown = np.isin(ids, np.array(sorted(_unknown_ids(tokenizer)), dtype=np.int64))
    chars = max(sum(map(len, held_out)), 1)
    V = len(tokenizer)
    return SweepRow(
        model,
        V,
        ids.size / chars,
        float(unknown.mean()) if ids.size else 0.0,
        V * dim,
        V * dim * itemsize,
    )


def vocab_sweep(texts: Iterable[str] | os.PathLike, *, model: Model = "wordpiece", sizes: Sequence[int],
                held_out: Sequence[str] | None = None, every: int = 10, dim: int = 768,
                dtype: str = "float32", workers: int | None = None) -> list[SweepRow]:  # fmt: skip
    """Train ``model`` at each of ``sizes`` and measure it on held-out text.

    Parameters
    ----------
    texts : Iterable[str] or os.PathLike
        The corpus (a file or folder is read line by line).
    model : {"wordpiece", "unigram", "bpe"}
        The scheme: BERT's WordPiece, Unigram with Metaspace words, or byte-level BPE.
    sizes : Sequence[int]
        Vocabulary sizes to train, special tokens included.
    held_out : Sequence[str], optional
        The text to measure on; by default every ``every``-th line of the corpus, which is
        then left out of training.
    dim, dtype
        The embedding table's width and number type, for its size.
    workers : int, optional
        Processes counting the corpus (``None``: one per CPU).
    """
    from rowbook.corpus_files import iter_lines
    from rowbook.text import ByteLevelBPE, Unigram, WordPiece
    from rowbook.text.word_counts import count_words

    check_choice("model", model, ("wordpiece", "unigram", "bpe"))
    sizes = [check_int("sizes[]", s, 1) for s in sizes]
    if not sizes:
        raise ValueError(
            "sizes is empty; give the vocabulary sizes to compare, e.g. [1000, 4000, 16000]"
        )
    dim, every = check_int("dim", dim, 1), check_int("every", every, 2)
    itemsize = np.dtype(dtype).itemsize
    source = (
        iter_lines(texts)
        if isinstance(texts, os.PathLike | str) and Path(texts).exists()
        else texts
    )
    train, test = _split(source, held_out, every)
    rows = []
    if model == "bpe":
        counts = ByteLevelBPE().count_words(train, workers=workers)
        for size in sizes:
            bpe = ByteLevelBPE().fit_word_counts(counts, max(size, 256))
            rows.append(_measure(bpe, test, model, dim, itemsize))
        return rows
    cls, specials = (WordPiece, ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")) if model == "wordpiece" \
        else (Unigram, ("<unk>",))  # fmt: skip
    counts = count_words(train, cls()._training_words, workers=workers)
    for size in sizes:
        tok = cls().fit(
            (),
            size,
            word_counts=counts,
            special_tokens=specials,
            **({"min_frequency": 0} if model == "wordpiece" else {}),
        )
        rows.append(_measure(tok, test, model, dim, itemsize))
    return rows


def sweep_table(rows: Sequence[SweepRow]) -> str:
    """The rows as an aligned text table."""
    head = ["model", "vocab", "tokens/char", "unknown %", "table params", "table MB"]
    body = [[r.model, f"{r.vocab_size:,}", f"{r.tokens_per_char:.4f}", f"{100 * r.unknown_share:.3f}",
             f"{r.parameters:,}", f"{r.table_bytes / 2**20:.1f}"] for r in rows]  # fmt: skip
    widths = [max(len(c) for c in col) for col in zip(head, *body, strict=True)]
    lines = ["  ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in [head, *body]]  # fmt: skip
    return "\n".join(lines)


def sweep_figure(
    rows: Sequence[SweepRow], *, figsize: tuple[float, float] = (8.0, 4.5), dpi: int = 100
) -> Any:
    """Tokens per character (left axis) and the table's megabytes (right axis) against the
    vocabulary size (log scale), one line per model."""
    from rowbook.viz.plots import _new_figure

    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    right = ax.twinx()
    for name in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == name]
        x = [r.vocab_size for r in mine]
        ax.plot(
            x, [r.tokens_per_char for r in mine], marker="o", label=f"{name}: tokens per character"
        )
        right.plot(x, [r.table_bytes / 2**20 for r in mine], marker="s", linestyle="--",
                   label=f"{name}: table MB")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("tokens per character (held-out)")
    right.set_ylabel("embedding table (MB)")
    ax.grid(True, alpha=0.3)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], fontsize=8)
    fig.suptitle("vocabulary size: sequence length against table size")
    return fig


def plot_sweep(rows: Sequence[SweepRow], path: str | os.PathLike, **kwargs: Any) -> Path:
    """Write :func:`sweep_figure` as a PNG at ``path``; returns the path."""
    from rowbook.viz.plots import save_png

    return save_png(sweep_figure(rows, **kwargs), path)
