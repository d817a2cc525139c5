"""``rowbook.nn.functional``: one_hot against torch, the re-exported losses, and every bad input.

Each bad input raises ValueError / TypeError / IndexError whose message names the bad
value and the valid range or type, before anything (such as a max_norm renorm) is modified.
"""

from __future__ import annotations

import ast
import inspect
import re

import numpy as np
import pytest
import torch

import rowbook.nn
from rowbook.autograd import Tensor
from rowbook.nn import Embedding, EmbeddingBag, bag, embedding, functional, lookup, loss
from rowbook.nn import functional as F


@pytest.mark.parametrize("shape", [(5,), (2, 3), (), (0,), (2, 0)], ids=str)
@pytest.mark.parametrize("num_classes", [-1, 9])
def test_one_hot_matches_torch(shape, num_classes):
    ids = np.random.default_rng(0).integers(0, 6, size=shape)
    if ids.size == 0 and num_classes == -1:
        with pytest.raises(ValueError, match="num_classes"):
            F.one_hot(ids)
        return
    ours = F.one_hot(ids, num_classes).numpy()
    theirs = torch.nn.functional.one_hot(torch.from_numpy(ids), num_classes).numpy()
    assert ours.dtype == theirs.dtype == np.int64
    np.testing.assert_array_equal(ours, theirs)


def test_losses_are_reexported():
    for name in ("binary_cross_entropy_with_logits", "cross_entropy", "mse_loss"):
        assert getattr(F, name) is getattr(loss, name) and name in F.__all__
    assert {"one_hot", "embedding", "embedding_bag"} <= set(F.__all__)
    assert {"Embedding", "EmbeddingBag", "functional"} <= set(rowbook.nn.__all__)


def test_no_assert_on_user_input_in_the_lookup_code():
    for module in (functional, embedding, bag, lookup):
        tree = ast.parse(inspect.getsource(module))
        assert not any(isinstance(node, ast.Assert) for node in ast.walk(tree)), module.__name__


TABLE = np.arange(20.0).reshape(5, 4)

# (call, exception type, regex the message must match: the value and the valid range/type)
BAD_LOOKUPS = {
    "id too large": (lambda: F.embedding([1, 5], TABLE), IndexError, r"5 .*\(1,\).*0\.\.4"),
    "id negative": (lambda: F.embedding([[0, -1]], TABLE), IndexError, r"-1 .*\(0, 1\).*0\.\.4"),
    "id 0-d": (lambda: F.embedding(7, TABLE), IndexError, r"7 .*0\.\.4"),
    "float ids": (lambda: F.embedding([1.0, 2.0], TABLE), TypeError, r"integer.*float64"),
    "bool ids": (lambda: F.embedding([True], TABLE), TypeError, r"integer.*bool"),
    "string ids": (lambda: F.embedding(["the"], TABLE), TypeError, r"integer.*<U3"),
    "float Tensor ids": (lambda: F.embedding(Tensor([1.0]), TABLE), TypeError, r"float32"),
    "weight 1-D": (lambda: F.embedding([0], np.ones(4)), ValueError, r"2-D.*\(4,\)"),
    "weight 3-D": (lambda: F.embedding([0], np.ones((2, 2, 2))), ValueError, r"2-D.*\(2, 2, 2\)"),
    "weight ints": (lambda: F.embedding([0], np.ones((2, 2), int)), TypeError, r"float.*int64"),
    "weight complex": (
        lambda: F.embedding([0], np.ones((2, 2), np.complex64)),
        TypeError,
        r"float16, float32 or float64.*complex64",
    ),
    "padding_idx high": (lambda: F.embedding([0], TABLE, 5), ValueError, r"-5\.\.4.*got 5"),
    "padding_idx low": (lambda: F.embedding([0], TABLE, -6), ValueError, r"-5\.\.4.*got -6"),
    "padding_idx float": (lambda: F.embedding([0], TABLE, 1.0), TypeError, r"int.*1\.0"),
    "max_norm < 0": (lambda: F.embedding([0], TABLE, max_norm=-1.0), ValueError, r">= 0.*-1\.0"),
    "norm_type < 0": (
        lambda: F.embedding([0], TABLE, max_norm=1.0, norm_type=-2),
        ValueError,
        r"p >= 0.*-2",
    ),
    "one_hot id": (lambda: F.one_hot([0, 3], 3), IndexError, r"3 .*0\.\.2"),
    "one_hot classes": (lambda: F.one_hot([0], -2), ValueError, r"-2"),
}

IDS, OFFS = np.array([1, 2, 3, 4]), np.array([0, 2])
BAD_BAGS = {
    "offsets[0] != 0": (
        lambda: F.embedding_bag(IDS, TABLE, [1, 2]),
        ValueError,
        r"offsets\[0\] must be 0.*got 1",
    ),
    "decreasing": (
        lambda: F.embedding_bag(IDS, TABLE, [0, 3, 2]),
        ValueError,
        r"non-decreasing.*offsets\[2\]=2 < offsets\[1\]=3",
    ),
    "offsets past end": (
        lambda: F.embedding_bag(IDS, TABLE, [0, 5]),
        ValueError,
        r"offsets\[-1\]=5.*number of ids, 4",
    ),
    "2-D ids with offsets": (
        lambda: F.embedding_bag(IDS.reshape(2, 2), TABLE, OFFS),
        ValueError,
        r"offsets must be None.*\(2, 2\)",
    ),
    "1-D ids no offsets": (lambda: F.embedding_bag(IDS, TABLE), ValueError, r"need offsets"),
    "offsets 2-D": (lambda: F.embedding_bag(IDS, TABLE, [[0]]), ValueError, r"1-D.*\(1, 1\)"),
    "offsets float": (lambda: F.embedding_bag(IDS, TABLE, [0.0]), TypeError, r"offsets.*float"),
    "ids 3-D": (
        lambda: F.embedding_bag(np.zeros((1, 1, 1), int), TABLE),
        ValueError,
        r"1-D .*2-D.*\(1, 1, 1\)",
    ),
    "ids 0-d": (lambda: F.embedding_bag(1, TABLE, [0]), ValueError, r"1-D .*2-D.*\(\)"),
    "no bags for ids": (lambda: F.embedding_bag(IDS, TABLE, []), ValueError, r"empty.*4 entries"),
    "last offset missing": (
        lambda: F.embedding_bag(IDS, TABLE, [], include_last_offset=True),
        ValueError,
        r"include_last_offset=True needs at least one offset",
    ),
    "bad mode": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, mode="prod"),
        ValueError,
        r"'sum', 'mean' or 'max', got 'prod'",
    ),
    "psw with mean": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, per_sample_weights=np.ones(4)),
        ValueError,
        r"only supported with mode='sum', got mode='mean'",
    ),
    "psw with max": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, mode="max", per_sample_weights=np.ones(4)),
        ValueError,
        r"mode='sum', got mode='max'",
    ),
    "psw shape": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, mode="sum", per_sample_weights=np.ones(3)),
        ValueError,
        r"same shape as ids \(4,\), got \(3,\)",
    ),
    "psw dtype": (
        lambda: F.embedding_bag(
            IDS, TABLE, OFFS, mode="sum", per_sample_weights=np.ones(4, np.float32)
        ),
        TypeError,
        r"dtype float64, got float32",
    ),
    "max + sparse": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, mode="max", sparse=True),
        ValueError,
        r"mode='max' does not support sparse=True",
    ),
    "max + freq": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, mode="max", scale_grad_by_freq=True),
        ValueError,
        r"mode='max' does not support scale_grad_by_freq",
    ),
    "bag id range": (lambda: F.embedding_bag([0, 9], TABLE, [0]), IndexError, r"9 .*0\.\.4"),
    "bag padding_idx": (
        lambda: F.embedding_bag(IDS, TABLE, OFFS, padding_idx=7),
        ValueError,
        r"-5\.\.4.*got 7",
    ),
}

BAD_LAYERS = {
    "negative V": (lambda: Embedding(-1, 3), ValueError, r"num_embeddings.*-1"),
    "float d": (lambda: Embedding(4, 2.5), ValueError, r"embedding_dim.*2\.5"),
    "layer padding_idx": (lambda: Embedding(4, 2, padding_idx=4), ValueError, r"-4\.\.3.*got 4"),
    "_weight shape": (
        lambda: Embedding(4, 2, _weight=np.ones((2, 4))),
        ValueError,
        r"\(2, 4\).*\(4, 2\)",
    ),
    "pretrained 1-D": (lambda: Embedding.from_pretrained(np.ones(3)), ValueError, r"2-D.*\(3,\)"),
    "pretrained ints": (
        lambda: Embedding.from_pretrained(np.ones((2, 2), int)),
        TypeError,
        r"floating.*int64",
    ),
    "bag layer mode": (lambda: EmbeddingBag(4, 2, mode="median"), ValueError, r"'median'"),
    "bag layer max sparse": (
        lambda: EmbeddingBag(4, 2, mode="max", sparse=True),
        ValueError,
        r"sparse=True",
    ),
}


@pytest.mark.parametrize(
    "case", [*BAD_LOOKUPS.items(), *BAD_BAGS.items(), *BAD_LAYERS.items()], ids=lambda c: c[0]
)
def test_bad_input_raises_a_clear_exception(case):
    _, (call, error, pattern) = case
    with pytest.raises(error) as info:
        call()
    assert re.search(pattern, str(info.value)), str(info.value)


def test_bad_ids_are_caught_before_max_norm_modifies_the_table():
    table = TABLE.copy()
    with pytest.raises(IndexError):
        F.embedding([0, 1, 99], table, max_norm=1.0)
    with pytest.raises(IndexError):
        F.embedding_bag([0, 1, 99], table, [0], max_norm=1.0)
    with pytest.raises(ValueError):
        F.embedding_bag([0, 1], table, [0], mode="mean", max_norm=1.0, per_sample_weights=[1, 1])
    np.testing.assert_array_equal(table, TABLE)


def test_torch_rejects_the_same_inputs():
    """The error cases above mirror torch's (rowbook's messages name value and range)."""
    W = torch.tensor(TABLE)
    ids = torch.tensor([1, 2, 3, 4])
    cases = [
        lambda: torch.nn.functional.embedding(torch.tensor([5]), W),
        lambda: torch.nn.functional.embedding(torch.tensor([1.0]), W),
        lambda: torch.nn.functional.embedding_bag(ids, W, torch.tensor([1, 2])),
        lambda: torch.nn.functional.embedding_bag(ids, W, torch.tensor([0, 5])),
        lambda: torch.nn.functional.embedding_bag(ids.reshape(2, 2), W, torch.tensor([0])),
        lambda: torch.nn.functional.embedding_bag(ids, W),
        lambda: torch.nn.functional.embedding_bag(ids, W, torch.tensor([0]), mode="prod"),
        lambda: torch.nn.functional.embedding_bag(
            ids, W, torch.tensor([0]), per_sample_weights=torch.ones(4, dtype=W.dtype)
        ),
        lambda: torch.nn.functional.embedding_bag(
            ids, W, torch.tensor([0]), mode="sum", per_sample_weights=torch.ones(3, dtype=W.dtype)
        ),
        lambda: torch.nn.functional.embedding_bag(
            ids, W, torch.tensor([0]), mode="max", sparse=True
        ),
        lambda: torch.nn.functional.embedding_bag(ids, W, torch.tensor([0]), padding_idx=7),
        lambda: torch.nn.Embedding(4, 2, padding_idx=4),
    ]
    for case in cases:
        with pytest.raises(
            (RuntimeError, ValueError, IndexError, NotImplementedError, AssertionError)
        ):
            case()
