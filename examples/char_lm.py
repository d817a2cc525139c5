"""A character-level neural probabilistic language model (Bengio et al. 2003) on generated text.

The text comes from a small grammar of English-like sentences ("the small cat sat on a
red mat.") unless ``--text FILE`` names a UTF-8 file, read one text per line. The script
trains :class:`rowbook.models.NPLM`, prints the training and validation perplexity of
every epoch (a uniform guess over the vocabulary scores V), and samples text.

    python examples/char_lm.py                     # generated text, ~10 s on 2 cores
    python examples/char_lm.py --tied --context 5
    python examples/char_lm.py --text book.txt --level word --epochs 20
"""

from __future__ import annotations

import os

# Every step here works on small arrays, where threads cost more than they save: a
# multi-threaded BLAS or numba kernel waits for its threads, and on a busy machine a
# thread can wait a whole scheduler slice (this script ran 9x slower with 2 threads on a
# loaded 2-core machine). Set the variables yourself to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import math
import time
from pathlib import Path

import numpy as np

from rowbook.models.nplm import NPLM

DETERMINERS = ("the", "a", "one", "every")
ADJECTIVES = ("small", "red", "old", "quiet", "happy", "grey")
NOUNS = ("cat", "dog", "bird", "fox", "child", "king")
VERBS = ("sat", "slept", "waited", "sang", "stood")
PREPOSITIONS = ("on", "under", "near", "behind")
PLACES = ("mat", "tree", "house", "hill", "bridge", "river")


def generated_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` sentences "det [adj] noun verb prep det [adj] place." from a fixed grammar.

    >>> generated_sentences(2, seed=1)[0].endswith(".")
    True
    """
    rng = np.random.default_rng(seed)
    pick = lambda words: words[rng.integers(len(words))]  # noqa: E731

    def phrase(nouns: tuple[str, ...]) -> str:
        adjective = f"{pick(ADJECTIVES)} " if rng.random() < 0.5 else ""
        return f"{pick(DETERMINERS)} {adjective}{pick(nouns)}"

    return [
        f"{phrase(NOUNS)} {pick(VERBS)} {pick(PREPOSITIONS)} {phrase(PLACES)}." for _ in range(n)
    ]


def perplexity_floor(texts: list[str]) -> float:
    """The best possible per-character perplexity on the generated text.

    Every sentence has one derivation, so its entropy is the sum of the choices' entropies:
    two determiners (4 each), two optional adjectives (a coin flip, then 1 of 6), a noun
    and a place (6 each), a verb (5) and a preposition (4). Spread over the characters
    (plus the end of each sentence) it gives the floor ``exp(H / mean(len + 1))``.
    """
    H = (
        2 * math.log(len(DETERMINERS))
        + 2 * (math.log(2) + 0.5 * math.log(len(ADJECTIVES)))
        + math.log(len(NOUNS))
        + math.log(len(VERBS))
        + math.log(len(PREPOSITIONS))
        + math.log(len(PLACES))
    )
    return math.exp(H / np.mean([len(t) + 1 for t in texts]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--text", type=Path, help="UTF-8 file, one text per line (default: generated)"
    )
    parser.add_argument("--level", choices=("char", "word"), default="char")
    parser.add_argument("--context", type=int, default=12)
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--tied", action="store_true", help="reuse the input table as output layer")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--optimizer", choices=("adam", "sgd", "sparse_adam"), default="adam")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small, fast run (for smoke tests)")
    args = parser.parse_args(argv)
    if args.text is not None:
        texts = [
            line for line in args.text.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    else:
        texts = generated_sentences(300 if args.quick else 3000, seed=args.seed)
    cut = max(1, len(texts) // 10)
    train, val = texts[cut:], texts[:cut]
    lm = NPLM(
        level=args.level,
        context=args.context,
        dim=args.dim,
        hidden=args.hidden,
        tied=args.tied,
        epochs=2 if args.quick else args.epochs,
        lr=args.lr,
        optimizer=args.optimizer,
        seed=args.seed,
    )
    start = time.perf_counter()
    lm.fit(train, val_texts=val)
    seconds = time.perf_counter() - start
    print(
        f"{len(train)} training and {len(val)} validation texts; vocabulary V = {len(lm.vocab_)} "
        f"(a uniform guess has perplexity {len(lm.vocab_)})"
    )
    if args.text is None and args.level == "char":
        print(f"the grammar's entropy allows a perplexity of {perplexity_floor(val):.3f} at best")
    print("| epoch | train perplexity | validation perplexity |\n|---|---|---|")
    for e in lm.history_.epochs:
        print(f"| {e['epoch'] + 1} | {e['perplexity']:.3f} | {e['val_perplexity']:.3f} |")
    print(f"trained in {seconds:.1f} s\n")
    for temperature in (1.0, 0.6):
        print(f"sample at temperature {temperature}:")
        print(
            lm.sample(300 if args.level == "char" else 60, temperature=temperature, seed=args.seed)
        )
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
