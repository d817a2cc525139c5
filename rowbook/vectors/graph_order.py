"""A graph's nodes in breadth-first order, so that a search's hops read nearby memory.

An HNSW search hops from node to node and computes the distance of each neighbour it has
not seen: rows read one at a time from all over a table far larger than the caches (1M rows
of 100 floats and 96 links each: 780 MB against 32 MB of L3). Numbered in the order a
breadth-first walk of the bottom layer reaches them, a node's neighbours are stored near it
and near each other (they were reached from the same few nodes), so the rows a search reads
share pages and cache lines more often. The graph itself (who links to whom) is unchanged:
only where each row is stored, and so the number the graph knows it by.

:func:`bfs_order` walks a graph in the layout faiss's HNSW keeps (every node's links at an
offset into one array, ``-1`` after the last); :func:`bfs_order_reference` is the same walk
in Python, which the tests hold it to.
"""

from __future__ import annotations

from collections import deque

import numba
import numpy as np

__all__ = ["bfs_order", "bfs_order_reference"]


def bfs_order_reference(
    offsets: np.ndarray, neighbors: np.ndarray, width: int, entry: int
) -> np.ndarray:
    """The nodes in the order a breadth-first walk from ``entry`` reaches them, links in
    their stored order; nodes it never reaches follow, each unreached one (by number)
    starting a walk of its own. ``offsets`` (V + 1,) as faiss keeps them: node ``i``'s links
    are ``neighbors[offsets[i] : offsets[i] + width]`` (its bottom layer's), up to the first
    ``-1``.

    >>> links = np.array([1, 2, -1, 3, -1, -1, -1, -1, -1, -1, -1, -1, 2, -1, -1])  # 0->1,2 1->3 4->2
    >>> bfs_order_reference(np.arange(0, 18, 3), links, 3, 4).tolist()
    [4, 2, 0, 1, 3]
    """
    nodes = len(offsets) - 1
    seen = np.zeros(nodes, dtype=bool)
    order: list[int] = []
    for start in [entry, *range(nodes)]:
        if seen[start]:
            continue
        seen[start] = True
        queue = deque([start])
        while queue:
            node = queue.popleft()
            order.append(node)
            for link in neighbors[offsets[node] : offsets[node] + width]:
                if link < 0:
                    break
                if not seen[link]:
                    seen[link] = True
                    queue.append(int(link))
    return np.array(order, dtype=np.int64)


def bfs_order(offsets: np.ndarray, neighbors: np.ndarray, width: int, entry: int) -> np.ndarray:
    """:func:`bfs_order_reference`, compiled: ``offsets`` (V + 1,), ``neighbors`` int32
    (-1: no link); the (V,) node numbers, int64.

    >>> links = np.array([1, 2, -1, 3, -1, -1, -1, -1, -1, -1, -1, -1, 2, -1, -1], np.int32)
    >>> bfs_order(np.arange(0, 18, 3), links, 3, 4).tolist()
    [4, 2, 0, 1, 3]
    """
    return _bfs(np.asarray(offsets[:-1], dtype=np.int64), neighbors, width, entry)


@numba.njit(cache=True, nogil=True)
def _bfs(offsets: np.ndarray, neighbors: np.ndarray, width: int, entry: int) -> np.ndarray:
    nodes = len(offsets)
    order = np.empty(nodes, dtype=np.int64)  # (V,) the queue itself: nodes in the order reached
    seen = np.zeros(nodes, dtype=np.bool_)
    reached, walked, unreached, start = 0, 0, 0, entry
    while reached < nodes:
        if seen[start]:  # the walk is over: start the next from the first node not reached
            while seen[unreached]:
                unreached += 1
            start = unreached
        seen[start] = True
        order[reached] = start
        reached += 1
        while walked < reached:
            base = offsets[order[walked]]
            walked += 1
            for j in range(width):
                link = neighbors[base + j]
                if link < 0:
                    break
                if not seen[link]:
                    seen[link] = True
                    order[reached] = link
                    reached += 1
    return order
