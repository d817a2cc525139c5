"""The numbers of the GGUF format: its magic, value types and ggml's block types.

A value type is GGUF's ``gguf_type`` (``GGUF_TYPE_UINT8`` = 0, ..., ``GGUF_TYPE_FLOAT64`` =
12); a ggml type is ``ggml_type`` with the block it packs: how many values, in how many
bytes (``ggml``'s ``type_traits``).
"""

from __future__ import annotations

__all__ = ["ARRAY", "GGML_TYPES", "MAGIC", "MAX_DIMS", "STRING", "VALUE_TYPES", "is_utf8"]

MAGIC = b"GGUF"
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS

#: GGUF value type id -> (name, struct format of a scalar, or "" for string / array).
VALUE_TYPES: dict[int, tuple[str, str]] = {
    0: ("uint8", "<B"),
    1: ("int8", "<b"),
    2: ("uint16", "<H"),
    3: ("int16", "<h"),
    4: ("uint32", "<I"),
    5: ("int32", "<i"),
    6: ("float32", "<f"),
    7: ("bool", "<?"),
    8: ("string", ""),
    9: ("array", ""),
    10: ("uint64", "<Q"),
    11: ("int64", "<q"),
    12: ("float64", "<d"),
}
STRING, ARRAY = 8, 9


def is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: ggml type id -> (name, values per block, bytes per block): ggml's ``type_traits``
#: (the sizes of every type, including those rowbook does not dequantise, so that a file
#: holding one still opens and its other tensors read).
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 40),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
}
