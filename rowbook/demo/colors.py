"""Demo section 2: the colour-harmony predictor, its learned 4-d table, and pictures of it."""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context, matrix

__all__ = ["LOGGED_EPOCHS", "color_harmony", "short_name", "training_log"]

#: The epochs (counted from 0) whose line the training log shows.
LOGGED_EPOCHS = (0, 25, 50, 100, 199)


def short_name(name: str) -> str:
    """A column label of at most 4 letters for a colour name.

    >>> short_name("red"), short_name("yellow_green"), short_name("blue_violet")
    ('red', 'yelg', 'bluv')
    """
    first, *rest = name.split("_")
    return first[: 4 - len(rest)] + "".join(part[0] for part in rest)


def training_log(history: Any, epochs: tuple[int, ...] = LOGGED_EPOCHS) -> list[str]:
    """The training log: loss and accuracy before training, then for the chosen epochs the
    mean loss of the epoch's steps, and the loss and accuracy over every pair after the
    epoch (the chapter's numbers, in rowbook's words).

    >>> from rowbook.training import History
    >>> h = History(epochs=[{"epoch": 0, "loss": 0.7, "eval_loss": 0.6, "eval_accuracy": 0.5}],
    ...             initial={"eval_loss": 0.69, "eval_accuracy": 0.25})
    >>> print("\\n".join(training_log(h, epochs=(0,))))
    --- before training ---
    loss = 0.6900  accuracy = 25.00%
    <BLANKLINE>
    epoch   0: steps' loss 0.7000, every pair's loss 0.6000, accuracy 50.00%
    """
    start = history.initial
    lines = [
        "--- before training ---",
        f"loss = {start['eval_loss']:.4f}  accuracy = {start['eval_accuracy']:.2%}",
        "",
    ]
    for e in history.epochs:
        if e["epoch"] in epochs:
            lines.append(
                f"epoch {e['epoch']:>3}: steps' loss {e['loss']:.4f}, every pair's loss "
                f"{e['eval_loss']:.4f}, accuracy {e['eval_accuracy']:.2%}"
            )
    return lines


def color_harmony(ctx: Context) -> dict[str, Any]:
    """Train the 16-colour predictor to 100%, print its table, draw it three ways."""
    from rowbook.models.color_harmony import COLOR_NAMES, ColorHarmony
    from rowbook.viz import hue_colors, plot_scatter, plot_similarity, write_html

    echo, names = ctx.echo, list(COLOR_NAMES)
    model = ColorHarmony(seed=ctx.seed, epochs=200, lr=0.1).fit()
    table, cos = model.vectors.vectors, model.cosine_table()  # (16, 4), (16, 16)
    echo("trained 200 epochs, lr 0.1, one pair per step:")
    echo("\n".join(training_log(model.history_)) + "\n")
    echo(f"final loss {model.history_.last('loss'):.4f}, accuracy {model.accuracy():.2%}")
    echo("learned rows:\n" + matrix(table, names, ["d0", "d1", "d2", "d3"], "{:+.2f}") + "\n")
    echo("cosine similarity (one decimal; every digit is in 02_color_harmony.json):")
    echo(matrix(cos, names, [short_name(n) for n in names], "{:+.1f}") + "\n")
    neighbors = model.nearest_neighbors()
    echo("nearest neighbour of each colour (its complement on the wheel):")
    pairs = [f"{a} -> {b}" for a, b in neighbors.items()]
    echo("\n".join("  " + ", ".join(pairs[i : i + 4]) for i in range(0, len(pairs), 4)) + "\n")

    colors = hue_colors(len(names))
    subject = f"colour harmony: the learned {table.shape[1]}-d rows of {len(names)} colours"
    plot_scatter(table, ctx.file("color_wheel.png"), labels=names, colors=colors, subject=subject)
    plot_similarity(
        table,
        ctx.file("color_cosine.png"),
        labels=names,
        title="colour harmony: cosine similarity of the rows",
    )
    write_html(
        table, ctx.file("color_wheel.html"), labels=names, colors=colors, dims=3, subject=subject
    )
    echo(
        f"pictures: {ctx.out / 'color_wheel.png'} (the wheel, PCA of the 4-d rows), "
        f"{ctx.out / 'color_cosine.png'} (heatmap), {ctx.out / 'color_wheel.html'} (rotate it)\n"
    )
    return {
        "accuracy": model.accuracy(),
        "initial": model.history_.initial,
        "history": model.history_.epochs,
        "names": names,
        "table": table.tolist(),
        "cosine": cos.tolist(),
        "nearest": neighbors,
    }
