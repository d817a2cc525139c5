"""What a fitted :class:`~rowbook.models.TransformerLM` keeps besides its network.

The model's learned state is the network family's
:class:`~rowbook.models.network.NetworkState`; its ``extras`` are an :class:`LMExtras`,
made by ``fit``, by a saved file and by the checkpoint readers (Hugging Face, GGUF), and
read by the checkpoint writers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rowbook.text import TextPipeline

__all__ = ["LMExtras"]


@dataclass(frozen=True)
class LMExtras:
    """The fitted ``pipeline`` (None for a checkpoint without a tokenizer rowbook reads),
    ``vocab_size`` (the rows V of the table), the end-of-text id ``eos`` (None when a
    checkpoint names none) and ``dropout_rng``, the state the dropout masks continue from
    (a resumed or loaded model; None: the seed's)."""

    pipeline: TextPipeline | None
    vocab_size: int
    eos: int | None
    dropout_rng: dict[str, Any] | None = None
