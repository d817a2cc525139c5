"""Demo section 6: fastText on planted morphology, and the vector of a word the corpus never had.

A fastText word is the mean of its rows: its own and one per hashed character n-gram
(:mod:`rowbook.text.char_ngrams`). The corpus (:mod:`rowbook.data.morphology`) has made-up
stems with the suffixes -, s, ed, ing and never the suffix er, so ``stem + "er"`` gets no
row of its own; its bag of n-grams still gives it a vector, next to its stem.
"""

from __future__ import annotations

from typing import Any

from rowbook.demo._context import Context

__all__ = ["unseen_words"]

SETTINGS = {
    "vector_size": 24,
    "min_count": 2,
    "minn": 3,
    "maxn": 6,
    "bucket": 20_000,
    "sample": 1e-3,
    "epochs": 5,
    "workers": 1,
    "kernel": "classic",  # the run the demo's pages record (docs/assets/demo)
}
SHOWN = 3


def unseen_words(ctx: Context) -> dict[str, Any]:
    """Train FastText, show an unseen word's n-grams and rows, and its nearest neighbors."""
    from rowbook.data.morphology import HELD_OUT_SUFFIX, made_up_stems, morphology_corpus
    from rowbook.models import FastText

    echo = ctx.echo
    corpus = morphology_corpus(120, 3000, seed=ctx.seed)
    model = FastText(**SETTINGS, seed=ctx.seed).fit(corpus)  # 1 worker: the same run every time
    vectors = model.vectors
    echo(f"corpus: {len(corpus)} sentences of made-up stems + (-, s, ed, ing), such as")
    echo(f"  {' '.join(corpus[0])!r}")
    echo(
        f"fastText skip-gram, n-grams {SETTINGS['minn']}-{SETTINGS['maxn']}: {len(vectors)} words + "
        f"{SETTINGS['bucket']:,} n-gram buckets = {model.W_in_.shape[0]:,} rows x {vectors.vector_size} dims\n"
    )

    stems = made_up_stems(120, ctx.seed)
    word = stems[0] + HELD_OUT_SUFFIX
    bag = model.subwords(word)
    echo(
        f"{word!r} is not in the vocabulary; its bag is the {len(bag)} n-grams of '<{word}>' (-> row):"
    )
    echo("  " + ", ".join(f"{g} -> {i}" for g, i in bag))
    echo(f"its vector is their mean (an EmbeddingBag(mode='mean') over rows {len(vectors)}..):")
    neighbors = {
        w: vectors.most_similar(w, topn=4)
        for w in [word, *(s + HELD_OUT_SUFFIX for s in stems[1:SHOWN])]
    }
    for w, pairs in neighbors.items():
        echo(f"  nearest to {w:<12} " + ", ".join(f"{k} {c:.2f}" for k, c in pairs))
    hits = sum(vectors.most_similar(s + HELD_OUT_SUFFIX, topn=1)[0][0].startswith(s) for s in stems)
    echo(
        f"over all {len(stems)} unseen '-{HELD_OUT_SUFFIX}' words, the nearest word is a form of the stem "
        f"for {hits} ({hits / len(stems):.0%})"
    )
    model.save_fasttext(ctx.file("subword_model.bin"))
    echo(
        f"model: {ctx.out / 'subword_model.bin'} (Facebook fastText .bin; fasttext.load_model reads it)"
    )
    echo(f"try: rowbook neighbors {ctx.out / 'subword_model.bin'} {stems[1]}er\n")
    return {
        "settings": SETTINGS,
        "vocabulary": len(vectors),
        "word": word,
        "in_vocabulary": word in vectors,
        "subwords": [[g, i] for g, i in bag],
        "stem_hits": hits,
        "stems": len(stems),
        "neighbors": {w: [[k, c] for k, c in pairs] for w, pairs in neighbors.items()},
    }
