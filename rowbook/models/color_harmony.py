"""The colour-harmony predictor: 16 colours, a 4-d embedding table, and what it learns.

Sixteen colours sit on a wheel. A pair is *harmonious* when the colours are the same,
neighbours, or opposite (wheel distance 0, 1 or 8) and *clashing* at distance 2 to 5;
distances 6 and 7 are left out. That gives 192 ordered, labelled pairs. The network
looks both colours up in a (16, 4) table, concatenates the two rows, and scores the
pair with a 16-unit ReLU layer and a sigmoid output, trained with binary cross entropy.

The table learns the structure the loss asks for: colours whose harmony patterns agree
end up pointing the same way, so each colour's nearest neighbour by cosine is its
complement on the wheel, not the colour beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.autograd import Tensor, no_grad, ops
from rowbook.models.base import NotFittedError
from rowbook.nn import Embedding, Linear, Module, init
from rowbook.nn import functional as F
from rowbook.optim import SGD
from rowbook.training import TrainConfig, Trainer

__all__ = ["COLOR_NAMES", "ColorHarmony", "HarmonyNet", "harmony_pairs"]

COLOR_NAMES = (
    "red", "red_orange", "orange", "yellow_orange", "yellow", "yellow_green", "green", "blue_green",
    "cyan", "sky_blue", "blue", "blue_violet", "violet", "magenta", "pink", "red_pink",
)  # fmt: skip


def harmony_pairs(n_colors: int = len(COLOR_NAMES)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left, right, label)`` for every ordered pair at wheel distance 0-5 or n/2.

    >>> left, right, label = harmony_pairs()
    >>> len(label), int(label.sum())
    (192, 64)
    """
    left, right = np.meshgrid(np.arange(n_colors), np.arange(n_colors), indexing="ij")
    left, right = left.ravel(), right.ravel()
    distance = np.abs(left - right)
    wheel = np.minimum(distance, n_colors - distance)
    harmonious = (wheel <= 1) | (wheel == n_colors // 2)
    clashing = (wheel >= 2) & (wheel <= 5)
    keep = harmonious | clashing
    return left[keep], right[keep], harmonious[keep].astype(np.float32)


class HarmonyNet(Module):
    """``sigmoid(w2 . relu(W1 [E[left]; E[right]] + b1) + b2)``, returned as a logit.

    Shape:
        - Input: ``left``, ``right`` ``(B,)`` colour ids
        - Output: ``(B,)`` logits
    """

    def __init__(self, n_colors: int = 16, dim: int = 4, hidden: int = 16, *, rng: Any = None) -> None:
        rng = init.as_generator(rng)
        self.embedding = Embedding(n_colors, dim, rng=rng)
        init.normal_(self.embedding.weight, std=0.5, rng=rng)
        self.hidden = Linear(2 * dim, hidden, rng=rng)
        self.output = Linear(hidden, 1, rng=rng)

    def forward(self, left: np.ndarray, right: np.ndarray) -> Tensor:
        pair = ops.concatenate([self.embedding(left), self.embedding(right)], axis=-1)  # (B, 2d)
        return self.output(ops.relu(self.hidden(pair))).reshape(-1)  # (B,)


class ColorHarmony:
    """Train :class:`HarmonyNet` on the 192 colour pairs and inspect its table.

    >>> model = ColorHarmony(seed=0).fit(epochs=3)
    >>> model.embedding_table().shape
    (16, 4)
    """

    def __init__(self, *, seed: int = 0, dim: int = 4, hidden: int = 16) -> None:
        self.seed, self.dim, self.hidden = seed, dim, hidden
        self.net_: HarmonyNet | None = None

    def fit(self, epochs: int = 200, lr: float = 0.1, batch_size: int = 1) -> ColorHarmony:
        """Online SGD (one pair per step by default) on binary cross entropy."""
        self.net_ = HarmonyNet(len(COLOR_NAMES), self.dim, self.hidden, rng=self.seed)
        left, right, label = harmony_pairs()
        trainer = Trainer(
            self.net_, SGD(self.net_.parameters(), lr=lr),
            lambda net, batch: F.binary_cross_entropy_with_logits(net(batch[0], batch[1]), batch[2]),
            config=TrainConfig(epochs=epochs, batch_size=batch_size, seed=self.seed),
        )  # fmt: skip
        self.history_ = trainer.fit((left, right, label))
        return self

    def _net(self) -> HarmonyNet:
        if self.net_ is None:
            raise NotFittedError("this ColorHarmony is not fitted yet; call fit() first")
        return self.net_

    def predict_proba(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        with no_grad():
            return ops.sigmoid(self._net()(np.asarray(left), np.asarray(right))).data

    def accuracy(self) -> float:
        """Share of the 192 pairs classified correctly (threshold 0.5)."""
        left, right, label = harmony_pairs()
        return float(np.mean((self.predict_proba(left, right) > 0.5) == (label > 0.5)))

    def embedding_table(self) -> np.ndarray:
        """The learned (16, dim) table, one row per colour."""
        return self._net().embedding.weight.data.copy()

    def cosine_table(self) -> np.ndarray:
        """(16, 16) cosine similarity between every two learned rows."""
        table = self.embedding_table()
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        return unit @ unit.T

    def nearest_neighbors(self) -> dict[str, str]:
        """Each colour's most similar other colour by cosine."""
        cos = self.cosine_table()
        np.fill_diagonal(cos, -np.inf)
        return {COLOR_NAMES[i]: COLOR_NAMES[j] for i, j in enumerate(cos.argmax(axis=1))}
