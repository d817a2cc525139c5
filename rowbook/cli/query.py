"""Questions to a vectors file: ``neighbors``, ``analogy``, ``similarity``, ``evaluate``.

Each loads VECTORS (format from the suffix or the content, see
:mod:`rowbook.cli._vectorio`), calls one :class:`~rowbook.vectors.Vectors` method and
prints an aligned table, or JSON with ``--json``. An unknown word is an error naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rowbook.cli._common import (
    add_command,
    add_json,
    add_positionals,
    add_vectors_reading,
    check_input_file,
    check_words,
    format_table,
    print_json,
)
from rowbook.cli._vectorio import load_vectors
from rowbook.cli.options import add_option

__all__ = ["register"]


def _ranked(pairs: list[tuple[str, float]], score: str) -> str:
    rows = [(rank, word, f"{value:.4f}") for rank, (word, value) in enumerate(pairs, start=1)]
    return format_table(["rank", "word", score], rows, "rlr")


def run_neighbors(args: argparse.Namespace) -> int:
    vectors, _ = load_vectors(
        args.vectors, unicode_errors=args.unicode_errors, mmap=args.mmap, cache_dir=args.cache_dir
    )
    check_words(vectors, args.words, args.vectors)
    if args.index:
        _attach_index(vectors, Path(args.index))
    results = {
        word: vectors.most_similar(word, topn=args.topn, approximate=bool(args.index))
        for word in args.words
    }
    if args.json:
        print_json(
            {w: [{"word": k, "cosine": c} for k, c in pairs] for w, pairs in results.items()}
        )
        return 0
    blocks = [f"nearest to {w!r}:\n{_ranked(pairs, 'cosine')}" for w, pairs in results.items()]
    print("\n\n".join(blocks))
    return 0


def _attach_index(vectors: Any, path: Path) -> None:
    """Load the approximate index at ``path``, or build one (IVF: seconds, not minutes) and save it there."""
    if path.exists():
        vectors.load_index(path)
        return
    index = vectors.build_index("ivf")
    vectors.save_index(path)
    print(f"built {index} -> {path}; later runs with --index {path} load it", file=sys.stderr)


def run_analogy(args: argparse.Namespace) -> int:
    vectors, _ = load_vectors(
        args.vectors, unicode_errors=args.unicode_errors, mmap=args.mmap, cache_dir=args.cache_dir
    )
    a, b, c = args.a, args.b, args.c
    check_words(vectors, [a, b, c], args.vectors)
    query = vectors.most_similar if args.method == "3cosadd" else vectors.most_similar_cosmul
    answers = query(positive=[b, c], negative=[a], topn=args.topn)
    score = "cosine" if args.method == "3cosadd" else "score"
    if args.json:
        print_json(
            {
                "a": a,
                "b": b,
                "c": c,
                "method": args.method,
                "answers": [{"word": k, score: s} for k, s in answers],
            }
        )
        return 0
    print(f"{a} : {b} :: {c} : ?   ({b} - {a} + {c}, {args.method})")
    print(_ranked(answers, score))
    return 0


def run_similarity(args: argparse.Namespace) -> int:
    vectors, _ = load_vectors(
        args.vectors, unicode_errors=args.unicode_errors, mmap=args.mmap, cache_dir=args.cache_dir
    )
    check_words(vectors, [args.word1, args.word2], args.vectors)
    cosine = vectors.similarity(args.word1, args.word2)
    if args.json:
        print_json({"word1": args.word1, "word2": args.word2, "cosine": cosine})
    else:
        print(f"cosine({args.word1}, {args.word2}) = {cosine:.4f}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    if args.analogies is None and args.pairs is None:
        from rowbook.vectors.evaluate import QUESTIONS_WORDS, WORD_PAIR_SETS

        args.analogies = QUESTIONS_WORDS
        where = "; ".join(f"{name}: {url}" for name, url in WORD_PAIR_SETS.items())
        print(
            "no --analogies or --pairs given: running word2vec's questions-words.txt (shipped "
            f"with rowbook). Word-pair sets are not shipped; get one ({where}) and pass "
            "--pairs FILE",
            file=sys.stderr,
        )
    vectors, _ = load_vectors(
        args.vectors, unicode_errors=args.unicode_errors, mmap=args.mmap, cache_dir=args.cache_dir
    )
    options = {"restrict_vocab": args.restrict_vocab, "case_insensitive": not args.case_sensitive}
    report: dict[str, Any] = {}
    if args.analogies is not None:
        path = check_input_file(args.analogies, "analogy questions")
        accuracy, sections = vectors.evaluate_analogies(path, method=args.method, **options)
        report["analogies"] = _analogy_report(path, accuracy, sections, options["case_insensitive"])
    if args.pairs is not None:
        path = check_input_file(args.pairs, "word pairs")
        pearson, spearman, oov = vectors.evaluate_word_pairs(
            path, delimiter=args.delimiter, **options
        )
        report["pairs"] = {
            "file": str(path),
            "pearson": pearson[0],
            "pearson_p": pearson[1],
            "spearman": spearman[0],
            "spearman_p": spearman[1],
            "oov_percent": oov,
        }
    if args.json:
        print_json(report)
    else:
        _print_report(report)
    return 0


def _analogy_report(
    path: Path, accuracy: float, sections: list[dict], case_insensitive: bool
) -> dict[str, Any]:
    """Per section: correct, answered (``total``, gensim's denominator), questions in the file,
    skipped (a word out of vocabulary), accuracy over the answered and over all questions."""
    from rowbook.vectors.evaluate import read_analogy_questions

    asked = [len(questions) for _, questions in read_analogy_questions(path, case_insensitive)]
    rows = []
    for section, questions in zip(sections, [*asked, sum(asked)], strict=True):
        correct, answered = (
            len(section["correct"]),
            len(section["correct"]) + len(section["incorrect"]),
        )
        rows.append(
            {
                "section": section["section"],
                "correct": correct,
                "total": answered,
                "questions": questions,
                "skipped": questions - answered,
                "accuracy": correct / answered if answered else 0.0,
                "accuracy_all": correct / questions if questions else 0.0,
            }
        )
    total = rows[-1]
    return {
        "file": str(path),
        "accuracy": accuracy,
        "accuracy_all": total["accuracy_all"],
        "questions": total["questions"],
        "skipped": total["skipped"],
        "sections": rows,
    }


def _print_analogies(r: dict[str, Any]) -> None:
    total = r["sections"][-1]
    print(
        f"analogies ({r['file']}): {total['correct']:,} of {total['total']:,} answered questions "
        f"correct = {r['accuracy']:.2%} (gensim's score); {r['skipped']:,} of "
        f"{r['questions']:,} questions skipped (a word not in the vocabulary); "
        f"{r['accuracy_all']:.2%} of all questions correct"
    )
    rows = [
        (
            s["section"],
            s["correct"],
            s["total"],
            s["skipped"],
            f"{s['accuracy']:.2%}" if s["total"] else "-",
            f"{s['accuracy_all']:.2%}",
        )
        for s in r["sections"]
        if s["questions"]  # a section without questions is no row
    ]
    headers = ["section", "correct", "answered", "skipped", "accuracy", "of all"]
    print(format_table(headers, rows, "lrrrrr"))


def _print_report(report: dict[str, Any]) -> None:
    if "analogies" in report:
        _print_analogies(report["analogies"])
    if "pairs" in report:
        r = report["pairs"]
        print(
            f"word pairs ({r['file']}): Pearson r = {r['pearson']:.4f} (p = {r['pearson_p']:.3g}), "
            f"Spearman rho = {r['spearman']:.4f} (p = {r['spearman_p']:.3g}), "
            f"{r['oov_percent']:.1f}% of pairs out of vocabulary"
        )


# -- parsers --------------------------------------------------------------------------------


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "neighbors",
        run=run_neighbors,
        help="nearest words by cosine similarity",
        description="List the words nearest to each WORD (cosine similarity of the vectors).",
        examples=[
            "rowbook neighbors vectors.txt king",
            "rowbook neighbors vectors.npz king paris --topn 5",
            "rowbook neighbors glove.6B.50d.txt frog --json",
        ],
    )
    add_positionals(p, VECTORS="a .npz, word2vec (.txt/.vec/.bin) or GloVe file")
    p.add_argument("words", metavar="WORD", nargs="+")
    add_option(p, "--topn", default=10, metavar="N")
    add_option(
        p,
        "--index",
        "answer from an approximate index (faiss) kept "
        "in FILE, built there on first use; for tables of millions of words",
        metavar="FILE",
    )
    add_json(p)
    add_vectors_reading(p)

    p = add_command(
        commands,
        "analogy",
        run=run_analogy,
        help="A is to B as C is to ?",
        description="Answer 'A is to B as C is to ?' with the words nearest to B - A + C "
        "(3CosAdd), or by 3CosMul; A, B and C are never answers.",
        examples=[
            "rowbook analogy vectors.txt man woman king",
            "rowbook analogy vectors.txt france paris japan --topn 3 --method 3cosmul --json",
        ],
    )
    add_positionals(p, "VECTORS", "A", "B", "C")
    add_option(p, "--topn", default=5, metavar="N")
    add_option(p, "--method", default="3cosadd", choices=("3cosadd", "3cosmul"))
    add_json(p)
    add_vectors_reading(p)

    p = add_command(
        commands,
        "similarity",
        run=run_similarity,
        help="cosine similarity of two words",
        description="Print the cosine similarity of the vectors of WORD1 and WORD2.",
        examples=[
            "rowbook similarity vectors.txt king queen",
            "rowbook similarity vectors.npz cat dog --json",
        ],
    )
    add_positionals(p, "VECTORS", "WORD1", "WORD2")
    add_json(p)
    add_vectors_reading(p)

    p = add_command(
        commands,
        "evaluate",
        run=run_evaluate,
        help="analogy accuracy and word-pair correlation",
        description="Score VECTORS on analogy questions (word2vec's questions-words format: ': "
        "section' lines, then 'a b c d' lines) and/or word pairs with human scores ('w1<TAB>w2<TAB>"
        "score' lines), with gensim's conventions. With neither file, word2vec's "
        "questions-words.txt (shipped with rowbook) is run.",
        examples=[
            "rowbook evaluate vectors.txt",
            "rowbook evaluate vectors.txt --analogies questions-words.txt",
            "rowbook evaluate vectors.bin --pairs wordsim353.tsv --json",
            "rowbook evaluate vectors.npz --analogies q.txt --pairs p.tsv --restrict-vocab 30000",
        ],
    )
    add_positionals(p, "VECTORS")
    add_option(p, "--analogies", "questions-words file", metavar="FILE")
    add_option(p, "--pairs", "word pairs with similarity scores", metavar="FILE")
    add_option(p, "--delimiter", "field separator of --pairs", default="\t", shown="tab")
    add_option(p, "--restrict-vocab", "use only the first N words", default=300_000, metavar="N")
    p.add_argument(
        "--case-sensitive", action="store_true", help="do not upper-case words to compare"
    )
    add_option(p, "--method", default="3cosadd", choices=("3cosadd", "3cosmul"))
    add_json(p)
    add_vectors_reading(p)
