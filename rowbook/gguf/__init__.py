"""GGUF files, the format of llama.cpp, Ollama and LM Studio: the container
(:mod:`~rowbook.gguf.format`), its quantised blocks (:mod:`~rowbook.gguf.quants`, beside
:mod:`~rowbook.gguf.quants_reference`), and what rowbook builds from one file.
"""

from __future__ import annotations

from rowbook.gguf.format import GGUFFile, TensorInfo, read_gguf
from rowbook.gguf.table import gguf_vectors
from rowbook.gguf.tokenizer import GGUFTokenizer, gguf_tokenizer

__all__ = ["GGUFFile", "GGUFTokenizer", "TensorInfo", "gguf_tokenizer", "gguf_vectors", "read_gguf"]
