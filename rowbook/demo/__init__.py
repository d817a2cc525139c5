"""``rowbook demo``: the whole path from text to learned tables, on built-in data.

Seven sections, each printing what it does and writing its results into the output folder
(a JSON file per section, plus vectors, pictures and models):

1. :mod:`~rowbook.demo.lookup` -- "The cat sat on the mat": normalize, tokenize, vocab, ids,
   one-hot, lookup, the lookup == one-hot matmul check, a loss and its row-sparse gradient.
2. :mod:`~rowbook.demo.colors` -- the colour-harmony predictor trained to 100% accuracy, its
   table, cosine table, a 2-D picture of the wheel, a heatmap and a 3-D HTML view.
3. :mod:`~rowbook.demo.words` -- word2vec on a corpus with planted structure: neighbors, an
   analogy that works (king - man + woman = queen), the vectors as word2vec text.
4. :mod:`~rowbook.demo.subwords` -- the BPE paper's merge trace; a byte-level BPE's merges.
5. :mod:`~rowbook.demo.language_model` -- a character NPLM trained for seconds, and a sample.
6. :mod:`~rowbook.demo.unseen_words` -- fastText: a word the corpus never had, its n-grams,
   its nearest neighbors, and the model as a Facebook fastText ``.bin``.
7. :mod:`~rowbook.demo.transformer` -- a small GPT-2 trained for seconds: what tying its table
   saved, the bytes of its KV cache, a generated line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rowbook.demo._context import Context, Echo
from rowbook.demo.colors import color_harmony
from rowbook.demo.language_model import language_model
from rowbook.demo.lookup import HAND_TABLE, lookup_walkthrough
from rowbook.demo.subwords import bpe_merges
from rowbook.demo.transformer import transformer
from rowbook.demo.unseen_words import unseen_words
from rowbook.demo.words import word_vectors

__all__ = ["HAND_TABLE", "OUTPUTS", "SECTIONS", "run_demo"]

#: ``(name, title, section)``: each section writes ``<name>.json`` and the files it adds.
SECTIONS: list[tuple[str, str, Callable[[Context], dict[str, Any]]]] = [
    ("01_lookup", "1. The cat sat on the mat: text -> ids -> rows -> gradient", lookup_walkthrough),
    ("02_color_harmony", "2. Colour harmony: a 4-d table learned from 192 pairs", color_harmony),
    (
        "03_word_vectors",
        "3. Word vectors: word2vec on a corpus with planted structure",
        word_vectors,
    ),
    ("04_bpe", "4. Subwords: byte-pair encoding merges", bpe_merges),
    ("05_language_model", "5. A neural language model over characters", language_model),
    ("06_unseen_words", "6. Subword vectors: a word the corpus never had", unseen_words),
    ("07_transformer", "7. A Transformer: the table inside a GPT-2", transformer),
]

#: Every file a demo run writes, in order.
OUTPUTS = (
    "01_lookup.json",
    "color_wheel.png",
    "color_cosine.png",
    "color_wheel.html",
    "02_color_harmony.json",
    "planted_corpus.txt",
    "planted_analogies.txt",
    "word_vectors.txt",
    "word_space.png",
    "word_space.html",
    "03_word_vectors.json",
    "bpe.json",
    "04_bpe.json",
    "lm_training.png",
    "05_language_model.json",
    "subword_model.bin",
    "06_unseen_words.json",
    "07_transformer.json",
)


def run_demo(
    out: str | Path, *, seed: int = 0, echo: Echo = print, progress: bool = False
) -> list[Path]:
    """Run every section, writing into ``out`` (created if needed); returns the files written.

    ``echo`` receives everything printed (``print`` by default); ``progress`` shows
    progress bars while the models train.
    """
    ctx = Context(Path(out), seed=seed, echo=echo, progress=progress)
    ctx.out.mkdir(parents=True, exist_ok=True)
    for name, title, section in SECTIONS:
        echo(f"== {title} ==\n")
        ctx.write_json(f"{name}.json", section(ctx))
    return list(ctx.written)
