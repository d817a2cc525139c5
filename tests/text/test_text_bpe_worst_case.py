"""The merge kernel's worst case: a word of n bytes costs O(n) heap operations, never O(n^2).

A run of one character is the classic adversary of BPE encoders that rescan the word after
each merge (n merges, each scanning n pairs). The work is counted, not timed: the heap
operations of :func:`rowbook.text.bpe.merge_kernels.merge_steps` for n and 8n bytes. The ids on
those long words stay ``tokenizers``' (and tiktoken's, for ranks read as tiktoken reads them).
"""

from __future__ import annotations

import random

import pytest
import tiktoken

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe.merge_kernels import encode_word_reference, merge_steps
from rowbook.text.bpe.tiktoken_files import from_ranks, to_ranks

N = 10_000


def _adversaries(n: int) -> dict[str, bytes]:
    rng = random.Random(0)
    return {
        "one character": b"a" * n,
        "two characters": b"ab" * (n // 2),
        "runs of growing length": b"".join(b"a" * k + b"b" for k in range(1, 200))[:n].ljust(
            n, b"a"
        ),
        "random letters": bytes(rng.choice(b"ab") for _ in range(n)),
    }


@pytest.fixture(scope="module")
def runs_corpus(corpus):
    """The corpus, and runs of letters: merges of runs up to hundreds of characters."""
    return [*corpus[:400], *("a" * k for k in range(1, 300)), *("ab" * k for k in range(1, 100))]


@pytest.fixture(scope="module")
def bpe(runs_corpus):
    return ByteLevelBPE(pattern=r"\S+|\s+").fit(runs_corpus, 1200, min_count=1)


@pytest.mark.parametrize("kind", sorted(_adversaries(8)))
def test_heap_operations_grow_linearly(bpe, kind):
    tables = bpe._encoder._tables
    small, large = _adversaries(N)[kind], _adversaries(8 * N)[kind]
    steps_small, steps_large = merge_steps(small, *tables), merge_steps(large, *tables)
    assert steps_small <= 6 * len(small)  # each pair pushed once, each merge pushes two
    assert steps_large <= 6 * len(large)
    assert steps_large <= 9 * steps_small, (kind, steps_small, steps_large)


def test_kernel_equals_reference_on_long_runs(bpe):
    keys, ranks, new_ids = bpe._encoder.merge_table
    table = {
        (k >> 32, k & 0xFFFFFFFF): (r, m)
        for k, r, m in zip(keys.tolist(), ranks.tolist(), new_ids.tolist(), strict=True)
    }
    for kind, word in _adversaries(600).items():
        symbols = bpe._encoder.byte_ids[list(word)].tolist()
        assert bpe.encode(word.decode()).ids == encode_word_reference(symbols, table), kind


def test_long_runs_equal_tokenizers(runs_corpus, hf_trainer):
    from tokenizers import pre_tokenizers

    ours = ByteLevelBPE().fit(runs_corpus, 900, min_count=2)
    theirs = hf_trainer(runs_corpus, 900, pre_tokenizer=pre_tokenizers.ByteLevel(False))
    assert ours.vocab == theirs.get_vocab()
    for kind, word in _adversaries(20_000).items():
        text = word.decode()
        assert ours.encode(text).ids == theirs.encode(text).ids, kind


def test_long_runs_equal_tiktoken(bpe):
    ranks = to_ranks(bpe)
    theirs = tiktoken.Encoding(
        "runs", pat_str=bpe.pattern, mergeable_ranks=ranks, special_tokens={}
    )
    ours = from_ranks(ranks, pattern=bpe.pattern, special_tokens={})
    for kind, word in _adversaries(20_000).items():
        assert ours.encode(word.decode()).ids == theirs.encode(word.decode()), kind
        assert merge_steps(word, *ours._encoder._tables) <= 6 * len(word)
