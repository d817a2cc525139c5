"""The Huffman tree of hierarchical softmax: a binary code and an inner-node path per word.

Hierarchical softmax (Morin and Bengio 2005; Mikolov et al. 2013b) replaces the softmax
over ``V`` words by ``log2 V``-ish binary decisions along the path from the root of a
Huffman tree to the word, so frequent words get short paths. Word ``w`` has ``codes``
(0 = left, 1 = right at each step) and ``points`` (the inner nodes passed, numbered
``0 .. V - 2``, root last-created), and the model learns one vector per inner node.

The tree is built as gensim 4 builds it (``_build_heap`` / ``_assign_binary_codes``):
repeatedly merge the two least frequent nodes into a new node whose left child is the
first popped; nodes compare by count alone, so ties fall where ``heapq`` leaves them,
exactly as in gensim; codes append 0 for the left child and 1 for the right one, root
first. fastText builds its tree over the labels of its classifier otherwise
(:func:`fasttext_tree`: two queues over counts sorted in descending order, its node layout),
so its ``hs`` has a tree of its own here.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np

__all__ = ["fasttext_tree", "huffman_tree"]


class _Node(NamedTuple):
    count: int
    index: int

    def __lt__(self, other: tuple) -> bool:  # count only: ties stay where heapq puts them
        return self.count < other[0]


def huffman_tree(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, points, lengths)``: ``(V, L)`` uint8 and int32 arrays padded with 0, and
    ``(V,)`` path lengths, for words with the given counts.

    Examples
    --------
    >>> codes, points, lengths = huffman_tree(np.array([5, 3, 1, 1]))
    >>> lengths.tolist(), codes[0, :1].tolist(), codes[3, :3].tolist(), points[3, :3].tolist()
    ([1, 2, 3, 3], [0], [1, 0, 1], [2, 1, 0])
    """
    V = len(counts)
    heap = [_Node(int(c), i) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    children: dict[int, tuple[int, int]] = {}
    for i in range(V - 1):
        first, second = heapq.heappop(heap), heapq.heappop(heap)
        children[V + i] = (first.index, second.index)
        heapq.heappush(heap, _Node(first.count + second.count, V + i))
    paths: list[tuple[list[int], list[int]]] = [([], [])] * V
    stack = [(heap[0].index, [], [])] if V > 1 else []
    while stack:
        node, code, point = stack.pop()
        if node < V:
            paths[node] = (code, point)
        else:
            left, right = children[node]
            stack.append((left, [*code, 0], [*point, node - V]))
            stack.append((right, [*code, 1], [*point, node - V]))
    depth = max((len(c) for c, _ in paths), default=0)
    codes = np.zeros((V, max(depth, 1)), dtype=np.uint8)
    points = np.zeros((V, max(depth, 1)), dtype=np.int32)
    lengths = np.array([len(c) for c, _ in paths], dtype=np.int32)
    for w, (code, point) in enumerate(paths):
        codes[w, : len(code)] = code
        points[w, : len(point)] = point
    return codes, points, lengths


def fasttext_tree(counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """fastText's Huffman tree over label counts (``HierarchicalSoftmaxLoss::buildTree``).

    Returns ``(left, right, path_starts, paths, codes)``: the children of each of the
    ``2n - 1`` nodes (``-1`` for a leaf; leaves are the labels ``0 .. n - 1``, inner nodes
    ``n ..``), and for each label, CSR style, the inner nodes from it to the root as rows
    of ``W_out`` (node ``- n``) with the bit of each step (1 when the right child). The
    counts are taken in the order given (fastText's are sorted, descending).

    Examples
    --------
    >>> left, right, starts, paths, codes = fasttext_tree(np.array([5, 3, 1]))
    >>> left.tolist(), right.tolist()
    ([-1, -1, -1, 2, 3], [-1, -1, -1, 1, 0])
    >>> starts.tolist(), paths.tolist(), codes.astype(int).tolist()
    ([0, 1, 3, 5], [1, 0, 1, 0, 1], [1, 1, 0, 0, 0])
    """
    n = len(counts)
    size = max(2 * n - 1, 0)
    parent = [-1] * size
    left, right = [-1] * size, [-1] * size
    binary = [False] * size
    count = [int(1e15)] * size
    count[:n] = [int(c) for c in counts]
    leaf, node = n - 1, n
    for i in range(n, size):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j], leaf = leaf, leaf - 1
            else:
                mini[j], node = node, node + 1
        left[i], right[i] = mini
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        binary[mini[1]] = True
    paths, codes, starts = [], [], [0]
    for i in range(n):
        j = i
        while parent[j] != -1:
            paths.append(parent[j] - n)
            codes.append(binary[j])
            j = parent[j]
        starts.append(len(paths))
    return (
        np.array(left, dtype=np.int64),
        np.array(right, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(paths, dtype=np.int64),
        np.array(codes, dtype=np.bool_),
    )
