"""TransformerLM against an equivalent torch model built here with the same weights: logits,
loss, every parameter's gradient, 20 optimizer steps; the KV cache; training, saving, resuming."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from rowbook.autograd import RowSparse, no_grad
from rowbook.models import NotFittedError, TransformerLM
from rowbook.models.language_model.config import TransformerConfig, rope_frequencies
from rowbook.models.language_model.model import token_windows
from rowbook.models.language_model.state import LMExtras
from rowbook.models.language_model.transformer import TransformerNet
from rowbook.nn import functional as F

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met"] * 12


class TorchLM(torch.nn.Module):
    """The same network in torch, parameter names equal to rowbook's (so state dicts swap)."""

    def __init__(self, c: TransformerConfig, sparse: bool = False) -> None:
        super().__init__()
        self.c = c
        self.embedding = torch.nn.Embedding(c.vocab_size, c.d_model, sparse=sparse)
        if c.positions == "learned":
            self.positions = torch.nn.Module()
            self.positions.weight = torch.nn.Parameter(torch.zeros(c.context, c.d_model))
        norm = (
            (lambda: torch.nn.LayerNorm(c.d_model, eps=c.norm_eps, bias=c.bias))
            if c.norm == "layernorm"
            else (lambda: torch.nn.RMSNorm(c.d_model, eps=c.norm_eps))
        )
        q, kv = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
        self.blocks = torch.nn.ModuleList()
        for _ in range(c.n_layers):
            block = torch.nn.Module()
            block.norm1, block.norm2 = norm(), norm()
            block.attention = torch.nn.Module()
            block.attention.in_proj_weight = torch.nn.Parameter(torch.zeros(q + 2 * kv, c.d_model))
            if c.bias:
                block.attention.in_proj_bias = torch.nn.Parameter(torch.zeros(q + 2 * kv))
            block.attention.out_proj = torch.nn.Linear(q, c.d_model, bias=c.bias)
            block.mlp = torch.nn.Module()
            if c.mlp == "swiglu":
                block.mlp.gate = torch.nn.Linear(c.d_model, c.d_ff, bias=c.bias)
                block.mlp.up = torch.nn.Linear(c.d_model, c.d_ff, bias=c.bias)
                block.mlp.down = torch.nn.Linear(c.d_ff, c.d_model, bias=c.bias)
            else:
                block.mlp.fc = torch.nn.Linear(c.d_model, c.d_ff, bias=c.bias)
                block.mlp.proj = torch.nn.Linear(c.d_ff, c.d_model, bias=c.bias)
            self.blocks.append(block)
        self.norm = norm()
        if not c.tie_embeddings:
            self.head = torch.nn.Linear(c.d_model, c.vocab_size, bias=False)

    def _rope(self, x: torch.Tensor) -> torch.Tensor:
        theta = torch.arange(x.shape[2], dtype=torch.float64)[:, None] * torch.tensor(
            rope_frequencies(self.c)
        )
        cos, sin = (
            torch.cat([theta.cos()] * 2, -1).to(x.dtype),
            torch.cat([theta.sin()] * 2, -1).to(x.dtype),
        )
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        c, (B, T) = self.c, ids.shape
        x = self.embedding(ids)
        if c.positions == "learned":
            x = x + self.positions.weight[:T]
        q_dim, kv_dim = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
        for block in self.blocks:
            a = block.attention
            qkv = torch.nn.functional.linear(
                block.norm1(x), a.in_proj_weight, getattr(a, "in_proj_bias", None)
            )
            q, k, v = qkv.split([q_dim, kv_dim, kv_dim], -1)
            q = q.reshape(B, T, c.n_heads, -1).transpose(1, 2)
            k, v = (t.reshape(B, T, c.n_kv_heads, -1).transpose(1, 2) for t in (k, v))
            if c.positions == "rope":
                q, k = self._rope(q), self._rope(k)
            o = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True, enable_gqa=True
            )
            x = x + a.out_proj(o.transpose(1, 2).reshape(B, T, q_dim))
            h, m = block.norm2(x), block.mlp
            if c.mlp == "swiglu":
                x = x + m.down(torch.nn.functional.silu(m.gate(h)) * m.up(h))
            else:
                x = x + m.proj(torch.nn.functional.gelu(m.fc(h), approximate="tanh"))
        h = self.norm(x)
        return h @ self.embedding.weight.T if c.tie_embeddings else self.head(h)


FAMILIES = {
    "gpt2_tied": {"family": "gpt2"},
    "gpt2_untied": {"family": "gpt2", "tie_embeddings": False},
    "llama_gqa": {"family": "llama", "n_kv_heads": 2, "tie_embeddings": False},
    "llama_mqa_tied": {"family": "llama", "n_kv_heads": 1},
}


def _pair(settings, sparse=False, dtype=torch.float64):
    config = TransformerConfig(
        vocab_size=50, d_model=16, n_layers=2, n_heads=4, context=12, **settings
    )
    ours = TransformerNet(config, sparse=sparse, rng=1)
    if dtype == torch.float64:
        ours.double()
    for p in ours.parameters():  # random norms and biases too, not ones and zeros
        if p.ndim == 1:
            p.data[...] = np.random.default_rng(2).standard_normal(p.shape) * 0.1 + (p.data != 0)
    theirs = TorchLM(config, sparse=sparse).to(dtype)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    return config, ours, theirs


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_logits_loss_and_every_gradient_equal_torch(name):
    config, ours, theirs = _pair(FAMILIES[name], sparse=True)
    windows = np.random.default_rng(3).integers(0, 50, (3, 11))
    logits = ours(windows[:, :-1])
    t_logits = theirs(torch.tensor(windows[:, :-1]))
    np.testing.assert_allclose(logits.data, t_logits.detach().numpy(), atol=1e-12)
    loss = F.cross_entropy(logits.reshape(-1, 50), windows[:, 1:].reshape(-1))
    t_loss = torch.nn.functional.cross_entropy(
        t_logits.reshape(-1, 50), torch.tensor(windows[:, 1:].reshape(-1))
    )
    assert loss.item() == pytest.approx(t_loss.item(), abs=1e-12)
    loss.backward()
    t_loss.backward()
    t_params = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        t_grad = t_params[pname].grad
        grad = p.grad
        if pname == "embedding.weight" and not config.tie_embeddings:
            assert isinstance(grad, RowSparse)  # only the rows of the batch's tokens
            t_dense = t_grad.to_dense().numpy()
            assert set(grad.indices.tolist()) == set(np.unique(windows[:, :-1]).tolist())
            np.testing.assert_allclose(grad.values, t_dense[grad.indices], atol=1e-12)
            grad = grad.to_dense()
            t_grad = torch.tensor(t_dense)
        np.testing.assert_allclose(grad, t_grad.numpy(), atol=1e-11, err_msg=pname)


def _torch_optimizer(theirs, lr, weight_decay, sparse):
    params = list(theirs.named_parameters())
    table = [p for n, p in params if sparse and n == "embedding.weight"]
    rest = [p for n, p in params if not (sparse and n == "embedding.weight")]
    groups = [
        {"params": [p for p in rest if p.ndim >= 2]},
        {"params": [p for p in rest if p.ndim < 2], "weight_decay": 0.0},
    ]
    optimizers = [torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay)]
    if table:
        optimizers.append(torch.optim.SparseAdam(table, lr=lr))
    return optimizers


@pytest.mark.parametrize(
    ("settings", "optimizer"),
    [
        ({"family": "gpt2"}, "adamw"),
        ({"family": "llama", "n_kv_heads": 2, "tie_embeddings": False}, "sparse_adam"),
    ],
)
def test_twenty_optimizer_steps_give_torchs_losses(settings, optimizer):
    lm = TransformerLM(
        vocab_size=50,
        d_model=16,
        n_layers=2,
        n_heads=4,
        context=12,
        lr=3e-3,
        optimizer=optimizer,
        **settings,
    )
    net, opt = lm._build(LMExtras(None, 50, None))
    theirs = TorchLM(net.config, sparse=optimizer == "sparse_adam")
    theirs.load_state_dict({k: torch.tensor(v) for k, v in net.state_dict().items()})
    t_opts = _torch_optimizer(theirs, 3e-3, lm.weight_decay, optimizer == "sparse_adam")
    batches = np.random.default_rng(4).integers(0, 50, (2, 4, 13))  # two batches, ten times each
    losses, t_losses = [], []
    for step in range(20):
        windows = batches[step % 2]
        opt.zero_grad()
        loss = F.cross_entropy(net(windows[:, :-1]).reshape(-1, 50), windows[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        for o in t_opts:
            o.zero_grad()
        t_loss = torch.nn.functional.cross_entropy(
            theirs(torch.tensor(windows[:, :-1])).reshape(-1, 50),
            torch.tensor(windows[:, 1:].reshape(-1)),
        )
        t_loss.backward()
        for o in t_opts:
            o.step()
        t_losses.append(t_loss.item())
    np.testing.assert_allclose(losses, t_losses, atol=1e-4)
    assert losses[-2] < losses[0] and losses[-1] < losses[1]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_kv_cache_gives_the_full_recompute_at_every_step(name):
    config, ours, _ = _pair(FAMILIES[name], dtype=torch.float32)
    ours.float()
    ids = np.random.default_rng(5).integers(0, 50, (2, 12))
    with no_grad():
        full = ours(ids).data
        cache = ours.new_cache(2, 12)
        steps = [ours(ids[:, :5], cache=cache).data]
        steps += [ours(ids[:, t : t + 1], cache=cache).data for t in range(5, 12)]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)
    head_dim = config.d_model // config.n_heads
    assert cache.nbytes == 2 * config.n_layers * 12 * config.n_kv_heads * head_dim * 2 * 4


@pytest.fixture(scope="module")
def trained():
    lm = TransformerLM(
        vocab_size=300, d_model=16, n_layers=1, n_heads=2, context=16, epochs=2, lr=3e-3, seed=1
    )
    return lm.fit(TEXTS)


def test_fit_trains_on_windows_of_the_bpe_stream_and_reports_perplexity(trained):
    history = trained.history_.epochs
    assert [e["epoch"] for e in history] == [0, 1]
    for e in history:
        assert e["perplexity"] == pytest.approx(math.exp(e["loss"]))
        assert e["val_perplexity"] == pytest.approx(math.exp(e["val_loss"]))
    assert history[1]["loss"] < history[0]["loss"]
    bpe = trained.pipeline_.tokenizer_
    assert bpe.id_to_token(0) == "<|endoftext|>" and trained.config_.vocab_size == len(bpe)
    assert list(trained.vectors.index_to_key[:2]) == ["<|endoftext|>", "!"]
    assert trained.vectors.vectors.shape == (len(bpe), 16)
    assert trained.perplexity(TEXTS[:3]) > 1


def test_generation_stops_after_the_end_of_text_token_the_model_keeps(trained):
    eos = trained.eos_id_
    assert eos == trained.pipeline_.tokenizer_.token_to_id("<|endoftext|>")
    stopped_early = 0
    for seed in range(20):
        full = trained.generate([eos], 14, seed=seed, stop_at_eos=False).tolist()
        ends = [i for i, token in enumerate(full) if token == eos and i > 0]
        expected = full[: ends[0] + 1] if ends else full
        assert trained.generate([eos], 14, seed=seed).tolist() == expected
        stopped_early += bool(ends) and ends[0] < len(full) - 1
    assert stopped_early  # some seed drew the end of text before the last step


def test_an_unfitted_model_names_what_was_asked_for(tmp_path):
    lm = TransformerLM()
    for ask, what in [
        (lambda: lm.eos_id_, ".eos_id_"),
        (lambda: lm.generate("a"), ".generate()"),
        (lambda: lm.save_hf(tmp_path / "hf"), ".save_hf()"),
        (lambda: lm.save_gguf(tmp_path / "m.gguf"), ".save_gguf()"),
    ]:
        with pytest.raises(NotFittedError, match=f"before using {re.escape(what)},"):
            ask()


def test_token_windows_share_their_boundary_token():
    stream = np.arange(10)
    windows = token_windows(stream, 4)
    assert windows.tolist() == [[0, 1, 2, 3, 4], [4, 5, 6, 7, 8]]
    assert token_windows(np.arange(3), 4).tolist() == [[0, 1, 2]]


def test_resume_from_a_checkpoint_ends_as_the_uninterrupted_run(tmp_path):
    settings = {
        "vocab_size": 280,
        "d_model": 8,
        "n_layers": 1,
        "n_heads": 2,
        "context": 8,
        "seed": 3,
        "dropout": 0.1,
    }
    whole = TransformerLM(epochs=3, **settings).fit(TEXTS)
    path = tmp_path / "lm.npz"
    TransformerLM(epochs=1, **settings).fit(TEXTS, checkpoint=path)
    resumed = TransformerLM(epochs=3, **settings).fit(TEXTS, checkpoint=path, resume=path)
    np.testing.assert_array_equal(resumed.vectors.vectors, whole.vectors.vectors)
    assert resumed.history_.resumed_at == [1]
    loaded = TransformerLM.load(path)
    for (name, a), (_, b) in zip(
        loaded.net_.named_parameters(), whole.net_.named_parameters(), strict=True
    ):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)


def test_generate_is_seeded_stops_where_told_and_keeps_the_prompt(trained):
    text = trained.generate("the cat", 12, seed=5)
    assert text.startswith("the cat") and text == trained.generate("the cat", 12, seed=5)
    ids = trained.generate(trained.encode("the dog"), 6, temperature=0, stop_at_eos=False)
    assert len(ids) == len(trained.encode("the dog")) + 6
    greedy = trained.generate("the", 5, temperature=0, stop_at_eos=False)
    assert greedy == trained.generate("the", 5, temperature=0.5, top_k=1, stop_at_eos=False)
    with pytest.raises(
        ValueError,
        match=r"max_new_tokens must be at most 14 \(context=16 of this model's learned positions, minus the prompt's 2",
    ):
        trained.generate("the cat", 30)
    with pytest.raises(ValueError, match="top_p must be a finite number in"):
        trained.generate("the", 3, top_p=0.0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"d_model": 10, "n_heads": 3}, r"d_model must be divisible by n_heads \(3\)"),
        ({"n_heads": 4, "n_kv_heads": 3}, r"n_kv_heads must be a divisor of n_heads \(4\), got 3"),
        ({"optimizer": "sparse_adam"}, "untie the table"),
        ({"family": "bert"}, "family must be one of 'gpt2', 'llama'"),
        (
            {"positions": "rope", "d_model": 12, "n_heads": 4},
            "head_dim must be even with positions='rope'",
        ),
        (
            {"rope_scaling": {"rope_type": "yarn"}},
            "rope_scaling must be None or a rope_type of 'linear' or 'llama3'",
        ),
    ],
)
def test_bad_architectures_name_the_fix(params, message):
    with pytest.raises(ValueError, match=message):
        TransformerLM(**params)
