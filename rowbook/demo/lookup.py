"""Demo section 1: "The cat sat on the mat" from text to ids, rows, and a row-sparse gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.demo._context import Context, matrix

__all__ = ["HAND_TABLE", "TARGETS", "lookup_walkthrough"]

# The cat sat on the mat example's hand-written 7 x 4 table: one row per vocabulary entry.
HAND_TABLE = np.array(
    [
        [0.00, 0.00, 0.00, 0.00],  # <pad>
        [0.10, 0.20, 0.30, 0.40],  # <unk>
        [0.20, 0.10, 0.05, 0.30],  # the
        [0.80, 0.60, 0.20, 0.10],  # cat
        [0.40, 0.70, 0.90, 0.20],  # sat
        [0.30, 0.30, 0.10, 0.50],  # on
        [0.70, 0.50, 0.30, 0.20],  # mat
    ],
    dtype=np.float32,
)
TARGETS = np.array([0.0, 1.0, 1.0, 0.5, 0.0, 1.0], dtype=np.float32)  # one value per position
DIMS = ["d0", "d1", "d2", "d3"]


def lookup_walkthrough(ctx: Context) -> dict[str, Any]:
    """One sentence through every stage, with the gradient of a toy squared-error loss."""
    from rowbook.autograd import Tensor
    from rowbook.nn import Embedding
    from rowbook.nn import functional as F
    from rowbook.text import Normalizer, Vocab, WordTokenizer

    echo = ctx.echo
    text = "The cat sat on the mat"
    normalized = Normalizer(case="lower", collapse_whitespace=True, strip=True)(text)
    tokens = WordTokenizer().tokenize(normalized)
    vocab = Vocab().fit([tokens])
    ids = vocab.encode(tokens)
    echo(f"text        {text!r}\nnormalized  {normalized!r}\ntokens      {tokens}")
    echo(f"vocab       {vocab.stoi}\nids         {ids.tolist()}\n")

    labels = vocab.itos
    one_hot = F.one_hot(ids, len(vocab)).astype(np.float32)  # (6, 7)
    echo("one-hot rows (6 x 7):\n" + matrix(one_hot.data, tokens, labels, "{:.0f}") + "\n")
    echo("embedding table E (7 x 4):\n" + matrix(HAND_TABLE, labels, DIMS) + "\n")

    embedding = Embedding.from_pretrained(HAND_TABLE, freeze=False, padding_idx=0, sparse=True)
    looked_up = embedding(ids)  # (6, 4)
    same = np.array_equal(looked_up.data, (one_hot @ Tensor(HAND_TABLE)).data)
    echo("lookup E[ids] (6 x 4):\n" + matrix(looked_up.data, tokens, DIMS) + "\n")
    echo(f"E[ids] == one_hot(ids) @ E, bit for bit: {same}\n")

    target = np.repeat(TARGETS[:, None], 4, axis=1)  # (6, 4)
    loss = ((looked_up - target) ** 2).mean()
    loss.backward()
    grad = embedding.weight.grad
    echo(f"loss = mean((E[ids] - target)^2) = {loss.item():.4f}")
    echo(
        f"row-sparse gradient: rows {grad.indices.tolist()} of {grad.shape[0]} "
        f"(<pad> and <unk> get none; 'the' sums two positions)"
    )
    echo(matrix(grad.values, [labels[i] for i in grad.indices], DIMS, "{:.4f}") + "\n")
    return {
        "text": text,
        "tokens": tokens,
        "vocab": vocab.stoi,
        "ids": ids.tolist(),
        "one_hot": one_hot.data.tolist(),
        "table": HAND_TABLE.tolist(),
        "lookup": looked_up.data.tolist(),
        "lookup_equals_matmul": bool(same),
        "loss": loss.item(),
        "gradient_rows": {
            labels[i]: row.tolist() for i, row in zip(grad.indices, grad.values, strict=True)
        },
    }
