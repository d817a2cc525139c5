"""GGUF files written by ``gguf``'s own writer, for the reader to be held to ``gguf``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rowbook.gguf import quantize

gguf = pytest.importorskip("gguf")


def random_blocks(type_name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """Random stored bytes of a ``shape`` tensor of ``type_name`` with finite scales (``gguf``
    quantises only the non-K types, so K tensors are written as random blocks)."""
    return quantize.random_blocks(type_name, shape, np.random.default_rng(seed))


def write(path: Path, tensors: dict, metadata: dict | None = None, arch: str = "llama") -> Path:
    """A GGUF file written by ``gguf.GGUFWriter``: ``tensors`` maps a name to a float32
    array (stored as F32) or to ``(stored bytes, type name)``; ``metadata`` maps a key to a
    value written with ``add_key_value`` (``(value, GGUFValueType)``) or a plain value."""
    writer = gguf.GGUFWriter(path, arch)
    for key, value in (metadata or {}).items():
        if key == "general.alignment":
            writer.add_custom_alignment(value)
        elif isinstance(value, tuple):
            writer.add_key_value(key, value[0], value[1])
        elif isinstance(value, str):
            writer.add_string(key, value)
        else:
            writer.add_key_value(key, value, gguf.GGUFValueType.get_type(value))
    for name, tensor in tensors.items():
        if isinstance(tensor, tuple):
            raw, type_name = tensor
            writer.add_tensor(name, raw, raw_dtype=gguf.GGMLQuantizationType[type_name])
        else:
            writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(scope="session")
def gguf_files():
    """The helpers above, for the tests of this folder."""
    from types import SimpleNamespace

    return SimpleNamespace(write=write, random_blocks=random_blocks, SCALES=quantize.SCALE_OFFSETS)
