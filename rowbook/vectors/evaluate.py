"""Intrinsic evaluation of word vectors, with gensim's conventions (odd ones included).

**Analogies** (:func:`evaluate_analogies`, gensim's ``evaluate_word_analogies``): a
questions-words file holds ``: section name`` lines, each followed by questions
``a b c expected`` ("a is to b as c is to expected"). A question is answered with
3CosAdd (or 3CosMul) over the first ``restrict_vocab`` keys, excluding a, b and c; the
first of the 5 best candidates that is not an upper-cased copy of a, b or c is the
prediction.

**Word pairs** (:func:`evaluate_word_pairs`): lines ``word1<TAB>word2<TAB>score``; the
cosines of the known pairs are correlated (Pearson and Spearman) with the scores.

Conventions taken from gensim, so results match it:

* ``restrict_vocab`` is applied first: only the first ``restrict_vocab`` keys exist.
* ``case_insensitive=True`` upper-cases the file's words *and* the keys; when several
  keys upper-case to the same word (``King``, ``king``) the first (most frequent) wins.
  Python's ``str.upper`` is used (``"ß".upper() == "SS"``).
* A question or pair with an unknown word is skipped, unless ``dummy4unknown``, which
  counts the question as wrong / the pair as model similarity 0.0.
* Malformed lines (not 4 words; not 3 fields with a numeric third; ``#`` comments) are
  skipped silently; pair fields are not stripped, and ``delimiter`` splits exactly.
* Sections keep file order and empty sections; a last section ``"Total accuracy"``
  gathers every question. A section with no answered question scores 0.0.
* The out-of-vocabulary ratio of word pairs is a **percentage** (0-100), not a fraction.

Unlike gensim, a file with no usable question or pair raises a ``ValueError`` naming it
(gensim divides by zero for analogies), and analogies are answered in batches of one
matrix product each, not one query per question.

**Standard sets.** :data:`QUESTIONS_WORDS` is word2vec's ``questions-words.txt`` (Mikolov
et al. 2013; 19,544 questions; Apache-2.0, shipped with rowbook); ``rowbook evaluate
VECTORS`` with no file runs it. The word-pair sets' licences do not allow shipping them:
:data:`WORD_PAIR_SETS` says where each is published (pass the file as ``pairs``).

Both functions read a table's keys, rows and unit rows, so they take any
:class:`~rowbook.vectors.table.KeyedTable`: a :class:`~rowbook.vectors.Vectors` (whose
``evaluate_analogies`` and ``evaluate_word_pairs`` methods are these functions) or the plain
table beneath it.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from rowbook.corpus_files import open_binary
from rowbook.vectors.neighbors import (
    cos_mul_combine,
    pair_cosines,
    restrict_stop,
    top_k_rows,
    unit_rows,
)
from rowbook.vectors.table import KeyedTable

__all__ = [
    "QUESTIONS_WORDS",
    "WORD_PAIR_SETS",
    "evaluate_analogies",
    "evaluate_word_pairs",
    "read_analogy_questions",
    "restricted_vocab",
]

Question = tuple[str, str, str, str]
#: word2vec's analogy questions (Apache-2.0), shipped with rowbook: see ``sets/README.md``.
QUESTIONS_WORDS = Path(__file__).parent / "sets" / "questions-words.txt"
#: Word-pair sets not shipped (their licences do not say they may be): where to get them.
WORD_PAIR_SETS = {
    "WordSim-353": "http://alfonseca.org/eng/research/wordsim353.html",
    "SimLex-999": "https://fh295.github.io/simlex.html",
    "MEN": "https://staff.fnwi.uva.nl/e.bruni/MEN",
}
_CANDIDATES = 5  # gensim reads the 5 best answers, then skips copies of the question words
_SCORES_PER_BLOCK = 1 << 22  # floats in one (questions x keys) score block


def restricted_vocab(keys: Sequence[str], stop: int, case_insensitive: bool) -> dict[str, int]:
    """Map the first ``stop`` keys (upper-cased if ``case_insensitive``) to their rows; first wins.

    Examples
    --------
    >>> restricted_vocab(["king", "King", "queen", "rare"], 3, True)
    {'KING': 0, 'QUEEN': 2}
    """
    vocab: dict[str, int] = {}
    for index, key in enumerate(keys[:stop]):
        vocab.setdefault(key.upper() if case_insensitive else key, index)
    return vocab


def read_analogy_questions(
    path: str | os.PathLike[str], case_insensitive: bool = True
) -> list[tuple[str, list[Question]]]:
    """Sections of a questions-words file: ``[(name, [(a, b, c, expected), ...]), ...]``.

    Lines that are not 4 words are skipped; a question before the first ``: name`` line
    is an error.
    """
    sections: list[tuple[str, list[Question]]] = []
    with open_binary(path, "analogy questions file") as f:  # compressed ones too
        for line_no, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf8")
            except UnicodeDecodeError as err:
                raise ValueError(f"{path}, line {line_no}: not UTF-8 ({err.reason})") from None
            if line.startswith(": "):
                sections.append((line.lstrip(": ").strip(), []))
                continue
            if not sections:
                raise ValueError(
                    f"{path}, line {line_no}: a question before the first ': section name' line"
                )
            words = line.split()
            if len(words) == 4:
                sections[-1][1].append(tuple(w.upper() if case_insensitive else w for w in words))
    return sections


def evaluate_analogies(
    vectors: KeyedTable,
    path: str | os.PathLike[str],
    restrict_vocab: int | None = 300_000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
    method: Literal["3cosadd", "3cosmul"] = "3cosadd",
) -> tuple[float, list[dict]]:
    """Analogy accuracy, overall and per section (gensim's ``evaluate_word_analogies``).

    Returns
    -------
    score : float
        Correct / (correct + incorrect) over all counted questions (0.0 if none).
    sections : list of dict
        ``{"section": name, "correct": [...], "incorrect": [...]}`` per section in file
        order, question tuples as compared (upper-cased if ``case_insensitive``), then
        ``"Total accuracy"``.
    """
    if method not in ("3cosadd", "3cosmul"):
        raise ValueError(f"method must be '3cosadd' or '3cosmul', got {method!r}")
    stop = restrict_stop(restrict_vocab, len(vectors))
    vocab = restricted_vocab(vectors.index_to_key, stop, case_insensitive)
    sections = read_analogy_questions(path, case_insensitive)
    questions = [q for _, qs in sections for q in qs]
    if not questions:
        raise ValueError(f"{path}: no analogy questions (lines of 4 words under ': section' lines)")
    known = [i for i, q in enumerate(questions) if all(w in vocab for w in q)]
    abc = np.array([[vocab[w] for w in questions[i][:3]] for i in known], dtype=np.int64)
    candidates = _candidates(vectors, stop, abc.reshape(-1, 3), method)
    verdicts: dict[int, bool] = {}
    for row, (i, inputs) in enumerate(zip(known, abc.tolist(), strict=True)):
        kept = [j for j in candidates[row].tolist() if j not in inputs][:_CANDIDATES]
        predicted = None
        for j in kept:  # gensim: first candidate that is not a case variant of a, b, c
            predicted = (
                vectors.index_to_key[j].upper() if case_insensitive else vectors.index_to_key[j]
            )
            if predicted in vocab and predicted not in questions[i][:3]:
                break
        verdicts[i] = predicted == questions[i][3]
    return _tally(sections, verdicts, dummy4unknown)


def _candidates(vectors: KeyedTable, stop: int, abc: np.ndarray, method: str) -> np.ndarray:
    """Best of the first ``stop`` rows for questions ``abc`` (Q, 3), best first: (Q, min(8, stop))."""
    k = min(_CANDIDATES + 3, stop)  # gensim asks for topn + number of inputs
    best = np.empty((len(abc), k), dtype=np.int64)
    block = max(1, _SCORES_PER_BLOCK // max(stop, 1))
    for start in range(0, len(abc), block):
        a, b, c = (vectors.unit_rows_at(abc[start : start + block, j]) for j in range(3))  # (q, d)
        if method == "3cosadd":
            scores = vectors.cosines(unit_rows(b + c - a)[1], stop)  # (q, stop)
        else:
            cosines = [vectors.cosines(t, stop) for t in (b, c, a)]  # each (q, stop)
            scores = cos_mul_combine(cosines[:2], cosines[2:])
        pool = vectors.rerank_pool(k)
        if pool is None:
            best[start : start + block] = top_k_rows(scores, k)
        else:  # estimated scores: re-score a pool of the best exactly, keep the k best of those
            pool_rows = top_k_rows(scores, min(pool, stop))  # (q, P)
            exact = _exact_scores(vectors, pool_rows, (a, b, c), method)  # (q, P)
            order = np.argsort(-exact, axis=1, kind="stable")[:, :k]
            best[start : start + block] = np.take_along_axis(pool_rows, order, axis=1)
    return best


def _exact_scores(
    vectors: KeyedTable, rows: np.ndarray, abc: tuple[np.ndarray, ...], method: str
) -> np.ndarray:
    """Scores of the candidate ``rows`` (q, P) of each question from the table's exact rows."""
    unit = vectors.unit_rows_at(rows.reshape(-1)).reshape(*rows.shape, -1)  # (q, P, d)
    a, b, c = abc
    if method == "3cosadd":
        return np.einsum("qpd,qd->qp", unit, unit_rows(b + c - a)[1])
    cosines = [np.einsum("qpd,qd->qp", unit, t) for t in (b, c, a)]
    return cos_mul_combine(cosines[:2], cosines[2:])


def _tally(
    sections: list[tuple[str, list[Question]]], verdicts: dict[int, bool], dummy4unknown: bool
) -> tuple[float, list[dict]]:
    """Per-section and total results in gensim's layout; unknown questions per ``dummy4unknown``."""
    results, position = [], 0
    for name, questions in sections:
        section: dict = {"section": name, "correct": [], "incorrect": []}
        for question in questions:
            verdict = verdicts.get(position, None if not dummy4unknown else False)
            if verdict is not None:
                section["correct" if verdict else "incorrect"].append(question)
            position += 1
        results.append(section)
    total = {
        "section": "Total accuracy",
        "correct": [q for s in results for q in s["correct"]],
        "incorrect": [q for s in results for q in s["incorrect"]],
    }
    results.append(total)
    answered = len(total["correct"]) + len(total["incorrect"])
    return (len(total["correct"]) / answered if answered else 0.0), results


def evaluate_word_pairs(
    vectors: KeyedTable,
    path: str | os.PathLike[str],
    delimiter: str = "\t",
    encoding: str = "utf8",
    restrict_vocab: int | None = 300_000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
) -> tuple[tuple[float, float], tuple[float, float], float]:
    """Correlation of cosine similarities with human scores (gensim's ``evaluate_word_pairs``).

    Returns
    -------
    pearson : (float, float)
        Pearson's r and its two-sided p-value.
    spearman : (float, float)
        Spearman's rho and its two-sided p-value.
    oov_ratio : float
        Percentage (0-100) of pairs with an unknown word.
    """
    stop = restrict_stop(restrict_vocab, len(vectors))
    vocab = restricted_vocab(vectors.index_to_key, stop, case_insensitive)
    gold, rows, oov = [], [], 0  # rows: (i, j) of the pair, or None for an unknown pair
    with open_binary(path, "word pairs file") as raw, io.TextIOWrapper(raw, encoding=encoding) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.split(delimiter)
            if case_insensitive:
                fields = [field.upper() for field in fields]
            try:
                first, second, score = fields
                score = float(score)
            except ValueError:
                continue  # gensim skips lines that are not 3 fields with a number last
            if first not in vocab or second not in vocab:
                oov += 1
                if dummy4unknown:
                    gold.append(score)
                    rows.append(None)
                continue
            gold.append(score)
            rows.append((vocab[first], vocab[second]))
    if not gold:
        raise ValueError(
            f"{path}: no usable word pairs (lines 'word1{delimiter!r}word2{delimiter!r}score' "
            f"with both words among the first {stop} keys)"
        )
    from scipy import stats  # 0.3 s to import: only when pairs are scored

    model = _pair_cosines(vectors, rows)
    pearson, spearman = stats.pearsonr(gold, model), stats.spearmanr(gold, model)
    oov_ratio = oov / (len(gold) if dummy4unknown else len(gold) + oov) * 100
    return (
        (float(pearson.statistic), float(pearson.pvalue)),
        (float(spearman.statistic), float(spearman.pvalue)),
        oov_ratio,
    )


def _pair_cosines(vectors: KeyedTable, rows: list[tuple[int, int] | None]) -> np.ndarray:
    """Cosine of each (i, j) pair of rows, as ``Vectors.similarity``; 0.0 for ``None``.

    ``None`` marks a pair with an unknown word (gensim's dummy similarity).
    """
    known = [r for r in rows if r is not None]
    pairs = np.array(known, dtype=np.int64).reshape(-1, 2)  # (n, 2)
    cosines = pair_cosines(vectors.rows_at(pairs[:, 0]), vectors.rows_at(pairs[:, 1]))  # (n,)
    model = np.zeros(len(rows), dtype=np.float64)
    model[[k for k, r in enumerate(rows) if r is not None]] = cosines
    return model
