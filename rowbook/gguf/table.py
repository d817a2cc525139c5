"""A GGUF model's token table as :class:`~rowbook.vectors.Vectors`, keyed by its tokens.

The table is ``token_embd.weight`` (``(V, d)`` in NumPy's order: ggml stores it as ``d``
values a row), dequantised whatever its type; its keys are the file's
``tokenizer.ggml.tokens``, so a GPT-2-style vocabulary gives the byte-level spellings
(``"Ġthe"``) and a SentencePiece one its pieces (``"▁the"``). Where the head is untied,
``output.weight`` is the second table of the model, read the same way with
``table="output"``. A row past the token list, or a token spelled like an earlier one, is
keyed ``id:N``.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from rowbook.gguf.format import GGUFFile, read_gguf

__all__ = ["TABLES", "gguf_keys", "gguf_vectors"]

#: Which table -> its tensor name in llama.cpp's files.
TABLES = {"input": "token_embd.weight", "output": "output.weight"}


def gguf_keys(tokens: list[str] | None, n_rows: int) -> list[str]:
    """One unique key a row: the token, or ``id:N`` past the list or for a repeated token.

    Examples
    --------
    >>> gguf_keys(["<s>", "a", "a"], 4)
    ['<s>', 'a', 'id:2', 'id:3']
    """
    tokens = tokens or []
    seen: set[str] = set()
    keys = []
    for i in range(n_rows):
        token = tokens[i] if i < len(tokens) else None
        key = token if token is not None and token not in seen else f"id:{i}"
        seen.add(key)
        keys.append(key)
    return keys


def gguf_vectors(
    source: str | os.PathLike[str] | GGUFFile, *, table: Literal["input", "output"] = "input"
) -> Any:
    """The token table of a GGUF file (``table="input"``: ``token_embd.weight``; ``"output"``:
    the untied head ``output.weight``), dequantised, keyed by the file's tokens.

    Returns
    -------
    Vectors
        ``(V, d)`` float32 rows, ``V`` the table's rows (the vocabulary, padded or not).
    """
    from rowbook.vectors import Vectors

    file = source if isinstance(source, GGUFFile) else read_gguf(source)
    if table not in TABLES:
        raise ValueError(f"table must be one of {sorted(TABLES)}, got {table!r}")
    name = TABLES[table]
    if name not in file.tensors:
        tied = table == "output" and TABLES["input"] in file.tensors
        why = (
            "the model ties its head to token_embd.weight: table='input' is both"
            if tied
            else f"it holds {len(file.tensors)} tensors, none of them the token table"
        )
        raise ValueError(f"{file.path} has no tensor {name!r}: {why}")
    info = file.tensors[name]
    if len(info.shape) != 2:
        raise ValueError(f"{file.path}: tensor {name!r} has shape {info.shape}, not (V, d)")
    tokens = file.get("tokenizer.ggml.tokens")
    if tokens is not None and not (
        isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)
    ):
        raise ValueError(f"{file.path}: metadata 'tokenizer.ggml.tokens' must be a list of strings")
    rows = file.tensor(name)  # (V, d)
    try:
        return Vectors(gguf_keys(tokens, info.shape[0]), rows, copy=False)
    except ValueError as err:  # a row of nan or inf: the file is damaged
        raise ValueError(f"{file.path}: tensor {name!r}: {err}") from None
