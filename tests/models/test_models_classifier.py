"""Text classifiers on generated labelled data, and their networks against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence

import rowbook
from rowbook.autograd import RowSparse
from rowbook.models.base import NotFittedError
from rowbook.models.classifier import (
    BagOfEmbeddingsNet,
    LSTMClassifier,
    LSTMNet,
    TextClassifier,
    _loss,
)

FILLER = "the a of and to in was with on at for by film plot story actor scene".split()


def presence_data(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Filler words plus one cue word; the label (40% positive) is the cue's polarity."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        words = list(rng.choice(FILLER, rng.integers(4, 10)))
        label = "pos" if rng.random() < 0.4 else "neg"
        cue = rng.choice(
            ["great", "superb", "wonderful"] if label == "pos" else ["dull", "awful", "boring"]
        )
        words.insert(rng.integers(0, len(words) + 1), cue)
        texts.append(" ".join(words))
        labels.append(label)
    return texts, np.array(labels)


def order_data(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Every text holds both "not" and "good"; the label is 1 when "not" comes first.

    Each class has the same bag of words, so only the order tells them apart.
    """
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        words = list(rng.choice(FILLER, rng.integers(3, 8)))
        i, j = sorted(rng.choice(len(words) + 1, 2, replace=False))
        label = int(rng.random() < 0.5)
        first, second = ("not", "good") if label else ("good", "not")
        words.insert(i, first)
        words.insert(j + 1, second)
        texts.append(" ".join(words))
        labels.append(label)
    return texts, np.array(labels)


def majority(labels: np.ndarray) -> float:
    return max(np.mean(labels == c) for c in np.unique(labels))


@pytest.mark.parametrize(
    "model, optimizer",
    [(TextClassifier, "sparse_adam"), (TextClassifier, "adam"), (LSTMClassifier, "sparse_adam")],
)
def test_word_presence_is_learned(model, optimizer):
    texts, labels = presence_data(1000, seed=0)
    test_texts, test_labels = presence_data(300, seed=1)
    clf = model(dim=16, hidden=16, epochs=3, optimizer=optimizer).fit(
        texts, labels, val=(test_texts, test_labels)
    )
    assert majority(test_labels) < 0.65
    assert clf.score(test_texts, test_labels) > 0.95
    assert clf.history_.epochs[-1]["val_accuracy"] == pytest.approx(
        clf.score(test_texts, test_labels)
    )
    assert clf.classes_.tolist() == ["neg", "pos"]
    proba = clf.predict_proba(test_texts[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert set(clf.predict(test_texts[:20])) <= {"neg", "pos"}


def test_word_order_needs_the_lstm():
    texts, labels = order_data(1000, seed=2)
    test_texts, test_labels = order_data(300, seed=3)
    lstm = LSTMClassifier(dim=16, hidden=16, epochs=4, optimizer="adam").fit(texts, labels)
    bag = TextClassifier(dim=16, hidden=16, epochs=4).fit(texts, labels)
    baseline = majority(test_labels)
    assert lstm.score(test_texts, test_labels) > max(0.9, baseline + 0.3)
    assert bag.score(test_texts, test_labels) < baseline + 0.12  # a bag of words cannot see order


def _batch(texts, clf):
    ids, lengths = clf._encode(texts)
    return ids, lengths


def test_networks_match_torch_on_a_padded_batch():
    texts = ["the film was great", "awful", "a plot with a great scene and a dull actor"]
    bag = TextClassifier(dim=5, hidden=7, epochs=0).fit(texts, [1, 0, 0])
    ids, lengths = _batch(texts, bag)
    net = bag.net_
    assert (ids == 0).any()  # the batch really is padded
    tbag = torch.nn.EmbeddingBag.from_pretrained(
        torch.tensor(net.embedding.weight.data), mode="mean", padding_idx=0
    )
    hidden = torch.relu(
        tbag(torch.tensor(ids)) @ torch.tensor(net.hidden.weight.data).T
        + torch.tensor(net.hidden.bias.data)
    )
    expected = hidden @ torch.tensor(net.output.weight.data).T + torch.tensor(net.output.bias.data)
    np.testing.assert_allclose(net(ids, lengths).data, expected.numpy(), rtol=1e-5, atol=1e-6)

    rnn = LSTMClassifier(dim=5, hidden=7, epochs=0).fit(texts, [1, 0, 0])
    net = rnn.net_
    emb = torch.nn.Embedding.from_pretrained(torch.tensor(net.embedding.weight.data))
    lstm = torch.nn.LSTM(5, 7, batch_first=True)
    lstm.load_state_dict({n: torch.tensor(p.data) for n, p in net.lstm.named_parameters()})
    packed = pack_padded_sequence(
        emb(torch.tensor(ids)), torch.tensor(lengths), batch_first=True, enforce_sorted=False
    )
    _, (h, _) = lstm(packed)
    expected = h[0] @ torch.tensor(net.output.weight.data).T + torch.tensor(net.output.bias.data)
    np.testing.assert_allclose(
        net(ids, lengths).data, expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("net_class", [BagOfEmbeddingsNet, LSTMNet])
def test_sparse_table_gradient_names_only_the_batch_rows(net_class):
    net = net_class(20, 4, 6, 2, pad=0, sparse=True, rng=0)
    ids = np.array([[3, 5, 3, 0], [7, 0, 0, 0]])
    _loss(net, (ids, np.array([3, 1]), np.array([0, 1]))).backward()
    grad = net.embedding.weight.grad
    assert isinstance(grad, RowSparse)
    assert grad.indices.tolist() == [3, 5, 7]  # the padding row 0 gets nothing


def test_max_length_and_unknown_words():
    texts, labels = presence_data(50, seed=4)
    clf = TextClassifier(dim=4, hidden=4, epochs=1, max_length=3, min_count=2).fit(texts, labels)
    ids, lengths = clf._encode(["the film was a plot with great actors"])
    assert ids.shape == (1, 3) and lengths.tolist() == [3]
    assert clf.pipeline_.encode("zebra").tolist() == [clf.pipeline_.vocab.unk_id]


def test_errors_name_the_problem():
    texts, labels = presence_data(20, seed=5)
    with pytest.raises(NotFittedError, match="not fitted"):
        TextClassifier().predict(["x"])
    with pytest.raises(ValueError, match="at least 2 classes"):
        TextClassifier(epochs=1).fit(texts, ["pos"] * 20)
    with pytest.raises(ValueError, match="one label per text"):
        TextClassifier(epochs=1).fit(texts, labels[:-1])
    with pytest.raises(ValueError, match="not seen in fit"):
        TextClassifier(epochs=1).fit(texts, labels, val=(texts[:2], ["pos", "maybe"]))
    with pytest.raises(ValueError, match="optimizer must be one of"):
        LSTMClassifier(optimizer="rmsprop").fit(texts, labels)
    with pytest.raises(TypeError, match="list of texts"):
        LSTMClassifier().fit("one text", labels)


@pytest.mark.parametrize("model", [TextClassifier, LSTMClassifier])
@pytest.mark.parametrize("optimizer", ["sparse_adam", "adam"])
def test_save_load_same_predictions_and_next_step(tmp_path, model, optimizer):
    texts, labels = presence_data(40, seed=6)
    settings = dict(dim=4, hidden=4, batch_size=8, optimizer=optimizer, min_count=2, seed=1)
    clf = model(epochs=2, **settings).fit(texts, labels)
    clf.save(tmp_path / "clf.npz")
    loaded = rowbook.load(tmp_path / "clf.npz")
    assert type(loaded) is model and loaded.get_params() == clf.get_params()
    np.testing.assert_array_equal(loaded.predict_proba(texts), clf.predict_proba(texts))
    assert loaded.classes_.tolist() == ["neg", "pos"]
    np.testing.assert_array_equal(loaded.vectors.vectors, clf.vectors.vectors)
    assert loaded.vectors.index_to_key == tuple(clf.pipeline_.vocab_.itos)
    once = model(epochs=3, **settings).fit(texts, labels)
    more = model(epochs=3, **settings).fit(texts, labels, resume=tmp_path / "clf.npz")
    np.testing.assert_array_equal(more.predict_proba(texts), once.predict_proba(texts))
    assert more.history_.resumed_at == [2] and more.history_.epochs == once.history_.epochs


def test_a_custom_pipeline_round_trips_through_the_file(tmp_path):
    from rowbook.text import ByteLevelBPE, Normalizer, TextPipeline

    texts, labels = presence_data(40, seed=7)
    bpe = ByteLevelBPE().fit(texts, vocab_size=300, special_tokens=["<pad>"])
    pipeline = TextPipeline(Normalizer(case="lower"), bpe)
    clf = TextClassifier(dim=4, hidden=4, epochs=1, pipeline=pipeline).fit(texts, labels)
    clf.save(tmp_path / "bpe.npz")
    loaded = TextClassifier.load(tmp_path / "bpe.npz")
    probe = ["A GREAT film", "so dull"]
    np.testing.assert_array_equal(loaded.predict_proba(probe), clf.predict_proba(probe))
    assert loaded.pipeline.normalizer == Normalizer(case="lower")
    assert len(loaded.vectors) == len(bpe)


def test_min_count_that_keeps_no_word_is_refused():
    from rowbook.models.classifier import TextClassifier

    with pytest.raises(
        rowbook.checks.ParameterError,
        match="min_count must be at most the count of the most frequent token, got 9",
    ):
        TextClassifier(epochs=1, min_count=9).fit(["good film", "bad film"], ["pos", "neg"])
