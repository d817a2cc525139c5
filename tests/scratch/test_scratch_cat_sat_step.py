"""One SGD step at lr=1 on the cat-sat-on-the-mat example: scratch and library agree."""

from __future__ import annotations

import numpy as np
import torch

from rowbook.demo.lookup import HAND_TABLE, TARGETS
from rowbook.nn import Embedding
from rowbook.optim import SGD
from rowbook.scratch import EmbeddingTable, Value

IDS = [2, 3, 4, 5, 2, 6]  # the cat sat on the mat; <pad> = 0, <unk> = 1
TABLE = HAND_TABLE.astype(np.float64).round(2)  # the hand-written numbers, exactly in float64

# The rows after one step, E - 1.0 * dLoss/dE, worked out by hand:
# dLoss/dE[i] = sum over positions k with ids[k] = i of 2 (E[i] - target_k) / 24.
AFTER = {
    2: [0.2 - 1 / 30, 0.1 - 1 / 60, 0.05 - 1 / 120, 0.3 - 0.05],  # 'the', two positions
    3: [0.8 + 1 / 60, 0.6 + 1 / 30, 0.2 + 1 / 15, 0.1 + 0.075],  # 'cat'
}


def scratch_step() -> tuple[float, EmbeddingTable]:
    table = EmbeddingTable(7, 4, padding_idx=0)
    table.weight = TABLE.tolist()
    rows = [[Value(v) for v in row] for row in table.lookup(IDS)]  # (6, 4)
    squares = [(v - float(t)) ** 2 for row, t in zip(rows, TARGETS, strict=True) for v in row]
    loss = sum(squares, Value(0.0)) / len(squares)
    loss.backward()
    table.backward(IDS, [[v.grad for v in row] for row in rows])
    table.step(lr=1.0)
    return loss.data, table


def test_one_step_at_lr_1_equals_the_library_and_torch():
    loss, table = scratch_step()
    emb = Embedding.from_pretrained(TABLE.copy(), freeze=False, padding_idx=0, sparse=True)
    target = np.repeat(TARGETS.astype(np.float64)[:, None], 4, axis=1)  # (6, 4)
    lib_loss = ((emb(np.array(IDS)) - target) ** 2).mean()
    lib_loss.backward()
    assert emb.weight.grad.indices.tolist() == sorted(table.touched) == [2, 3, 4, 5, 6]
    SGD(emb.parameters(), lr=1.0).step()

    weight = torch.tensor(TABLE, requires_grad=True)
    out = torch.nn.functional.embedding(torch.tensor(IDS), weight, padding_idx=0)
    torch_loss = ((out - torch.tensor(target)) ** 2).mean()
    torch_loss.backward()
    torch.optim.SGD([weight], lr=1.0).step()

    assert round(loss, 4) == 0.1977 and abs(loss - lib_loss.item()) < 1e-15
    np.testing.assert_allclose(np.array(table.weight), emb.weight.data, rtol=0, atol=1e-15)
    np.testing.assert_allclose(emb.weight.data, weight.detach().numpy(), rtol=0, atol=1e-15)
    for row, expected in AFTER.items():
        np.testing.assert_allclose(table.weight[row], expected, rtol=0, atol=1e-15)
    assert table.weight[0] == [0.0] * 4 and table.weight[1] == TABLE[1].tolist()  # untouched


def test_the_gradient_row_for_the_is_the_demos():
    _, table = scratch_step()  # after the step, grad still holds the step's gradient
    np.testing.assert_allclose(table.grad[2], [0.0333, 0.0167, 0.0083, 0.0500], atol=5e-5)
