"""Batches of texts: the list form cuts what the streaming form would, without a Python loop."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rowbook.text.batches import list_batches, text_batches


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=40), st.integers(1, 30))
def test_list_batches_keep_every_text_in_order_in_about_size_characters(texts, size):
    batches = list_batches(texts, size)
    assert [t for batch in batches for t in batch] == texts
    assert all(batches)  # no empty batch
    total = sum(map(len, texts))
    assert len(batches) <= total // size + 1
    ends = [sum(map(len, texts[: sum(map(len, batches[: i + 1]))])) for i in range(len(batches))]
    for i, end in enumerate(ends[:-1]):  # each batch closes at the first text past a mark
        assert end // size > (ends[i - 1] if i else 0) // size
    if texts and all(len(t) == 1 for t in texts):  # one character each: the same cuts
        assert batches == list(text_batches(texts, size))
