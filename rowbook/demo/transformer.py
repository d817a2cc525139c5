"""Demo section 7: a small GPT-2 trained for seconds: what tying saved, the KV cache's bytes, a line."""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context
from rowbook.demo.texts import toy_sentences

__all__ = ["transformer"]

SETTINGS = {
    "family": "gpt2",
    "vocab_size": 400,
    "d_model": 48,
    "n_layers": 2,
    "n_heads": 4,
    "context": 48,
    "epochs": 4,
    "batch_size": 8,
    "lr": 3e-3,
}
TEMPERATURE = 0.7


def transformer(ctx: Context) -> dict[str, Any]:
    """Train a tiny tied GPT-2 on generated sentences, then price its table and its cache."""
    from rowbook.models import TransformerLM
    from rowbook.sizing import model_size, preset

    echo = ctx.echo
    train, held_out = toy_sentences(600, seed=ctx.seed), toy_sentences(100, seed=ctx.seed + 1)
    lm = TransformerLM(**SETTINGS, seed=ctx.seed, progress=ctx.progress)
    lm.fit(train, val_texts=held_out)
    c = lm.config_
    size = model_size(c.vocab_size, c.d_model, c.n_layers, c.n_heads, context=c.context)
    total = sum(p.size for p in lm.net_.parameters())
    assert total == size.parameters  # rowbook.sizing counts what the model allocates
    echo(
        f"byte-level BPE of {c.vocab_size} tokens; a GPT-2 with d={c.d_model}, {c.n_layers} blocks, "
        f"{c.n_heads} heads of d_k={c.head_dim}, context {c.context}: {total:,} parameters"
    )
    echo(
        f"the table E is {c.vocab_size} x {c.d_model} = {size.embedding_parameters:,} parameters; "
        f"tying the output layer to it saved {size.tying_saves:,} more "
        f"({100 * size.tying_saves / (total + size.tying_saves):.0f}% of the untied model)"
    )
    echo("epoch  train ppl  held-out ppl")
    for e in lm.history_.epochs:
        echo(f"{e['epoch'] + 1:>5}  {e['perplexity']:>9.2f}  {e['val_perplexity']:>12.2f}")
    prompt = "the cat"
    n_new = 24
    line = lm.generate(prompt, n_new, temperature=TEMPERATURE, seed=ctx.seed)  # to <|endoftext|>
    line = line.removesuffix("<|endoftext|>")
    T = len(lm.encode(prompt)) + n_new  # the positions generate's cache holds
    cache = lm.net_.new_cache(1, T)
    echo(f"\ngenerated (temperature {TEMPERATURE}): {line!r}")
    echo(
        f"its KV cache: 2 x L x T x H_kv x d_k x 4 bytes = 2 x {c.n_layers} x {T} x {c.n_kv_heads} x "
        f"{c.head_dim} x 4 = {cache.nbytes:,} bytes"
    )
    llama = preset("llama-2-7b")
    echo(
        f"the same formula for LLaMA-2-7B (L=32, d=4096, float16): "
        f"{llama.kv_cache_bytes(4096) / 2**30:.0f} GiB at T=4,096, "
        f"{llama.kv_cache_bytes(8192) / 2**30:.0f} GiB at T=8,192 per sequence\n"
    )
    return {
        "settings": SETTINGS,
        "parameters": total,
        "table": size.embedding_parameters,
        "tying_saved": size.tying_saves,
        "epochs": lm.history_.epochs,
        "prompt": prompt,
        "generated": line,
        "cache_positions": T,
        "cache_bytes": cache.nbytes,
    }
