"""Demo section 3: word2vec on a generated corpus whose structure is known in advance.

The corpus (:func:`rowbook.data.synthetic.planted_corpus`) puts king/queen, man/woman,
prince/princess, boy/girl in the same kind of sentences, told apart only by gender,
rank and age words, and each country and its capital beside the same marker word. So
the offsets the vectors should learn are planted: queen - king = woman - man, and
tokyo - japan = paris - france.
"""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context
from rowbook.io import atomic_write

__all__ = ["ANALOGIES", "QUERIES", "word_vectors"]

QUERIES = ("king", "woman", "france", "paris")
ANALOGIES = (
    ("man", "woman", "king", "queen"),
    ("france", "paris", "japan", "tokyo"),
    ("boy", "girl", "prince", "princess"),
)
SETTINGS = {
    "vector_size": 24,
    "window": 5,
    "min_count": 5,
    "sample": 0.0,
    "negative": 5,
    "epochs": 8,
    "workers": 1,
    "kernel": "classic",  # the run the demo's pages and pictures record (docs/assets/demo)
}


def word_vectors(ctx: Context) -> dict[str, Any]:
    """Train, query (neighbors, analogies, the planted test set), save, and draw."""
    from rowbook.data.synthetic import CAPITALS, PEOPLE, planted_analogies, planted_corpus
    from rowbook.models import Word2Vec

    echo = ctx.echo
    corpus = planted_corpus(3000, seed=ctx.seed)
    with atomic_write(ctx.file("planted_corpus.txt"), "w", encoding="utf-8") as f:
        f.writelines(" ".join(sentence) + "\n" for sentence in corpus)
    model = Word2Vec(**SETTINGS, seed=ctx.seed).fit(corpus)  # 1 worker: the same run every time
    vectors = model.vectors
    echo(f"corpus: {len(corpus)} generated sentences ({sum(map(len, corpus)):,} words), such as")
    echo("".join(f"  {' '.join(s)!r}\n" for s in corpus[:2]))
    echo(
        f"skip-gram, negative sampling, {SETTINGS['epochs']} epochs: {len(vectors)} words x "
        f"{vectors.vector_size} dims in {sum(p.seconds for p in model.history_):.1f} s\n"
    )

    neighbors = {w: vectors.most_similar(w, topn=4) for w in QUERIES}
    echo("nearest neighbors (cosine):")
    echo(_side_by_side(neighbors) + "\n")
    answers = []
    for a, b, c, expected in ANALOGIES:
        best, score = vectors.most_similar(positive=[b, c], negative=[a], topn=1)[0]
        answers.append(
            {"question": [a, b, c], "expected": expected, "answer": best, "cosine": score}
        )
        mark = "right" if best == expected else f"wrong, expected {expected}"
        echo(f"  {c} - {a} + {b} = {best}  ({score:.3f}, {mark})")

    questions = ctx.file("planted_analogies.txt")
    with atomic_write(questions, "w", encoding="utf-8") as f:
        f.write(": planted\n" + "".join(" ".join(q) + "\n" for q in planted_analogies()))
    accuracy, sections = vectors.evaluate_analogies(questions)
    n_questions = len(sections[-1]["correct"]) + len(sections[-1]["incorrect"])
    echo(f"\nall {n_questions} planted analogies (3CosAdd): {accuracy:.1%} right")

    vectors.save_word2vec_format(ctx.file("word_vectors.txt"))
    words = [*PEOPLE, *CAPITALS, *(capital for capital, _ in CAPITALS.values())]
    groups = ["person"] * len(PEOPLE) + ["country"] * len(CAPITALS) + ["capital"] * len(CAPITALS)
    _draw(ctx, vectors, words, groups)
    echo(
        f"vectors: {ctx.out / 'word_vectors.txt'} (word2vec text); pictures: "
        f"{ctx.out / 'word_space.png'}, {ctx.out / 'word_space.html'}"
    )
    echo(f"try: rowbook neighbors {ctx.out / 'word_vectors.txt'} queen tokyo\n")
    return {
        "settings": SETTINGS,
        "vocabulary": len(vectors),
        "analogies": answers,
        "planted_accuracy": accuracy,
        "planted_questions": n_questions,
        "neighbors": {w: [[k, c] for k, c in pairs] for w, pairs in neighbors.items()},
    }


def _side_by_side(neighbors: dict[str, list[tuple[str, float]]]) -> str:
    """One column per query word, ``word cosine`` cells."""
    columns = {q: [f"{k} {c:.2f}" for k, c in pairs] for q, pairs in neighbors.items()}
    width = max(len(cell) for cells in columns.values() for cell in [*cells, "x" * 12])
    lines = ["  " + "  ".join(f"{q:<{width}}" for q in columns).rstrip()]
    for row in zip(*columns.values(), strict=True):
        lines.append("  " + "  ".join(f"{cell:<{width}}" for cell in row).rstrip())
    return "\n".join(lines)


def _draw(ctx: Context, vectors: Any, words: list[str], groups: list[str]) -> None:
    from rowbook.viz import plot_scatter, write_html

    subject = f"word2vec on the planted corpus, {len(words)} words"
    plot_scatter(vectors, ctx.file("word_space.png"), words=words, groups=groups, subject=subject)
    write_html(
        vectors, ctx.file("word_space.html"), words=words, groups=groups, dims=3, subject=subject
    )
