"""Demo section 4: byte-pair encoding, first on the paper's toy corpus, then on bytes."""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context
from rowbook.demo.texts import BPE_PAPER_CORPUS, PARAGRAPH

__all__ = ["bpe_merges"]

N_PAPER_MERGES = 10
N_BYTE_MERGES = 60
SHOWN = 12
EXAMPLE = "Looking up the rows of unseen tokens"


def bpe_merges(ctx: Context) -> dict[str, Any]:
    """The paper's merge trace and segmentation; a byte-level BPE's first merges, saved."""
    from rowbook.text import ByteLevelBPE, learn_bpe, segment

    echo = ctx.echo
    counts = ", ".join(f"{w} x{c}" for w, c in BPE_PAPER_CORPUS.items())
    echo(f"Sennrich et al.'s toy corpus ({counts}), characters + '</w>', {N_PAPER_MERGES} merges:")
    trace = learn_bpe(BPE_PAPER_CORPUS, N_PAPER_MERGES)
    lines = [f"{k:>2}. {step}" for k, step in enumerate(trace, start=1)]
    half = (len(lines) + 1) // 2
    width = max(map(len, lines[:half]))
    for left, right in zip(lines[:half], [*lines[half:], ""][:half], strict=True):
        echo(f"  {left:<{width}}   {right}".rstrip())
    unseen = {w: segment(w, trace) for w in ("lowest", "newer")}
    echo("  unseen words: " + ", ".join(f"{w} -> {s}" for w, s in unseen.items()) + "\n")

    texts = PARAGRAPH.splitlines()
    bpe = ByteLevelBPE().fit(texts, vocab_size=256 + N_BYTE_MERGES, min_count=2)
    bpe.save(ctx.file("bpe.json"))
    merges = bpe.merge_trace
    echo(
        f"byte-level BPE on a built-in paragraph ({len(PARAGRAPH.split())} words): 256 bytes + "
        f"{len(merges)} merges ('Ġ' is the byte of a space); the first {SHOWN}:"
    )
    echo("  " + ", ".join(f"{m.token} ({m.count})" for m in merges[:SHOWN]))
    tokens = bpe.tokenize(EXAMPLE)
    ids = bpe.encode(EXAMPLE).ids
    same = bpe.decode(ids) == EXAMPLE
    echo(f"  {EXAMPLE!r} -> {len(tokens)} tokens {tokens}")
    echo(f"  ids {ids}; decode(encode(text)) == text: {same}")
    echo(f"try: rowbook tokenize --bpe {ctx.out / 'bpe.json'} 'the rows of the table'\n")
    return {
        "paper_corpus": BPE_PAPER_CORPUS,
        "paper_merges": [[s.left, s.right, s.count] for s in trace],
        "paper_segmentations": unseen,
        "byte_merges": [[m.left, m.right, m.count] for m in merges],
        "example": EXAMPLE,
        "example_tokens": tokens,
        "example_ids": ids,
        "round_trip": same,
    }
