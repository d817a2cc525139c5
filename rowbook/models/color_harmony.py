"""The colour-harmony predictor: 16 colours, a 4-d embedding table, and what it learns.

Sixteen colours sit on a wheel. A pair is *harmonious* when the colours are the same,
neighbors, or opposite (wheel distance 0, 1 or 8) and *clashing* at distance 2 to 5;
distances 6 and 7 are left out. That gives 192 ordered, labelled pairs. The network
looks both colours up in a (16, 4) table, concatenates the two rows, and scores the
pair with a 16-unit ReLU layer and a sigmoid output, trained with binary cross entropy.

The table learns the structure the loss asks for: colours whose harmony patterns agree
end up pointing the same way, so each colour's nearest neighbour by cosine is its
complement on the wheel, not the colour beside it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, no_grad, ops
from rowbook.checks import InputTypeError, check_number
from rowbook.models.network import NetworkModel
from rowbook.nn import Embedding, Linear, Module, init
from rowbook.nn import functional as F
from rowbook.optim import SGD
from rowbook.training import Trainer
from rowbook.vectors import Vectors

__all__ = ["COLOR_NAMES", "ColorHarmony", "HarmonyNet", "harmony_pairs"]

COLOR_NAMES = (
    "red",
    "red_orange",
    "orange",
    "yellow_orange",
    "yellow",
    "yellow_green",
    "green",
    "blue_green",
    "cyan",
    "sky_blue",
    "blue",
    "blue_violet",
    "violet",
    "magenta",
    "pink",
    "red_pink",
)


def harmony_pairs(n_colors: int = len(COLOR_NAMES)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left, right, label)`` for every ordered pair at wheel distance 0-5 or n/2.

    Examples
    --------
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

    Shape
    -----
    - Input: ``left``, ``right`` ``(B,)`` colour ids
    - Output: ``(B,)`` logits
    """

    def __init__(
        self, n_colors: int = 16, dim: int = 4, hidden: int = 16, *, rng: Any = None
    ) -> None:
        rng = init.as_generator(rng)
        self.embedding = Embedding(n_colors, dim, rng=rng)
        init.normal_(self.embedding.weight, std=0.5, rng=rng)
        self.hidden = Linear(2 * dim, hidden, rng=rng)
        self.output = Linear(hidden, 1, rng=rng)

    def forward(self, left: np.ndarray, right: np.ndarray) -> Tensor:
        pair = ops.concatenate([self.embedding(left), self.embedding(right)], axis=-1)  # (B, 2d)
        return self.output(ops.relu(self.hidden(pair))).reshape(-1)  # (B,)


class ColorHarmony(NetworkModel[None]):
    """Train :class:`HarmonyNet` on colour pairs and inspect its table.

    Parameters
    ----------
    dim
        size of each colour's row. hidden : the ReLU layer's size.
    epochs, lr, batch_size
        online SGD settings (one pair per step by default).
    seed
        seed of the initial weights and of the shuffle.
    progress
        report progress on standard error: the loss and accuracy before training, then
        each epoch's.

    Attributes
    ----------
    history_
        :class:`~rowbook.training.History`: each epoch's ``loss`` (the running mean over
        its steps), ``eval_loss`` and ``eval_accuracy`` (every pair, after the epoch), and
        ``initial``, the same two before training.

    Examples
    --------
    >>> model = ColorHarmony(epochs=3).fit()
    >>> model.vectors.vectors.shape, model.vectors.index_to_key[:2]
    ((16, 4), ('red', 'red_orange'))
    """

    def __init__(
        self,
        *,
        dim: int = 4,
        hidden: int = 16,
        epochs: int = 200,
        lr: float = 0.1,
        batch_size: int = 1,
        seed: int = 0,
        progress: bool = False,
    ) -> None:
        self.dim, self.hidden, self.epochs, self.lr = dim, hidden, epochs, lr
        self.batch_size, self.seed, self.progress = batch_size, seed, progress
        self._check_ints("ColorHarmony", dim=1, hidden=1, epochs=0, batch_size=1, seed=0)
        check_number("lr", lr, 0.0, low_open=True, owner="ColorHarmony")

    def fit(
        self,
        pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: str | os.PathLike[str] | None = None,
    ) -> ColorHarmony:
        """Online SGD on binary cross entropy over ``pairs``; returns ``self``.

        ``pairs`` is ``(left ids, right ids, labels)``; None (the default) is the 192
        pairs of :func:`harmony_pairs`. ``checkpoint`` and ``resume`` follow the model
        contract (:mod:`rowbook.models.base`).
        """
        pairs = harmony_pairs() if pairs is None else _check_pairs(pairs)
        self._train(None, pairs, None, checkpoint=checkpoint, state=self._resume_state(resume))
        return self

    def _build(self, extras: None) -> tuple[HarmonyNet, SGD]:
        net = HarmonyNet(len(COLOR_NAMES), self.dim, self.hidden, rng=self.seed)
        return net, SGD(net.parameters(), lr=self.lr)

    def _trainer_for(self, net: HarmonyNet, optimizer: SGD) -> Trainer:
        config = self._train_config(eval_on_start=True, eval_on_train=True)
        return Trainer(net, optimizer, _loss, evaluate=_metrics, config=config, save=self.save)

    def predict_proba(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Probability that each pair ``(left[i], right[i])`` of colour ids is harmonious."""
        net = self._require_fitted(".predict_proba()").net
        with no_grad():
            return ops.sigmoid(net(np.asarray(left), np.asarray(right))).data

    def accuracy(self) -> float:
        """Share of the 192 pairs classified correctly (threshold 0.5)."""
        left, right, label = harmony_pairs()
        return float(np.mean((self.predict_proba(left, right) > 0.5) == (label > 0.5)))

    @property
    def vectors(self) -> Vectors:
        """The learned (16, dim) table as :class:`~rowbook.Vectors` keyed by colour name."""
        net = self._require_fitted(".vectors").net
        return Vectors(COLOR_NAMES, net.embedding.weight.data)

    def cosine_table(self) -> np.ndarray:
        """(16, 16) cosine similarity between every two learned rows."""
        unit = self.vectors.get_normed_vectors()  # (16, dim)
        return unit @ unit.T

    def nearest_neighbors(self) -> dict[str, str]:
        """Each colour's most similar other colour by cosine."""
        vectors = self.vectors
        return {name: vectors.most_similar(name, topn=1)[0][0] for name in COLOR_NAMES}


def _loss(net: HarmonyNet, batch: tuple[np.ndarray, ...]) -> Tensor:
    return F.binary_cross_entropy_with_logits(net(batch[0], batch[1]), batch[2])


def _metrics(net: HarmonyNet, pairs: tuple[np.ndarray, ...]) -> dict[str, float]:
    """Mean cross entropy and accuracy (threshold 0.5) over all ``pairs``, without a graph."""
    with no_grad():
        logits = net(pairs[0], pairs[1])  # (N,)
        loss = F.binary_cross_entropy_with_logits(logits, pairs[2]).item()
    return {"loss": loss, "accuracy": float(np.mean((logits.data > 0) == (pairs[2] > 0.5)))}


def _check_pairs(pairs: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(pairs, tuple | list) or len(pairs) != 3:
        raise InputTypeError(
            "pairs must be a tuple (left ids, right ids, labels), as harmony_pairs() gives"
        )
    left, right, label = (np.asarray(a) for a in pairs)
    n = len(COLOR_NAMES)
    for name, ids in (("left", left), ("right", right)):
        if (
            ids.dtype.kind not in "iu"
            or ids.ndim != 1
            or (ids.size and not 0 <= ids.min() <= ids.max() < n)
        ):
            raise ValueError(f"pairs: {name} must be 1-d colour ids in [0, {n}), got {ids!r}")
    return left, right, label.astype(np.float32)
