"""NGramLM against its oracles: nltk.lm (add-k, unsmoothed), lmplz's own output and a
plain-Python Kneser-Ney (modified Kneser-Ney), KenLM's query code (ARPA files)."""

from __future__ import annotations

import gzip
import math
from collections import Counter

import numpy as np
import pytest
from nltk.lm import MLE, Laplace, Lidstone
from nltk.lm.preprocessing import padded_everygram_pipeline

import rowbook
from rowbook.checks import ParameterError
from rowbook.models import NGramLM, NotFittedError
from rowbook.models.ngram.arpa import ArpaError
from rowbook.models.ngram.kneser_ney import DiscountError

WORDS = [f"w{i}" for i in range(800)]


def zipf_sentences(count: int, seed: int, words: list[str] = WORDS) -> list[list[str]]:
    """Sentences of 1-11 words drawn from a Zipf law over ``words``."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, len(words) + 1)
    p /= p.sum()
    return [list(rng.choice(words, size=rng.integers(1, 12), p=p)) for _ in range(count)]


def predictions(sentence: list[str], n: int) -> list[tuple[str, tuple[str, ...]]]:
    """``(word, context)`` of every prediction of a sentence, nltk's padding on the left."""
    padded = ["<s>"] * (n - 1) + sentence + ["</s>"]
    return [(padded[i], tuple(padded[i - n + 1 : i])) for i in range(n - 1, len(padded))]


def from_last_bos(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """``tokens`` from their last ``<s>`` on: nothing stands before the start of a sentence."""
    return (
        tokens[max(i for i, t in enumerate(tokens) if t == "<s>") :] if "<s>" in tokens else tokens
    )


# -- add-k and unsmoothed: nltk.lm ---------------------------------------------------------


@pytest.fixture(scope="module")
def corpus() -> tuple[list[list[str]], list[list[str]]]:
    train = zipf_sentences(300, seed=0, words=WORDS[:60])
    held = [*zipf_sentences(40, seed=1, words=WORDS[:60]), ["w1", "unseen", "w2"]]
    return train, held


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize(
    ("smoothing", "k", "oracle"),
    [
        ("add_k", 1.0, lambda n: Laplace(n)),
        ("add_k", 0.1, lambda n: Lidstone(0.1, n)),
        ("none", 1.0, lambda n: MLE(n)),
    ],
)
def test_probabilities_and_perplexity_equal_nltk(corpus, n, smoothing, k, oracle):
    train, held = corpus
    ours = NGramLM(n=n, smoothing=smoothing, k=k).fit([" ".join(s) for s in train])
    theirs = oracle(n)
    theirs.fit(*padded_everygram_pipeline(n, train))
    assert len(ours.vocab_) == len(theirs.vocab)  # words, <unk>, <s>, </s>
    logs = []
    for sentence in held:
        for word, context in predictions(sentence, n):
            expected = theirs.score(word, context)
            got = ours.logprob(word, context)
            logs.append(got)
            if expected == 0:
                assert got == -math.inf, (word, context)
            else:
                assert got == pytest.approx(math.log(expected), rel=1e-12, abs=1e-12)
    expected_ppl = math.exp(-np.mean(logs)) if np.isfinite(logs).all() else math.inf
    assert ours.perplexity([" ".join(s) for s in held]) == pytest.approx(expected_ppl, rel=1e-12)
    seen = [" ".join(s) for s in held[:-1]]
    ngrams = [(*c, w) for s in held[:-1] for w, c in predictions(s, n)]
    if smoothing == "add_k":  # nltk's own perplexity: 2 ** cross-entropy in bits
        assert ours.perplexity(seen) == pytest.approx(theirs.perplexity(ngrams), rel=1e-9)


def test_tokens_and_strings_count_the_same(corpus):
    train, _ = corpus
    a = NGramLM(smoothing="add_k").fit(train)
    b = NGramLM(smoothing="add_k").fit([" ".join(s) for s in train])
    assert a.vocab_.itos == b.vocab_.itos
    for x, y in zip(a.tables_.counts, b.tables_.counts, strict=True):
        np.testing.assert_array_equal(x, y)


# -- modified Kneser-Ney: by hand, and lmplz's output -------------------------------------

#: ``lmplz --discount_fallback -o 3`` on the two-line corpus "a a b a" / "b a a b"
#: (KenLM's test data, lm/common/test_data/toy0.arpa): log10 p of every entry.
LMPLZ_TOY = {
    ("<unk>",): -0.90309,
    ("<s>",): 0.0,
    ("a",): -0.46943438,
    ("</s>",): -0.5720968,
    ("b",): -0.5720968,
    ("<s>", "a"): -0.37712017,
    ("a", "a"): -0.37712017,
    ("b", "a"): -0.2984526,
    ("a", "</s>"): -0.58682007,
    ("b", "</s>"): -0.5220179,
    ("<s>", "b"): -0.41574955,
    ("a", "b"): -0.58682007,
    ("<s>", "a", "a"): -0.14885087,
    ("b", "a", "a"): -0.33741078,
    ("<s>", "b", "a"): -0.124077894,
    ("a", "b", "a"): -0.2997394,
    ("b", "a", "</s>"): -0.42082912,
    ("a", "b", "</s>"): -0.397617,
    ("a", "a", "b"): -0.20102891,
}


def test_kneser_ney_of_the_two_line_corpus_by_hand_and_as_lmplz_builds_it():
    """The counts and discounts written out, for "a a b a" / "b a a b", n = 3.

    Trigrams (their counts are kept): <s> a a 1, a a b 2, a b a 1, b a </s> 1, <s> b a 1,
    b a a 1, a b </s> 1: n1 = 6, n2 = 1, n3 = 0, so the closed form fails and the fallback
    D = (0.5, 1, 1.5) is used (as at every order here). Bigrams: <s> a 1 and <s> b 1 keep
    their counts; the others count their left extensions: a a 2 (<s>, b), b a 2 (a, <s>),
    a b 1, a </s> 1, b </s> 1. Unigrams: a 3 (<s>, a, b), b 2, </s> 2, <s> 0, <unk> 0.
    """
    lm = NGramLM(n=3, discount_fallback=(0.5, 1.0, 1.5)).fit(["a a b a", "b a a b"])
    np.testing.assert_array_equal(lm.discounts_, [[0, 0.5, 1, 1.5]] * 3)
    # unigrams: total 7; gamma = (D3 + D2 + D2) / 7 = 0.5, spread over 4 words (<s> aside)
    p_a = (3 - 1.5) / 7 + 0.5 / 4
    p_b = (2 - 1.0) / 7 + 0.5 / 4
    assert lm.logprob("a") == pytest.approx(math.log(p_a))
    assert lm.logprob("</s>") == pytest.approx(math.log(p_b))
    assert lm.logprob("<unk>") == pytest.approx(math.log(0.5 / 4))
    # context "a": a a 2, a b 1, a </s> 1; total 4, gamma = (D2 + 2 D1) / 4 = 0.5
    p_aa = (2 - 1.0) / 4 + 0.5 * p_a
    p_ab = (1 - 0.5) / 4 + 0.5 * p_b
    assert lm.logprob("a", ["a"]) == pytest.approx(math.log(p_aa))
    # context "a a": only a a b (2); total 2, gamma = D2 / 2 = 0.5
    p_aab = (2 - 1.0) / 2 + 0.5 * p_ab
    assert lm.logprob("b", ["a", "a"]) == pytest.approx(math.log(p_aab))
    # unseen: "b b" backs off from context "a b" (gamma (D1 + D1) / 2 = 0.5) to "b" (0.5)
    assert lm.logprob("b", ["a", "b"]) == pytest.approx(math.log(0.5 * 0.5 * p_b))
    for gram, log10 in LMPLZ_TOY.items():
        got = lm.logprob(gram[-1], gram[:-1]) / math.log(10)
        assert got == pytest.approx(log10, abs=2e-7), gram  # lmplz prints float32


def reference_kneser_ney(sentences: list[list[str]], n: int):
    """Interpolated modified Kneser-Ney from Chen & Goodman in plain Python (dicts)."""
    grams: Counter[tuple[str, ...]] = Counter()
    for s in sentences:
        tokens = ["<s>", *s, "</s>"]
        for k in range(1, n + 1):
            grams.update(tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1))
    left = Counter(g[1:] for g in grams if len(g) > 1)
    a = {g: c if len(g) == n or g[0] == "<s>" else left[g] for g, c in grams.items()}
    a[("<s>",)], a[("<unk>",)] = 0, 0
    D = {}
    for k in range(1, n + 1):
        c = Counter(v for g, v in a.items() if len(g) == k)
        Y = c[1] / (c[1] + 2 * c[2])
        D[k] = [0.0] + [j - (j + 1) * Y * c[j + 1] / c[j] for j in (1, 2, 3)]
    total, cut = Counter(), Counter()
    for g, v in a.items():
        total[g[:-1]] += v
        cut[g[:-1]] += D[len(g)][min(v, 3)]
    V = len([g for g in a if len(g) == 1])

    def p(word: str, context: tuple[str, ...]) -> float:
        if word == "<s>" and not context:
            return 1.0
        v = a.get((*context, word), 0)
        u = (v - D[len(context) + 1][min(v, 3)]) / total[context] if total[context] else 0.0
        gamma = cut[context] / total[context] if total[context] else 1.0
        lower = 1 / (V - 1) if not context else p(word, context[1:])
        return u + gamma * lower

    return p, D


def test_kneser_ney_equals_a_plain_python_kneser_ney():
    train = zipf_sentences(2000, seed=0)
    held = zipf_sentences(100, seed=1, words=[*WORDS[:300], "never-seen"])
    lm = NGramLM(n=3).fit(train)
    p, D = reference_kneser_ney(train, 3)
    np.testing.assert_allclose(lm.discounts_, [D[1], D[2], D[3]], rtol=1e-12)
    assert lm.discounts_[:, 1:].min() > 0  # estimated, not the fallback
    for sentence in held:
        for word, context in predictions(sentence, 3):
            context = from_last_bos(context)
            word = word if word in lm.vocab_ else "<unk>"
            assert lm.logprob(word, context) == pytest.approx(math.log(p(word, context)), rel=1e-9)


def test_kneser_ney_probabilities_sum_to_one():
    lm = NGramLM(n=3).fit(zipf_sentences(2000, seed=0))
    eos = lm.vocab_.eos_id
    for context in ([lm.vocab_.bos_id], [3, 4], [eos - 1, 7], [5]):
        p = lm.next_distribution(context)
        p[lm.vocab_.bos_id] = 0
        assert p.sum() == pytest.approx(1.0, rel=1e-9)


def test_discounts_that_cannot_be_estimated_name_the_fallback():
    with pytest.raises(DiscountError, match="discount_fallback"):
        NGramLM(n=3).fit(["a a b a", "b a a b"])
    fixed = NGramLM(n=2, discounts=(0.5, 1.0, 1.5)).fit(["a a b a", "b a a b"])
    np.testing.assert_array_equal(fixed.discounts_, [[0, 0.5, 1, 1.5]] * 2)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n": 0}, "n must be an integer >= 1"),
        ({"smoothing": "witten_bell"}, "smoothing must be one of"),
        ({"k": 0.0}, "k must be a finite number in"),
        ({"discounts": (0.5, 1.0)}, "discounts must be a"),
        ({"discounts": (0.5, 2.5, 1.0)}, "0 <= D_j <= j"),
        ({"discount_fallback": [[0.5, 1, 1.5]] * 3}, "discount_fallback must be a"),
        ({"level": "bpe"}, "level must be one of"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ParameterError, match=match):
        NGramLM(**params)


# -- ARPA files ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kneser_ney() -> NGramLM:
    return NGramLM(n=3).fit([" ".join(s) for s in zipf_sentences(2000, seed=0)])


def test_arpa_round_trip_gives_the_same_probabilities(kneser_ney, tmp_path):
    held = [" ".join(s) for s in zipf_sentences(200, seed=2, words=[*WORDS[:100], "zzz"])]
    kneser_ney.save_arpa(tmp_path / "lm.arpa")
    back = NGramLM.from_arpa(tmp_path / "lm.arpa")
    assert back.vocab_.itos == kneser_ney.vocab_.itos
    W = kneser_ney.windows(held)
    np.testing.assert_array_equal(back._log10(W), kneser_ney._log10(W))
    assert back.perplexity(held) == kneser_ney.perplexity(held)
    with open(tmp_path / "lm.arpa", "rb") as f, gzip.open(tmp_path / "lm.arpa.gz", "wb") as g:
        g.write(f.read())
    assert NGramLM.from_arpa(tmp_path / "lm.arpa.gz").perplexity(held) == back.perplexity(held)


def test_arpa_scores_equal_kenlm_query(kneser_ney, tmp_path):
    """KenLM's own query code reads our file and scores sentences as the model does."""
    kenlm = pytest.importorskip("kenlm")
    kneser_ney.save_arpa(tmp_path / "lm.arpa")
    reader = kenlm.Model(str(tmp_path / "lm.arpa"))
    for words in zipf_sentences(100, seed=3, words=[*WORDS[:200], "unknown"]):
        text = " ".join(words)
        assert kneser_ney.score(text) == pytest.approx(reader.score(text), abs=1e-4)  # float32


def test_an_lmplz_arpa_file_reads(tmp_path):
    lines = ["# Input file: toy0", "\\data\\", "ngram 1=5", "ngram 2=7", "ngram 3=7", ""]
    for k in (1, 2, 3):
        lines.append(f"\\{k}-grams:")
        lines += [f"{p}\t{' '.join(g)}" for g, p in LMPLZ_TOY.items() if len(g) == k]
        lines.append("")
    (tmp_path / "toy.arpa").write_text("\n".join([*lines, "\\end\\", ""]))
    lm = NGramLM.from_arpa(tmp_path / "toy.arpa")  # no backoffs: all 0 here
    assert lm.tables_.n == 3 and lm.logprob("a", ["b", "a"]) / math.log(10) == pytest.approx(
        -0.33741078
    )
    assert lm.logprob("b", ["b"]) / math.log(10) == pytest.approx(-0.5720968)


GOOD = "\\data\\\nngram 1=4\nngram 2=2\n\n\\1-grams:\n-1\t<unk>\t0\n0\t<s>\t-0.3\n-0.5\t</s>\n-0.4\ta\t-0.2\n\n\\2-grams:\n-0.1\t<s> a\n-0.2\ta </s>\n\n\\end\\\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (GOOD[:-20], "ends inside the 2-grams section"),
        (GOOD.replace("ngram 2=2", "ngram 2=3"), "line 15: the 2-grams section has 2 entries"),
        (GOOD.replace("ngram 2=2", "ngram 2=99999999999"), "more than a file of"),
        (GOOD.replace("\\data\\", "data"), "no \\\\data\\\\ line"),
        (GOOD.replace("-0.1\t<s> a", "x\t<s> a"), "line 12: not a number"),
        (GOOD.replace("-0.1\t<s> a", "0.5\t<s> a"), "line 12: log10 probabilities must be"),
        (GOOD.replace("-0.1\t<s> a", "-0.1\t<s> b"), "line 12: the word 'b' has no unigram"),
        (GOOD.replace("-0.2\ta </s>", "-0.1\t<s> a"), "line 13: this 2-gram is listed twice"),
        (GOOD.replace("-0.1\t<s> a\n", "-0.1\t<s> a\t-0.1\t7\n"), "line 12: a 2-gram entry"),
        (GOOD.replace("\\end\\", "\\3-grams:"), "expected '\\\\end\\\\'"),
        (GOOD.replace("<s>", "<S>"), "no unigram entry for <s>"),
    ],
)
def test_hostile_arpa_files_are_refused_with_their_line(tmp_path, text, match):
    (tmp_path / "bad.arpa").write_text(text)
    with pytest.raises(ArpaError, match=match):
        NGramLM.from_arpa(tmp_path / "bad.arpa")


def test_a_file_without_unk_gives_it_kenlms_minus_100(tmp_path):
    (tmp_path / "closed.arpa").write_text(
        GOOD.replace("ngram 1=4", "ngram 1=3").replace("-1\t<unk>\t0\n", "")
    )
    lm = NGramLM.from_arpa(tmp_path / "closed.arpa")
    assert lm.vocab_.itos[:3] == ["<unk>", "<s>", "</s>"]
    assert lm.logprob("zebra", ["a"]) / math.log(10) == pytest.approx(
        -100.0 - 0.2
    )  # b(a) + p(<unk>)
    assert lm.logprob("a", ["<s>"]) / math.log(10) == pytest.approx(-0.1)


def test_a_missing_context_is_refused(tmp_path):
    text = GOOD.replace("ngram 2=2", "ngram 2=2\nngram 3=1").replace(
        "\\end\\", "\\3-grams:\n-0.1\ta a </s>\n\n\\end\\"
    )
    (tmp_path / "bad.arpa").write_text(text)
    with pytest.raises(ArpaError, match="'a a </s>' has no 2-gram entry"):
        NGramLM.from_arpa(tmp_path / "bad.arpa")


def test_arpa_needs_a_backoff_model(tmp_path):
    lm = NGramLM(n=2, smoothing="add_k").fit(["a b", "b a"])
    with pytest.raises(ValueError, match="fit with smoothing='kneser_ney'"):
        lm.save_arpa(tmp_path / "x.arpa")
    char = NGramLM(n=2, level="char", discount_fallback=(0.5, 1, 1.5)).fit(["a b", "b a"])
    with pytest.raises(ValueError, match="white space"):
        char.save_arpa(tmp_path / "x.arpa")
    assert not (tmp_path / "x.arpa").exists()


# -- the contract: save, load, generate ------------------------------------------------------


@pytest.mark.parametrize("smoothing", ["kneser_ney", "add_k", "none"])
def test_save_load_round_trip(tmp_path, smoothing, corpus):
    train, held = corpus
    lm = NGramLM(n=3, smoothing=smoothing, k=0.5, discount_fallback=(0.5, 1, 1.5)).fit(train)
    lm.save(tmp_path / "lm.npz")
    loaded = rowbook.load(tmp_path / "lm.npz")
    assert loaded.get_params() == lm.get_params()
    W = lm.windows(held)
    np.testing.assert_array_equal(loaded._log10(W), lm._log10(W))
    assert loaded.generate(30, seed=1) == lm.generate(30, seed=1)


def test_a_damaged_saved_state_is_refused(tmp_path, corpus):
    from rowbook.io import load_state, save_state

    NGramLM(smoothing="add_k").fit(corpus[0]).save(tmp_path / "lm.npz")
    document = load_state(tmp_path / "lm.npz", kind="model")
    document["state"]["keys"][1] = document["state"]["keys"][1][::-1].copy()
    save_state(tmp_path / "bad.npz", document, kind="model")
    with pytest.raises(ValueError, match=r"state.keys\[1\]' must be sorted"):
        NGramLM.load(tmp_path / "bad.npz")


def test_generation_follows_the_counts():
    lm = NGramLM(n=3, smoothing="none").fit(["the cat sat on the mat"] * 3)
    assert lm.generate(14, seed=0) == "the cat sat on the mat\nthe cat sat on the mat\n"
    assert lm.generate(3, seed=5, context="on the") == "on the mat\nthe"


def test_not_fitted_and_bad_texts():
    with pytest.raises(NotFittedError):
        NGramLM().perplexity(["a"])
    with pytest.raises(TypeError, match="wrap it"):
        NGramLM().fit("one text")
    with pytest.raises(TypeError, match="all be str"):
        NGramLM().fit(["a b", ["a", "b"]])


# -- the experiment beside the NPLM ------------------------------------------------------------


def test_unseen_share_counts_what_training_never_had():
    from rowbook.models.ngram.experiment import unseen_share

    train = zipf_sentences(300, seed=0, words=WORDS[:50])
    held = zipf_sentences(50, seed=1, words=WORDS[:60])  # some words never seen: <unk>
    lm = NGramLM(n=3, smoothing="add_k").fit(train)
    seen = set()
    for s in train:
        tokens = ["<s>", *s, "</s>"]
        seen |= {tuple(tokens[i : i + k]) for k in (1, 2, 3) for i in range(len(tokens) - k + 1)}
    grams, contexts = [], []
    for s in held:
        for word, context in predictions(s, 3):
            known = [w if w in lm.vocab_ else "<unk>" for w in (*context, word)]
            gram = from_last_bos(tuple(known))
            grams.append(gram not in seen)
            contexts.append(gram[:-1] not in seen)
    assert 0 < np.mean(grams) < 1 and 0 < np.mean(contexts) < 1
    assert unseen_share(lm, held) == (
        pytest.approx(np.mean(grams)),
        pytest.approx(np.mean(contexts)),
    )
