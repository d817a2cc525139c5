"""GGUF files that lie: truncated anywhere, counts and lengths past the file, tensors that
point outside the data or into each other, types no GGUF has.

Each file is built here byte by byte (:func:`build`), so a case can make any field claim
what it likes. Each must end in a ``ValueError`` naming the file, the field and its byte
offset, before anything is allocated from a claim."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import rowbook
from rowbook.gguf import read_gguf


def _string(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def _info(name: str, dims: tuple[int, ...], ggml_type: int, offset: int) -> bytes:
    return (
        _string(name)
        + struct.pack("<I", len(dims))
        + b"".join(struct.pack("<Q", d) for d in dims)
        + struct.pack("<IQ", ggml_type, offset)
    )


F32_ROWS = np.arange(8, dtype=np.float32).tobytes()  # a (2, 4) F32 tensor


def build(
    *,
    keys: list[bytes] | None = None,
    infos: list[bytes] | None = None,
    data: bytes = F32_ROWS,
    version: int = 3,
    counts: tuple[int, int] | None = None,
    alignment: int = 32,
) -> bytes:
    """A GGUF file: ``keys`` (each a key, its type and value, as bytes), ``infos``, padding to
    ``alignment``, ``data``; ``counts`` overrides (tensor_count, kv_count)."""
    keys = (
        [_string("general.architecture") + struct.pack("<I", 8) + _string("llama")]
        if keys is None
        else keys
    )
    infos = [_info("w", (4, 2), 0, 0)] if infos is None else infos
    n = counts or (len(infos), len(keys))
    head = b"GGUF" + struct.pack("<IQQ", version, *n) + b"".join(keys) + b"".join(infos)
    return head + b"\0" * (-len(head) % alignment) + data


def _key(name: str, vtype: int, value: bytes) -> bytes:
    return _string(name) + struct.pack("<I", vtype) + value


def _refused(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "hostile.gguf"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as err:
        file = read_gguf(path)
        [file.tensor(name) for name in file.tensors]
    assert str(path) in str(err.value)
    with pytest.raises(ValueError):  # the one loader keeps the promise too
        file = rowbook.load(path)
        [file.tensor(name) for name in file.tensors]


def test_the_valid_file_reads(tmp_path):
    path = tmp_path / "ok.gguf"
    path.write_bytes(build())
    np.testing.assert_array_equal(read_gguf(path).tensor("w"), np.arange(8).reshape(2, 4))


def test_every_truncation_is_refused(tmp_path):
    data = build(keys=[_key("k", 9, struct.pack("<IQ", 8, 2) + _string("ab") + _string("c"))])
    path = tmp_path / "cut.gguf"
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=str(path)):
            file = read_gguf(path)
            file.tensor("w")


ARRAY = 9
CASES = {
    "tensor count": (build(counts=(2**62, 1)), r"tensor_count at byte 8: .* a lying count"),
    "key count": (build(counts=(1, 2**40)), r"kv_count at byte 16: .* a lying count"),
    "string length": (
        build(keys=[struct.pack("<Q", 2**60) + b"abc"]),
        r"metadata key 0 at byte 24: a string of 1,152,921,504,606,846,976 bytes",
    ),
    "array count": (
        build(keys=[_key("a", ARRAY, struct.pack("<IQ", 10, 2**50))]),
        r"metadata 'a' at byte 37: an array of 1,125,899,906,842,624 uint64 needs",
    ),
    "array of strings count": (
        build(keys=[_key("a", ARRAY, struct.pack("<IQ", 8, 2**40))]),
        r"metadata 'a' .* an array of 1,099,511,627,776 string needs",
    ),
    "nested arrays": (
        build(keys=[_key("a", ARRAY, struct.pack("<IQ", ARRAY, 1) * 4 + struct.pack("<IQ", 0, 0))]),
        r"arrays nested deeper than 3 levels",
    ),
    "value type": (
        build(keys=[_key("a", 99, b"")]),
        r"metadata 'a' .* value type 99 is not a GGUF",
    ),
    "element type": (
        build(keys=[_key("a", ARRAY, struct.pack("<IQ", 77, 1))]),
        r"metadata 'a'\[0\] at byte 49: value type 77 is not a GGUF type",
    ),
    "duplicate key": (
        build(keys=[_key("a", 4, b"\1\0\0\0"), _key("a", 4, b"\2\0\0\0")]),
        r"metadata key 'a' at byte \d+: appears twice",
    ),
    "not UTF-8": (
        build(keys=[_string(b"\xff\xfe") + struct.pack("<I", 4) + b"\0" * 4]),
        r"metadata key 0 at byte 24: the string is not UTF-8",
    ),
    "version": (build(version=1), r"version 1; rowbook reads GGUF versions 2 and 3"),
    "big-endian": (build(version=3 << 24), r"big-endian"),
    "ggml type": (
        build(infos=[_info("w", (4, 2), 99, 0)]),
        r"tensor 'w' at byte \d+: ggml type 99 is not",
    ),
    "n_dims": (build(infos=[_info("w", (1,) * 5, 0, 0)]), r"n_dims = 5; ggml tensors have 1 to 4"),
    "no dims": (build(infos=[_info("w", (), 0, 0)]), r"n_dims = 0"),
    "shape past the data": (
        build(infos=[_info("w", (4, 2**40), 0, 0)]),
        r"tensor 'w' at byte \d+: shape \(1099511627776, 4\) of F32 needs bytes",
    ),
    "offset past the data": (
        build(infos=[_info("w", (4, 2), 0, 2**62)]),
        r"needs bytes \[4,611,686,018,427,387,904",
    ),
    "misaligned offset": (
        build(infos=[_info("w", (2,), 0, 4)]),
        r"offset 4 is not a multiple of 32",
    ),
    "overlapping tensors": (
        build(infos=[_info("w", (4, 2), 0, 0), _info("v", (4,), 0, 0)]),
        r"its data overlaps tensor",
    ),
    "duplicate tensor": (
        build(infos=[_info("w", (2,), 0, 0), _info("w", (2,), 0, 0)]),
        r"tensor 'w' at byte \d+: appears twice",
    ),
    "partial block": (
        build(infos=[_info("w", (16,), 8, 0)]),
        r"its rows of 16 values are not whole Q8_0 blocks of 32",
    ),
    "alignment": (
        build(keys=[_key("general.alignment", 4, struct.pack("<I", 24))]),
        r"general.alignment' at byte 0: 24 is not a power of two",
    ),
    "alignment type": (
        build(keys=[_key("general.alignment", 10, struct.pack("<Q", 32))]),
        r"general.alignment' at byte 0: must be a uint32",
    ),
    "magic": (b"GGUG" + build()[4:], r"is not a GGUF file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_lying_file_is_refused_naming_the_field(case, tmp_path):
    data, message = CASES[case]
    _refused(tmp_path, data, message)


def _model_keys(**override) -> list[bytes]:
    """The metadata of a one-layer llama (F32 ``w`` stands for its missing tensors)."""
    u32 = {
        "llama.context_length": 16,
        "llama.embedding_length": 4,
        "llama.block_count": 1,
        "llama.feed_forward_length": 8,
        "llama.attention.head_count": 2,
    } | override
    keys = [_string("general.architecture") + struct.pack("<I", 8) + _string("llama")]
    keys += [_key(k, 10, struct.pack("<Q", v)) for k, v in u32.items()]
    keys.append(_key("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)))
    return keys


TABLE = _info("token_embd.weight", (4, 2), 0, 0)  # (2, 4): V = 2, d = 4


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"llama.block_count": 10**9}, r"n_layers = 1000000000 is outside 1..1,024"),
        ({"llama.embedding_length": 2**40}, r"d_model = 1099511627776 is outside"),
        ({"llama.attention.head_count": 3}, r"n_heads"),
        ({}, r"tensor 'token_embd.weight' \(the token table\) is missing"),
    ],
)
def test_a_model_whose_metadata_lies_is_refused(override, message, tmp_path):
    from rowbook.models import TransformerLM

    path = tmp_path / "model.gguf"
    infos = [TABLE] if override else []
    path.write_bytes(build(keys=_model_keys(**override), infos=infos))
    with pytest.raises(ValueError, match=message):
        TransformerLM.from_gguf(path)


def test_a_model_whose_table_disagrees_with_its_metadata_is_refused(tmp_path):
    from rowbook.models import TransformerLM

    path = tmp_path / "model.gguf"
    table = _info("token_embd.weight", (2, 4), 0, 0)  # (4, 2): d = 2, not 4
    path.write_bytes(build(keys=_model_keys(), infos=[table]))
    with pytest.raises(
        ValueError, match=r"token_embd.weight' has shape \(4, 2\), but the metadata"
    ):
        TransformerLM.from_gguf(path)


def _tokenizer_keys(tokens: list[str], merges: list[str], types: list[int] | None = None):
    strings = lambda items: struct.pack("<IQ", 8, len(items)) + b"".join(map(_string, items))  # noqa: E731
    keys = [
        _key("tokenizer.ggml.model", 8, _string("gpt2")),
        _key("tokenizer.ggml.tokens", ARRAY, strings(tokens)),
        _key("tokenizer.ggml.merges", ARRAY, strings(merges)),
    ]
    if types is not None:
        keys.append(
            _key(
                "tokenizer.ggml.token_type",
                ARRAY,
                struct.pack("<IQ", 5, len(types)) + struct.pack(f"<{len(types)}i", *types),
            )
        )
    return keys


@pytest.mark.parametrize(
    ("tokens", "merges", "types", "message"),
    [
        (["a", "b"], [], None, r"vocab lacks 254 byte symbols"),
        (["a", "a"], [], None, r"token 'a' has two ids, 0 and 1"),
        (["a"], ["a"], None, r"merge 0 'a' is not 'left right'"),
        (["a", "b"], [], [1], r"token_type' must be an array of 2 numbers"),
        (["a", "b"], [], [1, 9], r"holds a type not 1-6"),
    ],
)
def test_a_tokenizer_that_lies_is_refused(tokens, merges, types, message, tmp_path):
    from rowbook.gguf import gguf_tokenizer

    path = tmp_path / "tok.gguf"
    path.write_bytes(build(keys=_tokenizer_keys(tokens, merges, types)))
    with pytest.raises(ValueError, match=message):
        gguf_tokenizer(path)
