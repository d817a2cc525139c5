"""NPLM: perplexity reaches the known floor of a generated language, matches torch, samples it."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

import rowbook
from rowbook.models.base import NotFittedError
from rowbook.models.nplm import NPLM, context_windows
from rowbook.text import Normalizer

# A tiny language: "<cat|dog> <runs|sits>." with both choices uniform. With 3 characters
# of context every other character (and the end of the line) is determined, so the
# entropy of a line is 2 log 2 spread over its 10 predictions (9 characters + the end).
LINE = re.compile(r"(cat|dog) (runs|sits)\.")
FLOOR = 2 ** (2 / 10)


def grammar(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{rng.choice(['cat', 'dog'])} {rng.choice(['runs', 'sits'])}." for _ in range(n)]


@pytest.fixture(scope="module", params=[False, True], ids=["untied", "tied"])
def trained(request) -> NPLM:
    return NPLM(context=3, dim=8, hidden=32, tied=request.param, epochs=20, seed=0).fit(
        grammar(300, seed=0), val_texts=grammar(100, seed=1)
    )


def test_perplexity_falls_to_the_floor(trained):
    ppl = trained.perplexity(grammar(1000, seed=2))
    assert FLOOR * 0.98 < ppl < FLOOR * 1.02, (ppl, FLOOR)
    epochs = trained.history_.epochs
    assert epochs[0]["perplexity"] > 2 * FLOOR  # the first epoch starts from uniform guesses
    assert epochs[-1]["val_perplexity"] < epochs[0]["val_perplexity"]
    for e in epochs:
        assert e["perplexity"] == pytest.approx(math.exp(e["loss"]))
        assert e["val_perplexity"] == pytest.approx(math.exp(e["val_loss"]))


def test_samples_follow_the_grammar(trained):
    text = trained.sample(300, seed=0)
    lines = text.split("\n")[:-1]  # the last line may be cut short
    assert len(lines) >= 25
    assert all(LINE.fullmatch(line) for line in lines), lines
    assert {line.split()[0] for line in lines} == {"cat", "dog"}
    assert trained.sample(300, seed=0) == text
    greedy = trained.sample(9, prompt="dog s", temperature=0)
    assert greedy.startswith("dog sits.\n")


def _torch_logits(lm: NPLM, X: np.ndarray) -> torch.Tensor:
    """The same network written with torch modules and the rowbook weights."""
    net = lm.net_
    C = torch.nn.Embedding.from_pretrained(torch.tensor(net.C.weight.data))
    H = torch.nn.Linear(*net.H.weight.shape[::-1])
    H.load_state_dict(
        {"weight": torch.tensor(net.H.weight.data), "bias": torch.tensor(net.H.bias.data)}
    )
    a = torch.tanh(H(C(torch.tensor(X)).reshape(len(X), -1)))
    if not net.tied:
        return a @ torch.tensor(net.U.weight.data).T + torch.tensor(net.U.bias.data)
    h = a @ torch.tensor(net.P.weight.data).T + torch.tensor(net.P.bias.data)
    return h @ C.weight.T + torch.tensor(net.U.bias.data)


@pytest.mark.parametrize("tied", [False, True])
def test_perplexity_matches_torch_cross_entropy(tied):
    texts = grammar(40, seed=3)
    lm = NPLM(context=3, dim=6, hidden=10, tied=tied, epochs=1, seed=1).fit(texts)
    probe = ["cat sits.", "dog runs.", "cow?"]  # "w" and "?" are out of vocabulary
    X, y = lm.windows(probe)
    assert len(y) == sum(len(t) + 1 for t in probe)
    expected = math.exp(
        torch.nn.functional.cross_entropy(_torch_logits(lm, X), torch.tensor(y)).item()
    )
    assert lm.perplexity(probe) == pytest.approx(expected, rel=1e-5)
    assert y[-2] == lm.vocab_.unk_id and y[-1] == lm.vocab_.bos_id


def test_windows_frame_each_text_with_boundaries():
    lm = NPLM(context=2, epochs=0).fit(["ab", "b"])
    X, y = lm.windows(["ab", "b"])
    s, a, b = lm.vocab_.bos_id, lm.vocab_.token_to_id("a"), lm.vocab_.token_to_id("b")
    ref = [context_windows(np.array(ids), 2, s) for ids in ([a, b], [b])]
    np.testing.assert_array_equal(X, np.concatenate([r[0] for r in ref]))
    assert X.tolist() == [[s, s], [s, a], [a, b], [s, s], [s, b]]
    assert y.tolist() == [a, b, s, b, s]


@pytest.mark.parametrize("optimizer", ["sgd", "sparse_adam"])
def test_other_optimizers_learn(optimizer):
    lm = NPLM(context=3, dim=8, hidden=32, epochs=8, optimizer=optimizer, seed=0).fit(
        grammar(300, 0)
    )
    uniform = len(lm.vocab_)
    assert lm.perplexity(grammar(200, seed=4)) < min(1.4, uniform / 5)


def test_word_level_language_model():
    rng = np.random.default_rng(5)
    sentences = ["the cat sat on the mat", "a dog lay on a rug"]
    texts = [sentences[i] for i in rng.integers(0, 2, 200)]
    lm = NPLM(level="word", context=3, dim=8, hidden=32, epochs=15, seed=0, val_fraction=0.0).fit(
        texts
    )
    assert len(lm.vocab_) == 2 + 9  # <unk>, <s> and the nine words
    assert lm.perplexity(sentences) < 2 ** (1 / 7) * 1.03  # one coin flip per 7 predictions
    lines = lm.sample(40, seed=1).split("\n")[:-1]
    assert lines and all(line in sentences for line in lines)
    assert math.isfinite(lm.perplexity(["the zebra sat on the mat"]))  # zebra -> <unk>


def test_resume_from_checkpoint_equals_one_run(tmp_path):
    path = tmp_path / "lm.npz"
    texts = grammar(100, seed=6)
    settings = dict(context=2, dim=4, hidden=8, optimizer="sparse_adam", seed=3)
    full = NPLM(epochs=4, **settings).fit(texts)
    NPLM(epochs=2, **settings).fit(texts, checkpoint=path)
    assert rowbook.load(path).history_.epochs[-1]["epoch"] == 1  # the checkpoint is a saved model
    resumed = NPLM(epochs=4, **settings).fit(texts, checkpoint=path, resume=path)
    for (name, a), (_, b) in zip(
        full.net_.named_parameters(), resumed.net_.named_parameters(), strict=True
    ):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)
    assert resumed.history_.resumed_at == [2]
    assert resumed.history_.epochs == full.history_.epochs


@pytest.mark.parametrize("optimizer", ["adam", "sparse_adam"])
def test_save_load_same_predictions_and_next_step(tmp_path, optimizer):
    texts = grammar(60, seed=7)
    settings = dict(
        context=2, dim=4, hidden=8, optimizer=optimizer, seed=4, normalizer=Normalizer(case="lower")
    )
    lm = NPLM(epochs=2, **settings).fit(texts)
    lm.save(tmp_path / "lm.npz")
    loaded = NPLM.load(tmp_path / "lm.npz")
    assert loaded.get_params() == lm.get_params() and loaded.normalizer == Normalizer(case="lower")
    probe = ["CAT sits.", "dog runs."]
    assert loaded.perplexity(probe) == lm.perplexity(probe)
    assert loaded.sample(40, seed=2) == lm.sample(40, seed=2)
    np.testing.assert_array_equal(loaded.vectors.vectors, lm.vectors.vectors)
    assert loaded.vectors.index_to_key == tuple(lm.vocab_.itos)
    # the next training step: one more epoch from the saved file equals a 3-epoch run
    once = NPLM(epochs=3, **settings).fit(texts)
    more = NPLM(epochs=3, **settings).fit(texts, resume=tmp_path / "lm.npz")
    assert more.perplexity(probe) == once.perplexity(probe)


def test_held_out_split_reports_training_and_held_out_perplexity():
    texts = grammar(50, seed=8)
    lm = NPLM(context=2, dim=4, hidden=8, epochs=2, val_fraction=0.2).fit(texts)
    first = lm.history_.epochs[0]
    assert set(first) == {"epoch", "loss", "perplexity", "val_loss", "val_perplexity"}
    assert first["val_perplexity"] == pytest.approx(math.exp(first["val_loss"]))
    n_windows = sum(len(t) + 1 for t in texts)
    assert len(lm.windows(texts)[1]) == n_windows  # the split changes training, not the data
    no_split = NPLM(context=2, dim=4, hidden=8, epochs=1, val_fraction=0.0).fit(texts)
    assert "val_loss" not in no_split.history_.epochs[0]


def test_repr_shows_the_parameters_that_differ():
    assert repr(NPLM()) == "NPLM()"
    assert repr(NPLM(level="word", lr=0.05)) == "NPLM(level='word', lr=0.05)"


def test_errors_name_the_parameter():
    with pytest.raises(NotFittedError, match="not fitted"):
        NPLM().sample(3)
    with pytest.raises(ValueError, match=r"sparse_adam.*tied=True"):
        NPLM(tied=True, optimizer="sparse_adam").fit(["ab"])
    with pytest.raises(ValueError, match="level"):
        NPLM(level="byte").fit(["ab"])
    with pytest.raises(ValueError, match="context must be an integer >= 1"):
        NPLM(context=0).fit(["ab"])
    with pytest.raises(TypeError, match="list of texts"):
        NPLM().fit("abc")
    lm = NPLM(epochs=0).fit(["ab"])
    with pytest.raises(ValueError, match="temperature"):
        lm.sample(3, temperature=-1.0)


def test_min_count_that_keeps_no_token_is_refused():
    with pytest.raises(
        rowbook.checks.ParameterError,
        match="min_count must be at most the count of the most frequent token, got 50",
    ):
        NPLM(level="word", min_count=50, epochs=1).fit(["a b a", "b a"])


def test_words_used_in_the_same_slots_end_up_neighbours():
    """The geometry claim of Bengio et al.: days, months and countries, each filling the slots
    of its own templates, end up as neighbours of their own kind, where the untrained table
    mixes them (a kind is 7 to 12 of the 58 tokens)."""
    from rowbook.demo.texts import SLOT_WORDS, slot_sentences

    texts = slot_sentences(1500, seed=0)
    kind = {word: k for k, words in SLOT_WORDS.items() for word in words}

    def same_kind(lm: NPLM) -> int:  # of the 3 nearest rows of each slot word, those of its kind
        table = lm.vectors
        return sum(kind.get(n) == kind[w] for w in kind for n, _ in table.most_similar(w, topn=3))

    settings = {"level": "word", "context": 3, "dim": 16, "hidden": 32, "seed": 0}
    untrained, trained = (
        NPLM(**settings, epochs=0).fit(texts),
        NPLM(**settings, epochs=4).fit(texts),
    )
    assert same_kind(untrained) < 40 and same_kind(trained) >= 78  # of 81
    assert (
        trained.history_.epochs[-1]["val_perplexity"]
        < trained.history_.initial["val_perplexity"] / 10
    )
