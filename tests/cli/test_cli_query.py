"""neighbors, analogy, similarity, evaluate: answers checked against NumPy formulas and gensim."""

from __future__ import annotations

import json

import numpy as np
import pytest


def unit(table: np.ndarray) -> np.ndarray:
    return table / np.linalg.norm(table, axis=1, keepdims=True)


def ranked(keys, scores, exclude, topn):
    order = [i for i in np.argsort(-scores, kind="stable") if keys[i] not in exclude]
    return [(keys[i], float(scores[i])) for i in order[:topn]]


def test_neighbors_match_cosine_ranking(run, vectors_txt, planted):
    keys, table = planted
    result = run("neighbors", vectors_txt, "king", "paris", "--topn", 4, "--json")
    assert result.code == 0, result
    answer = json.loads(result.out)
    U = unit(table.astype(np.float64))
    for word in ("king", "paris"):
        expected = ranked(keys, U @ U[keys.index(word)], {word}, 4)
        got = [(d["word"], d["cosine"]) for d in answer[word]]
        assert [w for w, _ in got] == [w for w, _ in expected]
        np.testing.assert_allclose([c for _, c in got], [c for _, c in expected], rtol=1e-5)


def test_neighbors_table_is_aligned(run, vectors_txt, planted):
    keys, table = planted
    result = run("neighbors", vectors_txt, "woman", "--topn", 3)
    assert result.code == 0 and result.err == ""
    lines = result.out.strip().splitlines()
    assert lines[0] == "nearest to 'woman':"
    assert lines[1].split() == ["rank", "word", "cosine"]
    U = unit(table.astype(np.float64))
    expected = ranked(keys, U @ U[keys.index("woman")], {"woman"}, 3)
    for rank, (line, (word, cosine)) in enumerate(zip(lines[2:], expected, strict=True), start=1):
        assert line.split() == [str(rank), word, f"{cosine:.4f}"]
    assert (
        len(
            {line.index("cosine") + len("cosine") for line in lines[1:2]}
            | {len(x) for x in lines[2:]}
        )
        == 1
    )


@pytest.mark.parametrize("method", ["3cosadd", "3cosmul"])
def test_analogy_matches_formula(run, vectors_txt, planted, method):
    keys, table = planted
    result = run(
        "analogy", vectors_txt, "man", "woman", "king", "--topn", 3, "--method", method, "--json"
    )
    assert result.code == 0, result
    answer = json.loads(result.out)
    U = unit(table.astype(np.float64))
    a, b, c = (U[keys.index(w)] for w in ("man", "woman", "king"))
    if method == "3cosadd":
        q = b - a + c
        scores = U @ (q / np.linalg.norm(q))
    else:  # Levy & Goldberg: cos' = (1 + cos) / 2
        cos = lambda v: (1 + U @ v) / 2  # noqa: E731
        scores = cos(b) * cos(c) / (cos(a) + 1e-6)
    expected = ranked(keys, scores, {"man", "woman", "king"}, 3)
    score = "cosine" if method == "3cosadd" else "score"
    assert [d["word"] for d in answer["answers"]] == [w for w, _ in expected]
    assert answer["answers"][0]["word"] == "queen"  # planted
    np.testing.assert_allclose(
        [d[score] for d in answer["answers"]], [s for _, s in expected], rtol=1e-4
    )


def test_analogy_table(run, vectors_txt):
    result = run("analogy", vectors_txt, "france", "paris", "italy", "--topn", 2)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith("france : paris :: italy : ?")
    assert lines[2].split()[:2] == ["1", "rome"]


def test_similarity_is_the_cosine(run, vectors_txt, planted):
    keys, table = planted
    x, y = (
        table[keys.index("king")].astype(np.float64),
        table[keys.index("apple")].astype(np.float64),
    )
    expected = x @ y / np.linalg.norm(x) / np.linalg.norm(y)
    result = run("similarity", vectors_txt, "king", "apple", "--json")
    assert json.loads(result.out)["cosine"] == pytest.approx(expected, rel=1e-5)
    result = run("similarity", vectors_txt, "king", "apple")
    assert result.out.strip() == f"cosine(king, apple) = {expected:.4f}"


@pytest.mark.parametrize(
    "argv",
    [
        ("neighbors", "{v}", "king", "quen"),
        ("analogy", "{v}", "man", "quen", "king"),
        ("similarity", "{v}", "quen", "king"),
        ("plot", "{v}", "--words", "king", "quen", "-o", "{d}/x.png"),
    ],
)
def test_unknown_word_names_it(run, one_line_error, vectors_txt, argv):
    argv = [a.format(v=vectors_txt, d=vectors_txt.parent) for a in argv]
    result = run(*argv)
    one_line_error(result, argv[0], "'quen'", "did you mean 'queen'")


def test_missing_and_malformed_vectors_files(run, one_line_error, tmp_path, vectors_txt):
    one_line_error(
        run("neighbors", tmp_path / "nope.txt", "king"), "neighbors", "nope.txt", "does not exist"
    )
    lines = vectors_txt.read_text().splitlines()
    lines[4] = " ".join(lines[4].split()[:-1])  # row 4 (file line 5) loses a value
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n")
    one_line_error(run("neighbors", bad, "king"), "neighbors", "line 5")
    lines = vectors_txt.read_text().splitlines()
    fields = lines[2].split()
    fields[3] = "abc"
    bad.write_text("\n".join([lines[0], lines[1], " ".join(fields), *lines[3:]]) + "\n")
    one_line_error(run("similarity", bad, "man", "man"), "similarity", "line 3")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really a zip")
    one_line_error(run("neighbors", tmp_path / "junk.npz", "king"), "neighbors", "junk.npz")


def test_glove_files_are_recognised(run, tmp_path, planted, write_vectors):
    keys, table = planted
    path = write_vectors(tmp_path / "glove.txt", keys, table, header=False)
    result = run("similarity", path, "king", "queen", "--json")
    x, y = table[2].astype(np.float64), table[3].astype(np.float64)
    assert json.loads(result.out)["cosine"] == pytest.approx(
        x @ y / np.linalg.norm(x) / np.linalg.norm(y), rel=1e-5
    )


# -- evaluate: the same numbers as gensim on the same files ----------------------------------------


@pytest.fixture
def eval_files(tmp_path):
    from gensim.test.utils import datapath

    questions = open(datapath("questions-words.txt"), encoding="utf-8").read().splitlines()
    sections, keep = [], []
    for line in questions:
        if line.startswith(":"):
            sections.append(line)
            if len(sections) > 3:
                break
            keep.append(line)
        elif len([k for k in keep if not k.startswith(":")]) < 120 * len(sections):
            keep.append(line)
    qpath = tmp_path / "questions.txt"
    qpath.write_text("\n".join(keep) + "\n", encoding="utf-8")
    lines = open(datapath("wordsim353.tsv"), encoding="utf-8").read().splitlines()
    pairs = [line for line in lines if len(line.split("\t")) == 3 and " " not in line]
    ppath = tmp_path / "pairs.tsv"
    ppath.write_text("\n".join(pairs) + "\n", encoding="utf-8")
    words = sorted(
        {w.lower() for line in keep if not line.startswith(":") for w in line.split()}
        | {w.lower() for line in pairs for w in line.split("\t")[:2]}
    )
    rng = np.random.default_rng(5)
    base = {w: rng.standard_normal(16) for w in words}
    offset = rng.standard_normal(16) * 3
    for line in keep:  # plant some answers: b = a + offset for half of the first section's pairs
        if not line.startswith(":") and rng.random() < 0.5:
            a, b = line.lower().split()[:2]
            base[b] = base[a] + offset
    keys = list(base)
    table = np.stack([base[k] for k in keys]).astype(np.float32)
    vpath = tmp_path / "eval_vectors.txt"
    vpath.write_text(
        f"{len(keys)} 16\n"
        + "".join(
            f"{k} " + " ".join(f"{v:.6f}" for v in row) + "\n"
            for k, row in zip(keys, table, strict=True)
        )
    )
    return vpath, qpath, ppath


def test_evaluate_agrees_with_gensim(run, eval_files):
    from gensim.models import KeyedVectors

    vpath, qpath, ppath = eval_files
    result = run("evaluate", vpath, "--analogies", qpath, "--pairs", ppath, "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    kv = KeyedVectors.load_word2vec_format(str(vpath))
    score, sections = kv.evaluate_word_analogies(str(qpath))
    assert report["analogies"]["accuracy"] == pytest.approx(score)
    assert 0.05 < score < 0.95  # a mix of right and wrong answers
    for ours, theirs in zip(report["analogies"]["sections"], sections, strict=True):
        assert ours["section"] == theirs["section"]
        assert ours["correct"] == len(theirs["correct"])
        assert ours["total"] == len(theirs["correct"]) + len(theirs["incorrect"])
    pearson, spearman, oov = kv.evaluate_word_pairs(str(ppath))
    assert report["pairs"]["pearson"] == pytest.approx(pearson.statistic, abs=1e-6)
    assert report["pairs"]["spearman"] == pytest.approx(spearman.statistic, abs=1e-6)
    assert report["pairs"]["oov_percent"] == pytest.approx(oov)


def test_evaluate_table_and_errors(run, one_line_error, eval_files, tmp_path):
    vpath, qpath, _ = eval_files
    result = run("evaluate", vpath, "--analogies", qpath)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith(f"analogies ({qpath}): ")
    assert lines[1].split() == [
        "section",
        "correct",
        "answered",
        "skipped",
        "accuracy",
        "of",
        "all",
    ]
    assert lines[-1].startswith("Total accuracy")
    one_line_error(
        run("evaluate", vpath, "--pairs", tmp_path / "none.tsv"),
        "evaluate",
        "none.tsv",
        "does not exist",
    )
    empty = tmp_path / "empty.txt"
    empty.write_text(": nothing\n")
    one_line_error(run("evaluate", vpath, "--analogies", empty), "evaluate", "no analogy questions")


def test_evaluate_with_no_file_runs_the_shipped_questions_words(run, tmp_path):
    from gensim.models import KeyedVectors

    from rowbook import Vectors
    from rowbook.vectors.evaluate import QUESTIONS_WORDS

    words = ["Athens", "Greece", "Baghdad", "Iraq", "Bangkok", "Thailand", "Berlin", "Germany"]
    rows = np.random.default_rng(0).standard_normal((len(words), 5)).astype(np.float32)
    rows[1::2] = rows[::2] + 0.2  # each capital beside its country
    vpath = tmp_path / "v.txt"
    Vectors(words, rows).save_word2vec_format(vpath)
    result = run("evaluate", vpath, "--json")
    assert result.code == 0, result
    assert "running word2vec's questions-words.txt" in result.err and "--pairs FILE" in result.err
    report = json.loads(result.out)["analogies"]
    expected, _ = KeyedVectors.load_word2vec_format(str(vpath)).evaluate_word_analogies(
        str(QUESTIONS_WORDS)
    )
    assert report["file"] == str(QUESTIONS_WORDS) and report["accuracy"] == pytest.approx(expected)
    total = report["sections"][-1]
    assert total["correct"] + total["skipped"] + (total["total"] - total["correct"]) == 19544


def test_evaluate_counts_skipped_questions(run, vectors_txt, tmp_path):
    """Questions with an unknown word are counted as skipped, beside gensim's score over the
    answered ones; a section without questions prints no row, one with none answered shows -."""
    questions = [
        ": people",
        "man woman king queen",
        "man woman boy girl",
        "man woman dog cat",
        ": empty",
        ": unknown",
        "dog cat cow pig",
        ": places",
        "france paris italy rome",
        "italy rome france zurich",
    ]
    qpath = tmp_path / "q.txt"
    qpath.write_text("\n".join(questions) + "\n", encoding="utf-8")
    known = set(vectors_txt.read_text(encoding="utf-8").upper().split())
    lines = [q.upper().split() for q in questions if not q.startswith(":")]
    unknown = sum(not all(w in known for w in q) for q in lines)  # counted independently
    report = json.loads(run("evaluate", vectors_txt, "--analogies", qpath, "--json").out)
    analogies = report["analogies"]
    assert (analogies["skipped"], analogies["questions"]) == (unknown, len(lines)) == (3, 6)
    total = analogies["sections"][-1]
    assert analogies["accuracy_all"] == pytest.approx(total["correct"] / len(lines))
    assert analogies["accuracy"] == pytest.approx(total["correct"] / (len(lines) - unknown))
    out = run("evaluate", vectors_txt, "--analogies", qpath).out.splitlines()
    assert "3 of 6 questions skipped" in out[0] and "of all questions correct" in out[0]
    rows = {line.split()[0]: line.split()[1:] for line in out[2:]}
    assert "empty" not in rows
    assert rows["unknown"] == ["0", "0", "1", "-", "0.00%"]
    assert rows["people"][:3] == ["2", "2", "1"]  # both known questions answered right


def test_neighbors_from_an_index_built_on_first_use_then_loaded(run, vectors_txt, tmp_path):
    pytest.importorskip("faiss")
    index = tmp_path / "v.index"
    exact = json.loads(run("neighbors", vectors_txt, "king", "--topn", 3, "--json").out)
    first = run("neighbors", vectors_txt, "king", "--topn", 3, "--json", "--index", index)
    assert first.code == 0 and index.exists() and "built" in first.err
    second = run("neighbors", vectors_txt, "king", "--topn", 3, "--json", "--index", index)
    assert second.code == 0 and "built" not in second.err
    for result in (first, second):  # a tiny table: the index scans every cell
        assert [d["word"] for d in json.loads(result.out)["king"]] == [
            d["word"] for d in exact["king"]
        ]
