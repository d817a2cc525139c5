"""The compiled breadth-first walk against its Python reference."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.vectors.graph_order import bfs_order, bfs_order_reference


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_compiled_walk_orders_the_nodes_as_the_reference_does(seed):
    """Random graphs in faiss's layout (links at offsets, -1 after the last, some nodes
    with more levels hence longer stretches, some never linked to): the same order, each
    node once."""
    rng = np.random.default_rng(seed)
    nodes, width = 300, 6
    spans = width + width * rng.integers(0, 3, nodes)  # (V,) a node's links, upper layers too
    offsets = np.concatenate([[0], np.cumsum(spans)])  # (V + 1,)
    links = np.full(offsets[-1], -1, dtype=np.int32)
    for node in range(nodes):
        count = rng.integers(0, width + 1)
        targets = rng.choice(nodes - 20, count, replace=False)  # the last 20: never linked to
        links[offsets[node] : offsets[node] + count] = targets
        links[offsets[node] + width : offsets[node + 1]] = rng.integers(0, nodes)  # not walked
    entry = int(rng.integers(0, nodes))
    order = bfs_order(offsets, links, width, entry)
    np.testing.assert_array_equal(order, bfs_order_reference(offsets, links, width, entry))
    assert order[0] == entry and np.array_equal(np.sort(order), np.arange(nodes))
