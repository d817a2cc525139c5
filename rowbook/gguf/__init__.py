"""GGUF files, the format of llama.cpp, Ollama and LM Studio: the container
(:mod:`~rowbook.gguf.format`), its quantised blocks (:mod:`~rowbook.gguf.quants`, beside
:mod:`~rowbook.gguf.quants_reference`), and what rowbook builds from one file: the token
table (:mod:`~rowbook.gguf.table`), the tokenizer (:mod:`~rowbook.gguf.tokenizer`), the
model (:mod:`~rowbook.models.language_model.gguf_checkpoint`, written back by :mod:`~rowbook.models.language_model.gguf_save`). Each is
imported on first use: opening a table does not import the tokenizers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from rowbook.gguf.format import GGUFFile, TensorInfo, read_gguf
    from rowbook.gguf.table import gguf_vectors
    from rowbook.gguf.tokenizer import GGUFTokenizer, gguf_tokenizer

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "format": ["GGUFFile", "TensorInfo", "read_gguf"],
        "table": ["gguf_vectors"],
        "tokenizer": ["GGUFTokenizer", "gguf_tokenizer"],
    },
)
__all__ = ["GGUFFile", "GGUFTokenizer", "TensorInfo", "gguf_tokenizer", "gguf_vectors", "read_gguf"]
