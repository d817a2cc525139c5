"""The colour-harmony example on the scratch pieces, held to the Tensor-engine model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook.models.color_harmony import ColorHarmony, HarmonyNet
from rowbook.models.color_harmony import harmony_pairs as library_pairs
from rowbook.nn import functional as F
from rowbook.optim import SGD
from rowbook.scratch import ScratchHarmonyNet, bce_with_logits, harmony_pairs, train_color_harmony
from rowbook.training import batches


def float64_library_net(seed: int) -> HarmonyNet:
    """The library's HarmonyNet with its initial weights, cast to float64."""
    net = HarmonyNet(rng=seed)
    for p in net.parameters():
        p.data = p.data.astype(np.float64)
    return net


def scratch_copy(net: HarmonyNet) -> ScratchHarmonyNet:
    """A scratch net holding the same weights as ``net``."""
    ours = ScratchHarmonyNet()
    ours.table.weight = net.embedding.weight.data.tolist()
    for layer, theirs in ((ours.hidden, net.hidden), (ours.output, net.output)):
        for row, values in zip(layer.weight, theirs.weight.data, strict=True):
            for w, value in zip(row, values, strict=True):
                w.data = float(value)
        for b, value in zip(layer.bias, theirs.bias.data, strict=True):
            b.data = float(value)
    return ours


def scratch_weights(net: ScratchHarmonyNet) -> list[np.ndarray]:
    return [
        np.array(net.table.weight),
        np.array([[w.data for w in row] for row in net.hidden.weight]),
        np.array([b.data for b in net.hidden.bias]),
        np.array([[w.data for w in row] for row in net.output.weight]),
        np.array([b.data for b in net.output.bias]),
    ]


def library_weights(net: HarmonyNet) -> list[np.ndarray]:
    return [
        p.data
        for p in (
            net.embedding.weight,
            net.hidden.weight,
            net.hidden.bias,
            net.output.weight,
            net.output.bias,
        )
    ]


def test_the_pairs_follow_the_library_rules():
    left, right, label = library_pairs()
    expected = list(zip(left.tolist(), right.tolist(), label.tolist(), strict=True))
    assert harmony_pairs() == expected


@pytest.mark.parametrize(("left", "right", "label"), [(0, 0, 1.0), (3, 6, 0.0), (15, 7, 1.0)])
def test_one_step_gradients_equal_the_tensor_engine_and_torch(left, right, label):
    library = float64_library_net(seed=0)
    ours = scratch_copy(library)
    z, x = ours.logit(left, right)
    loss = bce_with_logits(z, label)
    loss.backward()
    ours.table.backward([left, right], [[v.grad for v in x[:4]], [v.grad for v in x[4:]]])

    logits = library(np.array([left]), np.array([right]))
    lib_loss = F.binary_cross_entropy_with_logits(logits, np.array([label]))
    lib_loss.backward()
    assert loss.data == pytest.approx(lib_loss.item(), rel=1e-12, abs=1e-15)

    weights = [torch.tensor(w, requires_grad=True) for w in library_weights(library)]
    E, W1, b1, W2, b2 = weights
    pair = torch.cat([E[left], E[right]])
    t_logit = W2 @ torch.relu(W1 @ pair + b1) + b2
    torch.nn.functional.binary_cross_entropy_with_logits(
        t_logit, torch.tensor([label], dtype=torch.float64)
    ).backward()

    our_grads = [
        np.array(ours.table.grad),
        np.array([[w.grad for w in row] for row in ours.hidden.weight]),
        np.array([b.grad for b in ours.hidden.bias]),
        np.array([[w.grad for w in row] for row in ours.output.weight]),
        np.array([b.grad for b in ours.output.bias]),
    ]
    lib_params = (library.embedding, library.hidden, library.hidden, library.output, library.output)
    names = ("weight", "weight", "bias", "weight", "bias")
    for ours_g, module, name, t in zip(our_grads, lib_params, names, weights, strict=True):
        grad = getattr(module, name).grad
        np.testing.assert_allclose(ours_g, grad, rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(ours_g, t.grad.numpy(), rtol=0, atol=1e-12, err_msg=name)


def test_one_epoch_follows_the_tensor_engine_step_for_step():
    """Same start, same order of pairs (the Trainer's seeded shuffle): same weights after
    192 online SGD steps, to float64 rounding."""
    library = float64_library_net(seed=0)
    ours = scratch_copy(library)
    optimizer = SGD(library.parameters(), lr=0.1)
    left, right, label = library_pairs()
    label = label.astype(np.float64)
    for index in batches(len(label), 1, np.random.default_rng(0)):
        optimizer.zero_grad()
        logits = library(left[index], right[index])
        F.binary_cross_entropy_with_logits(logits, label[index]).backward()
        optimizer.step()
        ours.train_step(int(left[index][0]), int(right[index][0]), float(label[index][0]), 0.1)
    for a, b in zip(scratch_weights(ours), library_weights(library), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


# The brief's run is 200 epochs (about 30 s in pure Python on an idle core); both models
# reach 100% well before epoch 60, so the test trains 60.
EPOCHS = 60


def test_reaches_the_same_accuracy_as_the_tensor_engine_model():
    run = train_color_harmony(epochs=EPOCHS, lr=0.1, seed=0)
    library = ColorHarmony(epochs=EPOCHS, lr=0.1, seed=0).fit()
    assert run.accuracy == library.accuracy() == 1.0
    assert run.losses[-1] < run.losses[0] / 10


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="epochs must be an int >= 0, got -1"):
        train_color_harmony(epochs=-1)
    with pytest.raises(ValueError, match="lr must be > 0, got 0"):
        train_color_harmony(lr=0)
