"""GloVe: the AdaGrad kernel against the equations, planted structure, determinism, errors."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.data.synthetic import planted_analogies, planted_corpus
from rowbook.models.base import NotFittedError
from rowbook.models.word_vectors.glove import GloVe
from rowbook.models.word_vectors.glove_kernels import (
    glove_records,
    glove_step_reference,
    glove_weight,
)
from rowbook.models.word_vectors.state import Progress

CORPUS = planted_corpus(3000, seed=0)
SMALL = dict(vector_size=24, window=15, min_count=5, epochs=50, workers=1)


def analogy_accuracy(keys, table) -> float:
    index = {k: i for i, k in enumerate(keys)}
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    questions = planted_analogies()
    hits = 0
    for a, b, c, d in questions:
        scores = unit @ (unit[index[b]] - unit[index[a]] + unit[index[c]])
        scores[[index[a], index[b], index[c]]] = -np.inf
        hits += keys[int(np.argmax(scores))] == d
    return hits / len(questions)


@pytest.fixture(scope="module")
def model():
    return GloVe(**SMALL).fit(CORPUS)


def test_weighting_function_formula():
    x = np.array([0.5, 1.0, 10.0, 99.9, 100.0, 100.1, 1e4])
    expected = [min(1.0, (v / 100.0) ** 0.75) for v in x]
    np.testing.assert_allclose(glove_weight(x), expected, rtol=1e-15)
    np.testing.assert_allclose(glove_weight(x, x_max=10.0, alpha=1.0), np.minimum(x / 10.0, 1.0))


def _state(V: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    params = (
        rng.standard_normal((V, d)) * 0.3,
        rng.standard_normal((V, d)) * 0.3,
        rng.standard_normal(V) * 0.1,
        rng.standard_normal(V) * 0.1,
    )
    grads = tuple(1.0 + rng.random(p.shape) for p in params)
    return params, grads


@pytest.mark.parametrize("x_max", [3.0, 100.0])
def test_kernel_matches_reference_record_by_record(x_max):
    V, d, n = 12, 7, 300
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, V, n).astype(np.int32), rng.integers(0, V, n).astype(np.int32)
    vals = rng.choice([0.25, 0.5, 1.0, 2.0, 7.5, 40.0], size=n)
    params, grads = _state(V, d, 1)
    ref_params, ref_grads = tuple(p.copy() for p in params), tuple(g.copy() for g in grads)
    cost = glove_records(params, grads, rows, cols, vals, 0, n, x_max, 0.75, 0.05)
    ref_cost = sum(
        glove_step_reference(ref_params, ref_grads, rows[r], cols[r], vals[r], x_max, 0.75, 0.05)
        for r in range(n)
    )
    assert cost == pytest.approx(ref_cost, rel=1e-12)
    for got, want in zip(params + grads, ref_params + ref_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_first_step_is_sgd_on_the_weighted_least_squares_gradient():
    """With accumulators at 1, one step moves by lr times the gradient of J = f/2 (w.w~ + b + b~ - log x)^2."""
    params, _ = _state(3, 4, 2)
    grads = tuple(np.ones_like(p) for p in params)
    W, Wt, b, bt = (p.copy() for p in params)
    x, lr = 5.0, 0.1
    f = (x / 100.0) ** 0.75
    diff = W[0] @ Wt[2] + b[0] + bt[2] - np.log(x)
    glove_records(
        params,
        grads,
        np.array([0], np.int32),
        np.array([2], np.int32),
        np.array([x]),
        0,
        1,
        100.0,
        0.75,
        lr,
    )
    np.testing.assert_allclose(params[0][0], W[0] - lr * f * diff * Wt[2], rtol=1e-12)
    np.testing.assert_allclose(params[1][2], Wt[2] - lr * f * diff * W[0], rtol=1e-12)
    assert params[2][0] == pytest.approx(b[0] - lr * f * diff)
    assert grads[2][0] == pytest.approx(1 + (lr * f * diff) ** 2)


def test_recovers_planted_analogies(model):
    assert analogy_accuracy(model.index_to_key_, model.vectors.vectors) >= 0.85
    np.testing.assert_allclose(model.vectors.vectors, model.W_ + model.W_tilde_, rtol=1e-6)


def test_untrained_control_fails():
    control = GloVe(**{**SMALL, "lr": 1e-9, "epochs": 1}).fit(CORPUS)
    assert analogy_accuracy(control.index_to_key_, control.vectors.vectors) < 0.2


def test_initial_values_follow_glove_c():
    """A vanishing learning rate leaves the start: uniform in [-0.5, 0.5) / (d + 1)."""
    m = GloVe(**{**SMALL, "lr": 1e-12, "epochs": 1, "vector_size": 9}).fit(CORPUS)
    for table in (m.W_, m.W_tilde_, *m.biases_):
        assert np.all(np.abs(table) <= 0.05 + 1e-9)
        assert np.abs(table).max() > 0.04


def test_loss_decreases_and_progress_reports_records(model):
    losses = [p.loss for p in model.history_]
    assert losses[-1] < losses[0] / 2
    assert all(p.words == p.total_words == model.n_records_ for p in model.history_)


def test_one_worker_is_bit_identical_and_resume_matches(tmp_path):
    params = {**SMALL, "epochs": 4}
    a, b = GloVe(**params).fit(CORPUS), GloVe(**params).fit(CORPUS)
    assert np.array_equal(a.W_, b.W_) and np.array_equal(a.biases_[1], b.biases_[1])
    path = tmp_path / "glove.npz"

    class Stop(Exception):
        pass

    def stop(progress: Progress) -> None:
        if progress.epoch == 2:
            raise Stop

    with pytest.raises(Stop):
        GloVe(**params).fit(CORPUS, checkpoint=path, callback=stop)
    resumed = GloVe(**params).fit(CORPUS, resume=path)
    assert np.array_equal(resumed.W_, a.W_) and np.array_equal(resumed.W_tilde_, a.W_tilde_)
    with pytest.raises(ValueError, match="other parameters"):
        GloVe(**{**params, "x_max": 10.0}).fit(CORPUS, resume=path)


def test_two_workers_learn_too():
    m = GloVe(**{**SMALL, "workers": 2}).fit(planted_corpus(6000, seed=3))
    assert analogy_accuracy(m.index_to_key_, m.vectors.vectors) >= 0.8


def test_vocabulary_ties_are_alphabetical_and_max_vocab():
    m = GloVe(vector_size=3, min_count=1, epochs=1, workers=1, max_vocab=2).fit(
        [["b", "c", "a", "c", "b"]]
    )
    assert m.index_to_key_ == ("b", "c")


def test_errors():
    with pytest.raises(NotFittedError, match=r"not fitted.*before using \.vectors"):
        GloVe().vectors  # noqa: B018
    with pytest.raises(ValueError, match="corpus is empty"):
        GloVe().fit([])
    with pytest.raises(
        ValueError, match="min_count must be at most the count of the most frequent word, got 5"
    ):
        GloVe().fit([["a", "b"]])
    with pytest.raises(ValueError, match=r"x_max must be a finite number in \(0.0, inf\), got -1"):
        GloVe(x_max=-1)
    with pytest.raises(ValueError, match="window must be an integer >= 1, got 0"):
        GloVe(window=0)
    with pytest.raises(ValueError, match=r"lr must be a finite number in \(0.0, inf\), got nan"):
        GloVe(lr=float("nan"))


def _same(a: GloVe, b: GloVe) -> bool:
    return all(
        np.array_equal(x, y)
        for x, y in zip((a.W_, a.W_tilde_, *a.biases_), (b.W_, b.W_tilde_, *b.biases_), strict=True)
    )


def test_save_load_and_train_more_equals_the_longer_fit(tmp_path):
    """AdaGrad has no schedule and the records are shuffled once: fit 2, save, load, train 3
    is the 5-epoch fit, bit for bit (the AdaGrad sums are saved too)."""
    params = {**SMALL, "epochs": 2}
    path = tmp_path / "glove.model.npz"
    GloVe(**params).fit(CORPUS).save(path)
    loaded = GloVe.load(path)
    assert loaded.get_params() == params | {
        k: v for k, v in loaded.get_params().items() if k not in params
    }
    more = loaded.train(CORPUS, epochs=3)
    five = GloVe(**{**params, "epochs": 5}).fit(CORPUS)
    assert _same(more, five)
    np.testing.assert_array_equal(more.vectors.vectors, five.vectors.vectors)
    assert [p.loss for p in more.history_] == [p.loss for p in five.history_]


def test_train_needs_a_fitted_model():
    with pytest.raises(NotFittedError, match="before using train"):
        GloVe().train(CORPUS, epochs=1)


def test_fit_is_build_vocab_then_train():
    params = {**SMALL, "epochs": 2}
    built = GloVe(**params).build_vocab(CORPUS)
    assert not built.history_
    assert _same(built.train(CORPUS, epochs=2), GloVe(**params).fit(CORPUS))


def test_build_vocab_update_adds_words_and_keeps_old_rows():
    model = GloVe(**{**SMALL, "epochs": 1}).fit(CORPUS)
    V, keys = len(model.index_to_key_), model.index_to_key_
    before = [t.copy() for t in (model.W_, model.W_tilde_, *model.biases_)]
    new_text = [["zebra", "king", "okapi", "zebra"]] * 6
    model.build_vocab(new_text, update=True)
    assert model.index_to_key_[:V] == keys and model.index_to_key_[V:] == ("zebra", "okapi")
    after = (model.W_, model.W_tilde_, *model.biases_)
    assert all(np.array_equal(a[:V], b) for a, b in zip(after, before, strict=True))
    fresh = GloVe(**{**SMALL, "epochs": 1}).build_vocab(CORPUS + new_text)  # the same V + 2 words
    assert len(fresh.index_to_key_) == V + 2
    for a, b in zip(after, (fresh.W_, fresh.W_tilde_, *fresh.biases_), strict=True):
        np.testing.assert_array_equal(a[V:], b[V:])
    zebra = model.W_[V].copy()
    model.train(new_text, epochs=1)
    assert not np.array_equal(model.W_[V], zebra) and "okapi" in model.vectors


def test_a_memory_budget_and_a_counted_matrix_give_the_same_vectors(monkeypatch, tmp_path):
    """Counts spilled, records sorted on disk in many runs and bands, trained from the file:
    the same vectors bit for bit as everything in RAM, and nothing left in ``spill_dir``."""
    from rowbook.data import cooccurrence_matrix, read_corpus, shuffle
    from rowbook.data.cooccurrence_runs import RunCounter

    rng = np.random.default_rng(3)
    corpus = [[f"w{i}" for i in rng.integers(0, 1000, 30)] for _ in range(3000)]
    settings = {"vector_size": 6, "min_count": 1, "epochs": 2, "workers": 1, "window": 8}
    in_ram = GloVe(**settings).fit(corpus)
    spills, runs = [], []
    spill, sorted_run = RunCounter._spill, shuffle._sorted_run
    monkeypatch.setattr(RunCounter, "_spill", lambda self: spills.append(1) or spill(self))
    monkeypatch.setattr(shuffle, "_sorted_run", lambda *a: runs.append(1) or sorted_run(*a))
    budget = GloVe(**settings, memory=0.001).fit(corpus, spill_dir=tmp_path)  # 1 MB
    assert len(spills) >= 2 and len(runs) >= 10  # ~11k records a run: many runs and bands
    assert not any(tmp_path.iterdir())
    np.testing.assert_array_equal(budget.vectors.vectors, in_ram.vectors.vectors)
    vocab, enc = read_corpus(corpus, min_count=1, ties="alphabetical")
    X = cooccurrence_matrix(enc, len(vocab), 8)
    counted = GloVe(**settings).fit_cooccurrence(X.tocsc(), vocab.keys, counts=vocab.counts)
    assert counted.vectors.index_to_key == in_ram.vectors.index_to_key
    np.testing.assert_array_equal(counted.vectors.vectors, in_ram.vectors.vectors)
    counted_on_disk = GloVe(**settings, memory=0.001).fit_cooccurrence(
        X.tocoo(), vocab.keys, spill_dir=tmp_path
    )
    np.testing.assert_array_equal(counted_on_disk.vectors.vectors, in_ram.vectors.vectors)
    more = budget.train(corpus, epochs=1, spill_dir=tmp_path)  # 3 epochs in all, as below
    three = GloVe(**{**settings, "epochs": 3}).fit(corpus)
    assert _same(more, three) and not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match="but there are 2 keys"):
        GloVe(**settings).fit_cooccurrence(X, ["a", "b"])


def test_budgeted_training_with_threads_and_an_interrupted_fit_clean_up(tmp_path):
    class Stop(Exception):
        pass

    def stop(progress: Progress) -> None:
        raise Stop

    params = {**SMALL, "epochs": 2, "memory": 0.002}
    with pytest.raises(Stop):
        GloVe(**params).fit(CORPUS, spill_dir=tmp_path, callback=stop)
    assert not any(tmp_path.iterdir())
    threads = GloVe(**{**params, "workers": 2}).fit(CORPUS, spill_dir=tmp_path)
    assert np.isfinite(threads.W_).all() and threads.history_[-1].loss < threads.history_[0].loss
    assert not any(tmp_path.iterdir())


def test_a_budgeted_fit_keeps_the_records_out_of_memory(tmp_path):
    """In a child process: 1M tokens give 8.4M records (128 MB as arrays, ~390 MB at the
    peak of the old in-RAM shuffle); under a 16 MB budget the fit grows the process by
    counting's and the shuffle's peak (27 MB measured), the ids and the tables, not by the
    records (measured: 37 MB in all)."""
    import subprocess
    import sys

    script = f"""
import resource, numpy as np
from rowbook.models.word_vectors.glove import GloVe
rng = np.random.default_rng(0)
V, N = 20_000, 1_000_000
p = 1 / np.arange(1, V + 1); p /= p.sum()
words = np.array([f"w{{i}}" for i in range(V)])
with open({str(tmp_path / "corpus.txt")!r}, "w") as f:
    for ids in rng.choice(V, N, p=p).reshape(-1, 1000):
        f.write(" ".join(words[ids]) + "\\n")
settings = dict(min_count=1, epochs=1, workers=1, memory=1 / 64)
GloVe(vector_size=4, **settings).fit([["a", "b"]] * 3)  # compile and import first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
m = GloVe(vector_size=8, **settings).fit({str(tmp_path / "corpus.txt")!r}, spill_dir={str(tmp_path)!r})
print(m.n_records_, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    n_records, grown_mb = out.stdout.split()
    assert int(n_records) * 16 / 2**20 > 120  # the records alone would pass the bound twice
    assert float(grown_mb) < 16 * 3, f"a 16 MB budget grew the process by {grown_mb} MB"
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.txt"]
