"""Word2Vec: learning planted structure, determinism, checkpoints, errors."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from rowbook.checks import ParameterError
from rowbook.data.synthetic import CAPITALS, PEOPLE, planted_analogies, planted_corpus
from rowbook.models.base import NotFittedError
from rowbook.models.word_vectors.state import Progress
from rowbook.models.word_vectors.word2vec import Word2Vec

CORPUS = planted_corpus(3000, seed=0)
SMALL = dict(vector_size=24, window=5, min_count=5, sample=0.0, negative=5, workers=1, epochs=8)


def analogy_accuracy(keys, table) -> float:
    """3CosAdd over unit vectors, inputs excluded (the formula, in NumPy)."""
    index = {k: i for i, k in enumerate(keys)}
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    hits = 0
    questions = planted_analogies()
    for a, b, c, d in questions:
        scores = unit @ (unit[index[b]] - unit[index[a]] + unit[index[c]])
        scores[[index[a], index[b], index[c]]] = -np.inf
        hits += keys[int(np.argmax(scores))] == d
    return hits / len(questions)


@pytest.fixture(scope="module")
def skipgram():
    return Word2Vec(architecture="skipgram", **SMALL).fit(CORPUS)


@pytest.fixture(scope="module")
def cbow():
    return Word2Vec(architecture="cbow", **{**SMALL, "epochs": 20}).fit(CORPUS)


@pytest.fixture(scope="module")
def hierarchical():
    params = {**SMALL, "negative": 0, "hierarchical_softmax": True, "epochs": 15}
    return Word2Vec(architecture="skipgram", **params).fit(CORPUS)


@pytest.mark.parametrize("name", ["skipgram", "cbow", "hierarchical"])
def test_recovers_planted_analogies(name, request):
    model = request.getfixturevalue(name)
    assert analogy_accuracy(model.index_to_key_, model.W_in_) >= 0.9


def test_hierarchical_softmax_agrees_with_gensim(hierarchical):
    gensim = pytest.importorskip("gensim.models")
    g = gensim.Word2Vec(
        CORPUS,
        sg=1,
        hs=1,
        negative=0,
        vector_size=24,
        window=5,
        min_count=5,
        sample=0.0,
        workers=1,
        epochs=15,
        seed=1,
    )
    assert analogy_accuracy(g.wv.index_to_key, g.wv.vectors) >= 0.9
    assert hierarchical.W_nodes_.shape == (len(hierarchical.index_to_key_) - 1, 24)
    assert not hierarchical.W_out_.any()  # negative sampling was off
    overlaps = [
        len(
            {k for k, _ in hierarchical.vectors.most_similar(w, topn=5)}
            & {k for k, _ in g.wv.most_similar(w, topn=5)}
        )
        / 5
        for w in ["king", "woman", "paris", "germany", "school"]
    ]
    assert np.mean(overlaps) >= 0.5


def test_untrained_control_fails_the_analogy_check():
    """The check can fail: with a learning rate of ~0 the vectors stay random."""
    model = Word2Vec(**{**SMALL, "lr": 1e-7, "min_lr": 1e-8}).fit(CORPUS)
    assert analogy_accuracy(model.index_to_key_, model.W_in_) < 0.2


@pytest.mark.parametrize("name", ["skipgram", "cbow"])
def test_planted_neighbors(name, request):
    """A person's 3 nearest are the people one attribute away; a country's capital is near."""
    vectors = request.getfixturevalue(name).vectors
    for person, attributes in PEOPLE.items():
        one_away = {
            p
            for p, a in PEOPLE.items()
            if sum(x != y for x, y in zip(a, attributes, strict=True)) == 1
        }
        assert {k for k, _ in vectors.most_similar(person, topn=3)} == one_away
    for country, (capital, _) in CAPITALS.items():
        assert capital in [k for k, _ in vectors.most_similar(country, topn=5)]
    assert (
        vectors.most_similar(positive=["queen", "man"], negative=["king"], topn=1)[0][0] == "woman"
    )


def test_neighbors_overlap_with_gensim(skipgram):
    gensim = pytest.importorskip("gensim.models")
    g = gensim.Word2Vec(
        CORPUS,
        sg=1,
        hs=0,
        vector_size=24,
        window=5,
        min_count=5,
        sample=0.0,
        negative=5,
        workers=1,
        epochs=8,
        seed=1,
    )
    assert tuple(g.wv.index_to_key) == skipgram.index_to_key_
    assert analogy_accuracy(g.wv.index_to_key, g.wv.vectors) >= 0.9
    ours = skipgram.vectors
    overlaps = []
    for word in ["king", "woman", "paris", "germany", "school", "mayor"]:
        mine = {k for k, _ in ours.most_similar(word, topn=5)}
        theirs = {k for k, _ in g.wv.most_similar(word, topn=5)}
        overlaps.append(len(mine & theirs) / 5)
    assert np.mean(overlaps) >= 0.5


def test_one_worker_is_bit_identical_and_seeded():
    a = Word2Vec(**{**SMALL, "epochs": 2}).fit(CORPUS)
    b = Word2Vec(**{**SMALL, "epochs": 2}).fit(CORPUS)
    c = Word2Vec(**{**SMALL, "epochs": 2, "seed": 2}).fit(CORPUS)
    assert np.array_equal(a.W_in_, b.W_in_) and np.array_equal(a.W_out_, b.W_out_)
    assert not np.array_equal(a.W_in_, c.W_in_)


def test_two_workers_learn_too():
    model = Word2Vec(architecture="skipgram", **{**SMALL, "workers": 2, "batch_words": 500}).fit(
        CORPUS
    )
    assert analogy_accuracy(model.index_to_key_, model.W_in_) >= 0.9


def test_initial_tables_and_untouched_rows():
    """Single-word sentences give skip-gram no pairs: W_in keeps its init, W_out its zeros."""
    corpus = [["a"], ["b"], ["c"], ["b"]] * 3
    model = Word2Vec(vector_size=10, min_count=1, workers=1, seed=5).fit(corpus)
    gensim = pytest.importorskip("gensim.models")
    g = gensim.Word2Vec(corpus, vector_size=10, min_count=1, workers=1, seed=5, sg=1)
    assert model.index_to_key_ == tuple(g.wv.index_to_key) == ("b", "c", "a")
    np.testing.assert_array_equal(model.W_in_, g.wv.vectors)  # gensim 4's uniform(-1/d, 1/d)
    assert np.all(np.abs(model.W_in_) <= 0.1)
    assert not model.W_out_.any()


def test_file_corpus_equals_list_corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in CORPUS[:500]), encoding="utf-8")
    a = Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS[:500])
    b = Word2Vec(**{**SMALL, "epochs": 1}).fit(path)
    assert a.index_to_key_ == b.index_to_key_
    assert np.array_equal(a.W_in_, b.W_in_)


def test_progress_callback_and_loss():
    seen: list[Progress] = []
    model = Word2Vec(**{**SMALL, "epochs": 3, "compute_loss": True}).fit(
        CORPUS, callback=seen.append
    )
    assert [p.epoch for p in seen] == [1, 2, 3] and model.history_ == seen
    total = sum(map(len, CORPUS))
    assert all(p.words == p.total_words == total for p in seen)
    assert seen[-1].loss < seen[0].loss
    assert SMALL["epochs"] and seen[0].learning_rate > seen[-1].learning_rate >= 1e-4
    quiet = Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS[:100])
    assert np.isnan(quiet.history_[0].loss)


def test_progress_bar_runs(capsys):
    Word2Vec(**{**SMALL, "epochs": 1, "progress": True}).fit(CORPUS[:200])
    assert "word" in capsys.readouterr().err


class Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("architecture", "hs"), [("skipgram", False), ("cbow", False), ("cbow", True)]
)
def test_checkpoint_resume_equals_uninterrupted_run(tmp_path, architecture, hs):
    params = {
        **SMALL,
        "architecture": architecture,
        "epochs": 4,
        "sample": 1e-2,
        "hierarchical_softmax": hs,
    }
    full = Word2Vec(**params).fit(CORPUS)
    path = tmp_path / "w2v.npz"

    def stop_after_two(progress: Progress) -> None:
        if progress.epoch == 2:
            raise Stop

    interrupted = Word2Vec(**params)
    with pytest.raises(Stop):
        interrupted.fit(CORPUS, checkpoint=path, callback=stop_after_two)
    with pytest.raises(NotFittedError):
        interrupted.vectors  # noqa: B018 - learned state is only set by a completed fit
    resumed = Word2Vec(**params).fit(CORPUS, resume=path, checkpoint=path)
    assert np.array_equal(resumed.W_in_, full.W_in_) and np.array_equal(resumed.W_out_, full.W_out_)
    assert np.array_equal(resumed.W_nodes_, full.W_nodes_) and resumed.W_nodes_.any() == hs
    assert [p.epoch for p in resumed.history_] == [1, 2, 3, 4]


def test_resume_checks_settings_and_corpus(tmp_path):
    path = tmp_path / "w2v.npz"
    Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS, checkpoint=path)
    with pytest.raises(ValueError, match=r"other parameters.*window"):
        Word2Vec(**{**SMALL, "epochs": 1, "window": 3}).fit(CORPUS, resume=path)
    with pytest.raises(ValueError, match="different corpus"):
        Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS[:1000], resume=path)
    Word2Vec(**{**SMALL, "epochs": 1, "workers": 2}).fit(CORPUS, resume=path)  # workers may change


def test_not_fitted():
    model = Word2Vec()
    for name in ("vectors", "W_in_", "W_out_", "W_nodes_", "index_to_key_", "counts_", "history_"):
        with pytest.raises(NotFittedError, match=f"not fitted.*\\.{name}"):
            getattr(model, name)


def test_empty_corpus_and_high_min_count():
    with pytest.raises(ValueError, match="corpus is empty"):
        Word2Vec().fit([])
    with pytest.raises(ValueError, match="corpus is empty"):
        Word2Vec().fit([[], []])
    with pytest.raises(
        ValueError,
        match="min_count must be at most the count of the most frequent word, got 50; no word of the 20 tokens",
    ):
        Word2Vec(min_count=50).fit([["a", "b"]] * 10)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"architecture": "sg"}, "architecture must be one of 'skipgram', 'cbow', got 'sg'"),
        ({"vector_size": 0}, "vector_size must be an integer >= 1, got 0"),
        ({"window": 2.5}, "window must be an integer >= 1, got 2.5"),
        ({"negative": -1}, "negative must be an integer >= 0, got -1"),
        (
            {"negative": 0},
            "negative must be an integer >= 1 unless hierarchical softmax is on, got 0",
        ),
        ({"sample": -1.0}, r"sample must be a finite number in \[0.0, inf\), got -1.0"),
        ({"lr": 0.0}, r"lr must be a finite number in \(0.0, inf\) or None, got 0.0"),
        ({"min_lr": 0.5}, r"min_lr must be a finite number in \[0.0, 0.025\], got 0.5"),
        ({"min_lr": 0.04, "architecture": "cbow"}, None),
        (
            {"min_lr": 0.06, "architecture": "cbow"},
            r"min_lr must be a finite number in \[0.0, 0.05\]",
        ),
        ({"workers": 0}, "workers must be an integer >= 1 or None, got 0"),
        ({"epochs": True}, "epochs must be an integer >= 1, got True"),
    ],
)
def test_bad_parameters_name_value_and_range(params, message):
    if message is None:  # within range: CBOW's default lr is 0.05
        Word2Vec(**params)
        return
    with pytest.raises(ParameterError, match=message):
        Word2Vec(**params)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sg'"):
        Word2Vec(sg=1)


def test_parameters_are_attributes_and_in_repr():
    model = Word2Vec(architecture="cbow", window=3)
    assert model.window == 3 and model.get_params()["window"] == 3 and model.lr is None
    assert repr(model) == "Word2Vec(architecture='cbow', window=3)"


def test_default_lr_follows_the_architecture():
    """lr=None: 0.025 for skip-gram, 0.05 for CBOW; the first job trains at that rate."""
    for architecture, lr in (("skipgram", 0.025), ("cbow", 0.05)):
        model = Word2Vec(
            **{**SMALL, "architecture": architecture, "epochs": 1, "batch_words": 10**6}
        )
        assert model.fit(CORPUS[:200]).history_[0].learning_rate == lr
        explicit = Word2Vec(**{**SMALL, "architecture": architecture, "epochs": 1, "lr": lr})
        assert np.array_equal(explicit.fit(CORPUS[:200]).W_in_, model.W_in_)


# -- save, load, keep training ---------------------------------------------------------------

TABLES = ("W_in_", "W_out_", "W_nodes_")


def _same_tables(a: Word2Vec, b: Word2Vec) -> bool:
    return all(np.array_equal(getattr(a, t), getattr(b, t)) for t in TABLES)


@pytest.mark.parametrize("hs", [False, True])
def test_save_load_gives_the_same_model_and_next_training_step(tmp_path, hs):
    model = Word2Vec(**{**SMALL, "epochs": 2, "hierarchical_softmax": hs}).fit(CORPUS)
    path = tmp_path / "w2v.model.npz"
    model.save(path)
    loaded = Word2Vec.load(path)
    assert loaded.get_params() == model.get_params() and loaded.index_to_key_ == model.index_to_key_
    assert _same_tables(loaded, model) and np.array_equal(loaded.counts_, model.counts_)
    assert json.dumps([asdict(p) for p in loaded.history_]) == json.dumps(
        [asdict(p) for p in model.history_]
    )
    np.testing.assert_array_equal(loaded.vectors.vectors, model.vectors.vectors)
    model.train(CORPUS, epochs=1)
    loaded.train(CORPUS, epochs=1)
    assert _same_tables(loaded, model)


def test_train_more_runs_a_fresh_linear_schedule(tmp_path):
    """fit 2 + train 3 (gensim): the second call decays lr from lr to min_lr again, so it is
    not the 5-epoch fit; that one is a resume of the checkpoint after epoch 2."""
    params = {**SMALL, "epochs": 2, "batch_words": 2000}
    path = tmp_path / "two.model.npz"
    Word2Vec(**params).fit(CORPUS).save(path)
    more = Word2Vec.load(path).train(CORPUS, epochs=3)
    three = Word2Vec(**{**params, "epochs": 3}).fit(CORPUS)
    assert [p.learning_rate for p in more.history_[2:]] == [p.learning_rate for p in three.history_]
    five = Word2Vec(**{**params, "epochs": 5}).fit(CORPUS)
    assert five.history_[2].learning_rate < more.history_[2].learning_rate
    assert not np.array_equal(more.W_in_, five.W_in_)
    assert [p.epoch for p in more.history_] == [1, 2, 1, 2, 3] and len(more.history_) == 5

    def stop_after_two(progress: Progress) -> None:
        if progress.epoch == 2:
            raise Stop

    with pytest.raises(Stop):
        Word2Vec(**{**params, "epochs": 5}).fit(CORPUS, checkpoint=path, callback=stop_after_two)
    assert _same_tables(Word2Vec(**{**params, "epochs": 5}).fit(CORPUS, resume=path), five)
    assert _same_tables(Word2Vec(**{**params, "epochs": 5}).fit(CORPUS, resume=path), five)


def test_resume_from_a_finished_model_changes_nothing(tmp_path):
    path = tmp_path / "done.model.npz"
    model = Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS, checkpoint=path)
    assert _same_tables(Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS, resume=path), model)
    with pytest.raises(
        ValueError, match=r"saved by train\(epochs=1\), not by fit\(epochs=1\).*call train"
    ):
        loaded = Word2Vec.load(path).train(CORPUS, epochs=1, checkpoint=path)
        Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS, resume=path)
    assert len(loaded.history_) == 2


def test_build_vocab_update_adds_words_and_keeps_old_rows():
    old = Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS)
    before = {t: getattr(old, t).copy() for t in TABLES}
    keys, counts = old.index_to_key_, old.counts_.copy()
    new_text = [["zebra", "king", "okapi", "zebra"]] * 6 + [["rare", "king"]]
    old.build_vocab(new_text, update=True)
    V = len(keys)
    assert old.index_to_key_[:V] == keys and set(old.index_to_key_[V:]) == {"zebra", "okapi"}
    assert old.counts_[old.index_to_key_.index("king")] == counts[keys.index("king")] + 7
    assert old.counts_[old.index_to_key_.index("zebra")] == 12
    assert all(np.array_equal(getattr(old, t)[: len(before[t])], before[t]) for t in TABLES)
    fresh = Word2Vec(**{**SMALL, "epochs": 1}).build_vocab(
        CORPUS + new_text * 5
    )  # seeded fresh rows
    assert fresh.W_in_.shape[0] >= V + 2
    np.testing.assert_array_equal(old.W_in_[V:], fresh.W_in_[V : V + 2])
    assert not old.W_out_[V:].any()
    zebra = old.W_in_[old.index_to_key_.index("zebra")].copy()
    old.train(new_text, epochs=1)
    assert not np.array_equal(old.W_in_[old.index_to_key_.index("zebra")], zebra)
    assert "zebra" in old.vectors


def test_build_vocab_update_matches_gensim():
    """Same words added, in a table of the same rows, with the same counts as gensim's update."""
    gensim = pytest.importorskip("gensim.models")
    new_text = [["zebra", "king", "okapi", "zebra"]] * 6
    ours = Word2Vec(**{**SMALL, "epochs": 1}).build_vocab(CORPUS)
    ours.build_vocab(new_text, update=True)
    g = gensim.Word2Vec(
        vector_size=24, window=5, min_count=5, sample=0.0, negative=5, workers=1, seed=1
    )
    g.build_vocab(CORPUS)
    g.build_vocab(new_text, update=True)
    assert set(ours.index_to_key_) == set(g.wv.index_to_key)
    for word in ("zebra", "king", "okapi", "mayor"):
        assert ours.counts_[ours.index_to_key_.index(word)] == g.wv.get_vecattr(word, "count")
    np.testing.assert_array_equal(
        ours.W_in_, g.wv.vectors[[g.wv.key_to_index[k] for k in ours.index_to_key_]]
    )


def test_train_and_update_need_a_fitted_model():
    with pytest.raises(NotFittedError, match=r"before using train"):
        Word2Vec().train(CORPUS, epochs=1)
    with pytest.raises(NotFittedError, match=r"update=True"):
        Word2Vec().build_vocab(CORPUS, update=True)
    with pytest.raises(ParameterError, match="epochs must be an integer >= 1, got 0"):
        Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS[:200]).train(CORPUS, epochs=0)


def test_a_damaged_model_file_is_refused_before_training(tmp_path):
    from rowbook.io import load_state, save_state

    path = tmp_path / "w2v.model.npz"
    Word2Vec(**{**SMALL, "epochs": 1}).fit(CORPUS[:300]).save(path)
    document = load_state(path, kind="model")
    document["state"]["tables"]["W_out"] = document["state"]["tables"]["W_out"][:-1]
    save_state(path, document, kind="model")
    with pytest.raises(ValueError, match=r"saved tables must have the shapes .*W_out"):
        Word2Vec.load(path)


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_fit_is_build_vocab_then_train(architecture):
    params = {**SMALL, "architecture": architecture, "epochs": 2, "sample": 1e-2}
    fitted = Word2Vec(**params).fit(CORPUS)
    built = Word2Vec(**params).build_vocab(CORPUS)
    assert built.index_to_key_ == fitted.index_to_key_ and not built.history_
    assert _same_tables(built.train(CORPUS, epochs=2), fitted)


def test_total_words_sets_the_length_of_the_schedule():
    """gensim's total_words: an epoch's lr goes down as if it had that many words."""
    from rowbook.data.corpus import read_corpus
    from rowbook.models.word_vectors.word2vec_training import job_plan

    params = {**SMALL, "epochs": 1, "batch_words": 2000}
    n = sum(map(len, CORPUS))
    model = Word2Vec(**params).fit(CORPUS)
    same = Word2Vec(**params).fit(CORPUS).train(CORPUS, epochs=2, total_words=n)
    model.train(CORPUS, epochs=2)
    assert _same_tables(model, same)
    longer = Word2Vec(**params).fit(CORPUS).train(CORPUS, epochs=2, total_words=4 * n)
    _, words_before = job_plan(read_corpus(CORPUS, min_count=5)[1], 2000)
    last = words_before[-2]  # where the last job of an epoch starts; its lr ends the epoch's record
    lr, min_lr = 0.025, 1e-4
    for trained, total in ((model, n), (longer, 4 * n)):
        expected = [lr - (lr - min_lr) * (epoch + last / total) / 2 for epoch in (0, 1)]
        assert [p.learning_rate for p in trained.history_[1:]] == pytest.approx(expected, rel=1e-12)


def test_fit_with_given_counts_refuses_max_vocab_size():
    counts = {"a": 5, "b": 4}
    with pytest.raises(
        ParameterError, match="max_vocab_size must be None when fit is given vocab="
    ):
        Word2Vec(min_count=1, max_vocab_size=10).fit([["a", "b"]], vocab=counts)
