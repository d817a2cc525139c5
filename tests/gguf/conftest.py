"""GGUF files written by ``gguf``'s own writer, for the reader to be held to ``gguf``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

#: ggml type name -> byte offsets of its fp16 scales (``d``, ``dmin``) in a block.
SCALES = {
    "Q8_0": (0,),
    "Q4_0": (0,),
    "Q4_1": (0, 2),
    "Q5_0": (0,),
    "Q5_1": (0, 2),
    "Q2_K": (80, 82),
    "Q3_K": (108,),
    "Q4_K": (0, 2),
    "Q5_K": (0, 2),
    "Q6_K": (208,),
}


def random_blocks(type_name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """Random stored bytes of a ``shape`` tensor of ``type_name`` whose fp16 scales are finite
    (``gguf`` quantises only the non-K types, so K tensors are written as random blocks):
    ``(rows, row_bytes)`` uint8."""
    qtype = gguf.GGMLQuantizationType[type_name]
    block, type_bytes = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(seed)
    n_blocks = shape[0] * shape[1] // block
    raw = rng.integers(0, 256, size=(n_blocks, type_bytes), dtype=np.uint8)
    for at in SCALES.get(type_name, ()):
        scale = rng.uniform(-0.1, 0.1, n_blocks).astype(np.float16)
        raw[:, at : at + 2] = scale.view(np.uint8).reshape(n_blocks, 2)
    if type_name in ("F16", "BF16"):
        values = rng.standard_normal(n_blocks).astype(np.float32)
        raw = (values.astype(np.float16) if type_name == "F16" else values).view(np.uint8)
        if type_name == "BF16":
            raw = raw.reshape(-1, 4)[:, 2:]
    return np.ascontiguousarray(raw).reshape(shape[0], -1)


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

    return SimpleNamespace(write=write, random_blocks=random_blocks, SCALES=SCALES)
