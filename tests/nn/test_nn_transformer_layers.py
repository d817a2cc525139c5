"""The pointwise and normalisation layers of a Transformer block against torch 2.13, in float64:
GELU (exact and tanh), SiLU, LayerNorm, RMSNorm, Linear's one-product math, and Dropout."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook import nn
from rowbook.autograd import Tensor, gradcheck
from rowbook.nn import functional as F

RNG = np.random.default_rng(0)


def _pair(shape, requires_grad=True):
    x = RNG.standard_normal(shape) * 2
    return Tensor(x.copy(), requires_grad=requires_grad), torch.tensor(
        x, requires_grad=requires_grad
    )


def _same(ours, theirs, atol=1e-12):
    np.testing.assert_allclose(ours, theirs.detach().numpy(), atol=atol, rtol=1e-10)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (lambda x: F.gelu(x), lambda x: torch.nn.functional.gelu(x)),
        (lambda x: F.gelu(x, "tanh"), lambda x: torch.nn.functional.gelu(x, approximate="tanh")),
        (F.silu, torch.nn.functional.silu),
        (nn.GELU("tanh"), torch.nn.GELU("tanh")),
        (nn.SiLU(), torch.nn.SiLU()),
    ],
)
def test_activations_equal_torch_forward_and_backward(ours, theirs):
    x, tx = _pair((3, 4, 5))
    out, tout = ours(x), theirs(tx)
    _same(out.data, tout)
    g = RNG.standard_normal(out.shape)
    out.backward(g)
    tout.backward(torch.tensor(g))
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("fn", [F.gelu, lambda x: F.gelu(x, "tanh"), F.silu])
def test_activations_pass_gradcheck(fn):
    assert gradcheck(fn, [Tensor(RNG.standard_normal((2, 3)), requires_grad=True)])


def test_gelu_refuses_an_unknown_approximation():
    with pytest.raises(ValueError, match="approximate must be one of 'none', 'tanh'"):
        F.gelu(np.ones(2), approximate="fast")


@pytest.mark.parametrize(
    ("shape", "normalized", "affine", "bias"),
    [
        ((4, 6), 6, True, True),
        ((2, 3, 4, 5), (4, 5), True, True),
        ((3, 7), 7, True, False),
        ((3, 7), 7, False, False),
    ],
)
def test_layer_norm_equals_torch(shape, normalized, affine, bias):
    ours = nn.LayerNorm(
        normalized, eps=1e-5, elementwise_affine=affine, bias=bias, dtype=np.float64
    )
    theirs = torch.nn.LayerNorm(
        normalized, eps=1e-5, elementwise_affine=affine, bias=bias, dtype=torch.float64
    )
    if affine:  # random gains and offsets, the same on both sides
        for p in ours.parameters():
            p.data[...] = RNG.standard_normal(p.shape)
        theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x, tx = _pair(shape)
    out, tout = ours(x), theirs(tx)
    _same(out.data, tout)
    g = RNG.standard_normal(out.shape)
    out.backward(g)
    tout.backward(torch.tensor(g))
    _same(x.grad, tx.grad, atol=1e-11)
    torch_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _same(p.grad, torch_params[name].grad, atol=1e-11)


@pytest.mark.parametrize("eps", [None, 1e-6])
def test_rms_norm_equals_torch(eps):
    ours = nn.RMSNorm(6, eps=eps, dtype=np.float64)
    theirs = torch.nn.RMSNorm(6, eps=eps, dtype=torch.float64)
    ours.weight.data[...] = RNG.standard_normal(6)
    theirs.weight.data[...] = torch.tensor(ours.weight.data)
    x, tx = _pair((2, 5, 6))
    out, tout = ours(x), theirs(tx)
    _same(out.data, tout)
    g = RNG.standard_normal(out.shape)
    out.backward(g)
    tout.backward(torch.tensor(g))
    _same(x.grad, tx.grad, atol=1e-11)
    _same(ours.weight.grad, theirs.weight.grad, atol=1e-11)


def test_norms_pass_gradcheck():
    x = Tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = Tensor(RNG.standard_normal(4), requires_grad=True)
    b = Tensor(RNG.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, 4, w, b), [x, w, b])
    assert gradcheck(lambda x, w: F.rms_norm(x, 4, w, eps=1e-6), [x, w])


def test_norm_layers_name_a_wrong_shape():
    with pytest.raises(ValueError, match=r"normalized_shape \(5,\) must equal the last dimensions"):
        nn.LayerNorm(5)(np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="normalized_shape must be an integer >= 1, got 0"):
        nn.RMSNorm(0)


def test_linear_is_one_product_and_equals_torch():
    x, tx = _pair((2, 3, 4))
    w, tw = _pair((5, 4))
    b, tb = _pair((5,))
    out, tout = F.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb)
    _same(out.data, tout)
    g = RNG.standard_normal(out.shape)
    out.backward(g)
    tout.backward(torch.tensor(g))
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        _same(ours.grad, theirs.grad)
    assert gradcheck(
        lambda x, w: F.linear(x, w),
        [
            Tensor(RNG.standard_normal((3, 2)), requires_grad=True),
            Tensor(RNG.standard_normal((4, 2)), requires_grad=True),
        ],
    )
    with pytest.raises(ValueError, match=r"needs a weight of shape \(out, 4\)"):
        F.linear(np.ones((2, 4)), np.ones((3, 5)))


def test_dropout_keeps_the_expected_share_and_scales_the_survivors():
    x = Tensor(np.ones((200, 500)), requires_grad=True)
    out = F.dropout(x, p=0.3, rng=1)
    kept = out.data != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(out.data[kept], 1 / 0.7)
    out.backward(np.full(out.shape, 2.0))
    np.testing.assert_allclose(x.grad, np.where(kept, 2 / 0.7, 0.0))  # the same mask
    other_seed = F.dropout(np.ones((200, 500)), p=0.3, rng=2).data != 0
    assert (other_seed != kept).any()


def test_dropout_is_seeded_and_switched_by_train_and_eval():
    model = nn.Sequential(nn.Linear(4, 4, rng=0), nn.Dropout(0.5, rng=3))
    x = np.ones((8, 4), dtype=np.float32)
    first = model(x).data
    again = nn.Sequential(nn.Linear(4, 4, rng=0), nn.Dropout(0.5, rng=3))(x).data
    assert np.array_equal(first, again) and (first == 0).any()
    model.eval()
    assert not model.layers[1].training
    clean = model(x).data
    np.testing.assert_array_equal(clean, model.layers[0](x).data)
    model.train()
    assert (model(x).data == 0).any()


def test_dropout_edge_probabilities():
    x = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(F.dropout(x, 0.0).data, x)
    np.testing.assert_array_equal(F.dropout(x, 1.0).data, np.zeros(6))
    with pytest.raises(ValueError, match=r"p must be a finite number in \[0.0, 1.0\], got 1.5"):
        nn.Dropout(1.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu"])
def test_fused_kernels_equal_their_references_and_torch(name, dtype):
    from rowbook.nn import activation_kernels as K

    x = (RNG.standard_normal(K.KERNEL_MIN_SIZE * 2) * 4).astype(dtype)
    x[:4] = [0.0, -30.0, 30.0, 1e-4]
    g = RNG.standard_normal(x.shape).astype(dtype)
    if name == "silu":
        forward, grad = K.silu_forward(x), K.silu_backward(x, g)
        ref, ref_grad = K.silu_reference(x), g * K.silu_grad_reference(x)
    else:
        approximate = "tanh" if name == "gelu_tanh" else "none"
        forward, grad = K.gelu_forward(x, approximate), K.gelu_backward(x, g, approximate)
        ref, ref_grad = K.gelu_reference(x, approximate), g * K.gelu_grad_reference(x, approximate)
    atol = 2e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(forward, ref, atol=atol, rtol=atol)
    np.testing.assert_allclose(grad, ref_grad, atol=atol * 4, rtol=atol)
    t = torch.tensor(x, requires_grad=True)  # and the op, which takes the kernel at this size
    theirs = {
        "gelu": lambda v: torch.nn.functional.gelu(v),
        "gelu_tanh": lambda v: torch.nn.functional.gelu(v, approximate="tanh"),
        "silu": torch.nn.functional.silu,
    }[name](t)
    ours = {"gelu": F.gelu, "gelu_tanh": lambda v: F.gelu(v, "tanh"), "silu": F.silu}[name]
    X = Tensor(x, requires_grad=True)
    out = ours(X)
    out.backward(g)
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(out.data, theirs.detach().numpy(), atol=atol, rtol=atol)
    np.testing.assert_allclose(X.grad, t.grad.numpy(), atol=atol * 4, rtol=atol)
