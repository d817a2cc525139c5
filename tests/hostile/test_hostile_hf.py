"""Hugging Face checkpoint folders that lie: configs that disagree with their tensors, unknown
model types, absurd sizes, safetensors headers that claim bytes the file does not have.

Each must end in a ``ValueError`` (or ``FileNotFoundError``) naming the file and what is wrong,
before anything is allocated from a claim."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from rowbook.io import map_safetensors
from rowbook.models import TransformerLM
from rowbook.models.language_model.hf_checkpoint import hf_vectors


@pytest.fixture(scope="module")
def folder(tmp_path_factory, craft) -> Path:
    """A valid tiny GPT-2 checkpoint written by rowbook (conftest's ``write_gpt2``)."""
    path = tmp_path_factory.mktemp("hf") / "gpt2"
    TransformerLM.from_hf(craft.write_gpt2(path.parent / "seed"))  # the writer's own check
    return craft.write_gpt2(path)


def _copy(folder: Path, tmp_path: Path, config_edit=None) -> Path:
    target = tmp_path / "edited"
    target.mkdir()
    config = json.loads((folder / "config.json").read_text())
    if config_edit:
        config_edit(config)
    (target / "config.json").write_text(json.dumps(config))
    (target / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes())
    return target


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c.update(model_type="bert"),
            r"model_type 'bert' is not supported; rowbook opens 'gpt2'",
        ),
        (
            lambda c: c.update(n_embd=16, n_head=2),
            r"'wte.weight' has shape \(20, 8\), but config.json implies \(20, 16\)",
        ),
        (
            lambda c: c.update(vocab_size=21),
            r"has shape \(20, 8\), but config.json implies \(21, 8\)",
        ),
        (lambda c: c.update(n_layer=2), r"tensor 'h.1.ln_1.weight' is missing"),
        (lambda c: c.update(n_head="two"), r"field 'n_head' must be an integer, got 'two'"),
        (
            lambda c: c.update(vocab_size=10**12),
            r"vocab_size = 1000000000000 is outside 1..4,194,304",
        ),
        (lambda c: c.update(n_head=3), r"d_model must be divisible by n_heads \(3\)"),
        (
            lambda c: c.update(activation_function="mish"),
            r"activation_function 'mish' is not one rowbook computes",
        ),
        (lambda c: c.pop("n_embd"), r"field 'n_embd' is missing"),
    ],
)
def test_configs_that_disagree_with_their_weights_are_refused(folder, tmp_path, edit, message):
    target = _copy(folder, tmp_path, edit)
    with pytest.raises(ValueError, match=message):
        TransformerLM.from_hf(target)


def test_a_tensor_the_config_does_not_explain_is_refused(folder, tmp_path, craft):
    two = craft.write_gpt2(tmp_path / "two", craft.gpt2_config | {"n_layer": 2})
    (two / "config.json").write_text(json.dumps(craft.gpt2_config))  # says one layer, holds two
    with pytest.raises(
        ValueError, match=r"tensor 'h.1.attn.c_attn.bias' \(and 11 more\) is not part"
    ):
        TransformerLM.from_hf(two)


def _raw(header: dict | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(head) if length is None else length) + head + data


F32 = {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x01\x02", "shorter than its 8-byte header length"),
        (
            _raw({"a": F32}, bytes(16), length=2**40),
            "the safetensors header claims 1,099,511,627,776 bytes",
        ),
        (
            _raw({"a": F32 | {"shape": [10**9, 10**9]}}, bytes(16)),
            r"claims shape \[1000000000, 1000000000\]|spans 16 bytes",
        ),
        (
            _raw({"a": F32 | {"data_offsets": [0, 10**12]}}, bytes(16)),
            r"claims shape \[2, 2\] at bytes \[0, 1000000000000\)",
        ),
        (
            _raw({"a": F32 | {"shape": [3, 2]}}, bytes(16)),
            r"has shape \[3, 2\] of F32 \(24 bytes\) but spans 16",
        ),
        (_raw({"a": F32, "b": F32 | {"data_offsets": [8, 24]}}, bytes(24)), "overlap in the data"),
        (_raw({"a": F32 | {"dtype": "F8_E4M3"}}, bytes(16)), "has dtype 'F8_E4M3'; rowbook reads"),
        (_raw({"a": F32 | {"shape": [-2, -2]}}, bytes(16)), r"claims shape \[-2, -2\]"),
        (_raw([1, 2]), "header must be a JSON object"),
        (_raw(b"\xff\xfe"), "not UTF-8 JSON"),
        (_raw({"a": "x"}), "must be described by an object"),
    ],
)
def test_safetensors_headers_are_checked_before_anything_is_mapped(tmp_path, raw, message):
    path = tmp_path / "model.safetensors"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message) as info:
        map_safetensors(path)
    assert str(path) in str(info.value)


def test_a_valid_hand_written_file_maps_its_values():
    import tempfile

    path = Path(tempfile.mkdtemp()) / "ok.safetensors"
    path.write_bytes(
        _raw({"a": F32, "__metadata__": {"k": "v"}}, np.arange(4, dtype=np.float32).tobytes())
    )
    arrays, dtypes, metadata = map_safetensors(path)
    np.testing.assert_array_equal(arrays["a"], [[0, 1], [2, 3]])
    assert dtypes == {"a": "F32"} and metadata == {"k": "v"}


def test_shards_outside_the_folder_are_refused(folder, tmp_path):
    target = _copy(folder, tmp_path)
    (target / "model.safetensors").rename(target / "shard.safetensors")
    index = {"weight_map": {"wte.weight": "../../etc/passwd"}}
    (target / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match=r"shard '../../etc/passwd' must be a file name in"):
        TransformerLM.from_hf(target)


def test_missing_files_and_non_object_configs_name_the_file(folder, tmp_path, craft):
    with pytest.raises(FileNotFoundError):
        TransformerLM.from_hf(tmp_path / "nowhere")
    target = _copy(folder, tmp_path)
    (target / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"config\.json must hold a JSON object"):
        hf_vectors(target)
    (target / "config.json").write_text(json.dumps(craft.gpt2_config))
    (target / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="no safetensors file at"):
        hf_vectors(target)


def test_from_hf_keeps_the_architecture_of_the_config(folder):
    with pytest.raises(ValueError, match="d_model come from"):
        TransformerLM.from_hf(folder, d_model=16)
    assert TransformerLM.from_hf(folder, lr=0.5).lr == 0.5
