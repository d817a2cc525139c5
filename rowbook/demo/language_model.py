"""Demo section 5: a neural language model (Bengio et al. 2003) over characters, and a sample."""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context
from rowbook.demo.texts import toy_sentences

__all__ = ["language_model"]

SETTINGS = {"level": "char", "context": 6, "dim": 16, "hidden": 64, "epochs": 6, "batch_size": 32}
TEMPERATURE = 0.7


def language_model(ctx: Context) -> dict[str, Any]:
    """Train on generated sentences, report held-out perplexity per epoch, and sample."""
    from rowbook.models import NPLM
    from rowbook.viz import plot_training

    echo = ctx.echo
    train, held_out = toy_sentences(800, seed=ctx.seed), toy_sentences(150, seed=ctx.seed + 1)
    echo(
        f"text: {len(train)} generated sentences such as {train[0]!r}; {len(held_out)} more held out"
    )
    lm = NPLM(**SETTINGS, seed=ctx.seed, progress=ctx.progress).fit(train, val_texts=held_out)
    V = len(lm.vocab_)
    echo(
        f"characters: {V} (with '<s>' and '<unk>'); context {lm.context}, table C {V} x {lm.dim}, "
        f"tanh layer {lm.hidden}; a uniform guess has perplexity {V}"
    )
    epochs = lm.history_.epochs
    echo(f"before training: held-out perplexity {lm.history_.initial['val_perplexity']:.3f}")
    echo("epoch  train loss  train ppl  held-out ppl")
    for e in epochs:
        echo(
            f"{e['epoch'] + 1:>5}  {e['loss']:>10.4f}  {e['perplexity']:>9.3f}  {e['val_perplexity']:>12.3f}"
        )
    lines = lm.sample(400, temperature=TEMPERATURE, seed=ctx.seed).split("\n")
    sample = lines[:-1][:5]  # whole lines only: the last one stops mid-sentence
    echo(f"\nsample (temperature {TEMPERATURE}):")
    echo("".join(f"  {line}\n" for line in sample))
    plot_training(
        lm.history_,
        ctx.file("lm_training.png"),
        metrics=["loss", "val_loss"],
        title="NPLM on generated sentences: cross entropy per character",
    )
    echo(f"training curves: {ctx.out / 'lm_training.png'}\n")
    return {
        "settings": SETTINGS,
        "vocabulary": lm.vocab_.itos,
        "initial": lm.history_.initial,
        "epochs": epochs,
        "sample": sample,
        "temperature": TEMPERATURE,
    }
