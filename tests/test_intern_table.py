"""InternTable: ids in first-sighting order, held to a dict, across calls and growth.

The probe runs in passes over a call's keys (first slots, then the keys left one by one),
so the keys are drawn to meet every case: keys the table held before the call (found in
their first slot, or moved from it by a collision), keys new in the call and seen again
in it, the empty key, and keys that differ in one byte or in length only.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rowbook.intern_table import FRONT, LONG_FRONT, InternTable, fnv1a, intern_front

KEY = st.binary(max_size=20) | st.sampled_from([b"", b"a", b"aa", b"ab", b"b", b"\xff"])
KEYS = st.lists(KEY, max_size=200)


def _ranges(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    ends = np.cumsum([len(k) for k in keys], dtype=np.int64)  # (K,)
    return data, ends - np.array([len(k) for k in keys], dtype=np.int64), ends


def _intern_front(table: InternTable, keys: list[bytes]) -> np.ndarray:
    """``keys`` interned through the front cache of short keys (GPT-2's pre-split's way)."""
    data, starts, ends = _ranges(keys)
    table.reserve(len(data), len(keys))
    ids = np.empty(len(keys), dtype=np.int32)  # (K,)
    intern_front(data, starts, ends, table.front, *table.arrays, ids)
    return ids


@settings(max_examples=50, deadline=None)
@given(st.lists(KEYS, min_size=1, max_size=6), st.lists(st.booleans(), min_size=6, max_size=6))
def test_interned_ids_are_first_sightings_across_calls(calls, fronts):
    table, first = InternTable(), {}
    for keys, front in zip(calls, fronts, strict=False):  # calls with and without the front cache
        expected = [first.setdefault(k, len(first)) for k in keys]
        got = _intern_front(table, keys) if front else table.intern(*_ranges(keys))
        assert got.tolist() == expected
    assert len(table) == len(first)
    data, ends = table.key_bytes()
    stored = data.tobytes()
    assert [stored[a:b] for a, b in itertools.pairwise([0, *ends.tolist()])] == list(first)


def test_a_crowded_table_gives_each_key_its_id():
    rng = np.random.default_rng(0)
    keys = [bytes(rng.integers(97, 100, rng.integers(1, 9)).astype(np.uint8)) for _ in range(3000)]
    table, first = InternTable(), {}
    for start in range(0, len(keys), 700):  # the table grows between calls
        part = keys[start : start + 700]
        expected = [first.setdefault(k, len(first)) for k in part]
        assert table.intern(*_ranges(part)).tolist() == expected


def _random_keys(rng: np.random.Generator, count: int, low: int, high: int) -> list[bytes]:
    """``count`` keys of ``low`` to ``high`` bytes drawn from four byte values (many alike)."""
    lengths = rng.integers(low, high + 1, count)
    data = rng.integers(0, 4, int(lengths.sum())).astype(np.uint8).tobytes()
    ends = np.cumsum(lengths).tolist()
    return [data[a:b] for a, b in itertools.pairwise([0, *ends])]


def test_the_front_caches_tell_apart_keys_of_one_slot_or_integers_and_forget_on_clear():
    rng = np.random.default_rng(1)  # 8 keys a slot: most slots taken by several
    keys = _random_keys(rng, 8 * FRONT, 1, 8) + _random_keys(rng, 8 * LONG_FRONT, 9, 16)
    keys = [keys[i] for i in rng.permutation(len(keys))]
    # one integer (or two), lengths apart; zero bytes
    keys += [b"a", b"a\x00", b"a\x00\x00", b"\x00", b"a"]
    keys += [b"abcdefghi", b"abcdefghi\x00", b"abcdefgh\x00", b"\x00" * 16, b"abcdefghi"]
    table, first = InternTable(), {}
    for start in range(0, len(keys), 20_000):
        part = keys[start : start + 20_000]
        expected = [first.setdefault(k, len(first)) for k in part]
        assert _intern_front(table, part).tolist() == expected
    table.clear()
    assert _intern_front(table, [b"a\x00", b"a", b"abcdefghi\x00", b"abcdefghi"]).tolist() == [
        0,
        1,
        2,
        3,
    ]


def test_keys_of_one_hash_and_length_are_told_apart_by_their_bytes():
    a, b = b"hldxcf", b"qwobig"  # FNV-1a collides on them: same first slot, same length
    assert fnv1a(np.frombuffer(a, np.uint8), 0, 6) == fnv1a(np.frombuffer(b, np.uint8), 0, 6)
    table = InternTable()
    assert table.intern(*_ranges([a])).tolist() == [0]
    assert table.intern(*_ranges([b, a, b])).tolist() == [1, 0, 1]
    assert table.intern(*_ranges([a, b])).tolist() == [0, 1]
