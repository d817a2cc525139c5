"""Byte-level BPE training within ``memory=``: the compact merge kernel learns ``tokenizers``'
merges, a budget below the merge step's floor is refused, and the peak memory of a child
process stays within the budget (a bound with a margin, never a timing)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rowbook.checks import ParameterError
from rowbook.text import ByteLevelBPE
from rowbook.text.bpe.train import merge_floor
from rowbook.text.bpe.train_kernel import _compact


def zipf_texts(n_lines: int, seed: int = 0, vocab: int = 50_000) -> list[str]:
    """Lines of 12 words drawn from a Zipf law over words spelled in syllables (the frequent
    ones short): the distinct words keep growing with the lines, as in real text."""
    rng = np.random.default_rng(seed)
    consonants, vowels = "bcdfghjklmnprstvwxyz", "aeiou"

    def spell(i: int) -> str:
        word, i = "", i + 1
        while i:
            i, d = divmod(i, 100)
            word = consonants[d // 5] + vowels[d % 5] + word
        return word

    ids = (rng.zipf(1.1, size=(n_lines, 12)) - 1) % vocab
    return [" ".join(spell(int(i)) for i in row) for row in ids]


def test_compact_moves_the_live_lists_down_in_entry_order():
    ent_start = np.array([0, 2, 5, 6], dtype=np.int64)
    ent_len = np.array([2, 3, 1, 2], dtype=np.int64)
    ent_words = np.array([10, 11, 20, 21, 22, 30, 40, 41], dtype=np.int32)
    live = np.array([3, 1], dtype=np.int64)  # on the heap, in heap order: 0 and 2 are dead
    used = _compact((ent_start, ent_len, ent_words), live, live.size)
    assert used == 5
    assert ent_words[:used].tolist() == [20, 21, 22, 40, 41]
    assert ent_start[[1, 3]].tolist() == [0, 3]


def test_merges_equal_tokenizers_where_the_entry_lists_are_compacted(hf_trainer, hf_model_of):
    # 3,000 lines of Zipf words and 2,000 tokens: the entry lists are compacted several times
    # (seen by instrumenting the kernel), the record scratch grows, merges reuse spellings.
    texts = zipf_texts(3000)
    ours = ByteLevelBPE().fit(texts, 2000, workers=1)
    theirs = hf_model_of(hf_trainer(texts, 2000, min_frequency=2))
    assert ours.merges == theirs["merges"]
    budgeted = ByteLevelBPE().fit(texts, 2000, workers=1, memory="4MB")
    assert budgeted.merge_trace == ours.merge_trace


def test_a_budget_below_the_merge_floor_is_refused_naming_memory_and_the_floor():
    texts = zipf_texts(3000)
    counts = ByteLevelBPE().count_words(texts, memory="1MB")
    n_bytes = len(counts.text.encode("utf-8"))
    floor = merge_floor(n_bytes, len(counts), 2000)
    assert floor == 8 * n_bytes + 36 * len(counts)  # uint16 symbols below 65,536 ids
    assert floor > 2**20
    floor_mb = -(-floor // 2**20)
    with pytest.raises(ParameterError, match=rf"memory must be at least {floor_mb}MB") as err:
        ByteLevelBPE().fit_word_counts(counts, 2000, memory="1MB")
    assert err.value.name == "memory" and "36 per word" in str(err.value)
    with pytest.raises(ParameterError, match="memory must be at least"):
        ByteLevelBPE().fit(texts, 2000, memory="1MB", workers=1)
    ByteLevelBPE().fit_word_counts(counts, 2000, memory=f"{floor_mb}MB")  # at the floor: trains


_MEASURE = textwrap.dedent(
    """
    import json, sys
    from rowbook.text import ByteLevelBPE

    def peak_mib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

    def lines(path):
        with open(path, encoding="utf-8") as f:
            yield from f

    path, memory = sys.argv[1], sys.argv[2]
    ByteLevelBPE().fit(["ab abc abd"] * 50, 300, workers=1, memory="16MB")  # load the kernels
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident size to the current one
    before = peak_mib()
    bpe = ByteLevelBPE().fit(lines(path), 4000, workers=1, memory=memory)
    print(json.dumps({"added_mib": peak_mib() - before, "merges": len(bpe.merges)}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_training_within_memory_stays_within_it_in_a_child_process(tmp_path):
    # 60,000 lines (4 MB of text, about 100,000 distinct words): the merge step's floor is
    # about 8 MB, its measured peak about 25 bytes a byte of the distinct words.
    texts = zipf_texts(60_000, seed=1)
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    counts = ByteLevelBPE().count_words(texts, memory="16MB")
    assert len(counts) > 50_000
    assert merge_floor(len(counts.text), len(counts), 4000) < 16 * 2**20
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), "32MB"],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["merges"] > 3000
    assert measured["added_mib"] < 32, f"training within memory='32MB' added {measured}"


def test_a_custom_pattern_within_memory_learns_what_it_learns_in_ram():
    # The pattern is not GPT-2's: each batch is counted in a Counter, then as UTF-8 bytes.
    texts = [f"{line} née<eot>" for line in zipf_texts(2000)]
    pattern = r" ?\w+|[^\w ]+| "
    in_ram = ByteLevelBPE(pattern=pattern).fit(texts, 600, special_tokens=["<eot>"], workers=1)
    budgeted = ByteLevelBPE(pattern=pattern).fit(
        texts, 600, special_tokens=["<eot>"], workers=2, memory="4MB"
    )
    assert budgeted.merge_trace == in_ram.merge_trace
    assert budgeted.vocab == in_ram.vocab
