"""Demo section 1: "The cat sat on the mat" from text to ids, rows, and a row-sparse gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.demo._context import Context, matrix
from rowbook.demo.arithmetic import one_hot_cost

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
    arithmetic = _arithmetic(len(ids), len(vocab), HAND_TABLE.shape[1])
    echo(
        "what the one-hot form costs:\n"
        + "\n".join(f"  {line}" for line in arithmetic["lines"])
        + "\n"
    )

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
        "arithmetic": {k: v for k, v in arithmetic.items() if k != "lines"},
        "gradient_rows": {
            labels[i]: row.tolist() for i, row in zip(grad.indices, grad.values, strict=True)
        },
    }


#: The sizes the chapters use for the one-hot arithmetic: a long sequence over a large
#: vocabulary (LLaMA 3's 128,000), and GPT-2's table for scale.
LONG_SEQUENCE, LARGE_VOCAB, GPT2_TABLE = 1_000, 128_000, (50_257, 768)


def _arithmetic(tokens: int, vocab_size: int, dim: int) -> dict[str, Any]:
    """The one-hot form's cost for the sentence, and at the scale of real vocabularies."""
    toy = one_hot_cost(tokens, vocab_size, dim)
    long = one_hot_cost(LONG_SEQUENCE, LARGE_VOCAB)
    gpt2 = one_hot_cost(1, *GPT2_TABLE)
    lines = [
        f"one-hot matrix {tokens} x {vocab_size} = {toy.numbers} numbers, {toy.ones} of them ones: "
        f"density {toy.density:.1%}",
        f"at V = {LARGE_VOCAB:,} a one-hot row is 1 one in {LARGE_VOCAB:,} numbers "
        f"(density {long.density:.5%}); {LONG_SEQUENCE:,} tokens of them in float32: "
        f"{LONG_SEQUENCE:,} x {LARGE_VOCAB:,} x 4 bytes = {long.nbytes:,} bytes = "
        f"{long.nbytes / 1e6:,.0f} MB",
        f"one_hot @ E: {tokens} x {vocab_size} x {dim} = {toy.multiply_adds} multiply-adds, "
        f"{toy.wasted} of them by zero; E[ids] copies {toy.copied} numbers and multiplies none",
        f"the table E: {vocab_size} x {dim} = {toy.table_parameters} parameters "
        f"(GPT-2's: {GPT2_TABLE[0]:,} x {GPT2_TABLE[1]} = {gpt2.table_parameters:,})",
    ]
    return {
        "numbers": toy.numbers,
        "ones": toy.ones,
        "density": toy.density,
        "multiply_adds": toy.multiply_adds,
        "multiply_adds_by_zero": toy.wasted,
        "table_parameters": toy.table_parameters,
        "long_sequence_bytes": long.nbytes,
        "lines": lines,
    }
