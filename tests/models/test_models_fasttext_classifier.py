"""FastTextClassifier held to the fasttext package: its files both ways, its hashing, its figures.

The oracle models are trained here by ``fasttext.train_supervised`` on small labelled text
made by the tests (no download). They train with 10 threads and a dimension that is a
multiple of 10: fastText's ``DenseMatrix::uniform`` fills a tenth of the input table per
thread and leaves the rest as it finds it, which for a small table is whatever memory held.
"""

from __future__ import annotations

import gzip
import logging
import random

import numpy as np
import pytest

import rowbook
from rowbook.checks import ParameterError
from rowbook.data.labelled import read_labelled
from rowbook.data.labelled_ids import LineEncoder, encode_line_reference
from rowbook.models import FastTextClassifier
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES, train_job
from rowbook.models.fasttext_classifier.reference import update_reference
from rowbook.text.char_ngrams import fasttext_hashes

fasttext = pytest.importorskip("fasttext")

CUES = {
    "animal": ["cat", "dog", "straße"],
    "vehicle": ["car", "bus", "tram"],
    "weather": ["sun", "ω"],
}
NOISE = ["the", "a", "naïve", "日本", "of", "and"]


def _lines(n: int, seed: int, *, labels: bool = True) -> list[str]:
    """Lines whose label is told by one of its words (and noise words), unicode included."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.choice(["animal", "vehicle", "weather"])
        words = [rng.choice(NOISE) for _ in range(rng.randint(2, 7))] + [rng.choice(CUES[label])]
        rng.shuffle(words)
        extra = [f"__label__{rng.choice(['animal', 'vehicle'])}"] if rng.random() < 0.1 else []
        out.append(" ".join(([f"__label__{label}", *extra] if labels else []) + words))
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labelled")
    train, test = folder / "train.txt", folder / "test.txt"
    train.write_text("\n".join(_lines(600, 0)) + "\n", encoding="utf-8")
    test.write_text("\n".join(_lines(150, 1)) + "\n", encoding="utf-8")
    return train, test


def _oracle(path, **kwargs):
    options = dict(thread=10, verbose=0, dim=20, epoch=3, seed=0) | kwargs
    return fasttext.train_supervised(str(path), **options)


def _texts(path) -> list[str]:
    """The test file's lines without their labels, plus words fastText never saw."""
    lines = path.read_text(encoding="utf-8").splitlines()
    texts = [" ".join(t for t in line.split() if not t.startswith("__label__")) for line in lines]
    return [*texts, "unseen wörds only", "", "cat cat cat 日本語 straßen"]


def _same_predictions(ours, theirs, texts, k, threshold=0.0):
    labels, probs = ours.predict(texts, k=k, threshold=threshold)
    for text, got, p in zip(texts, labels, probs, strict=True):
        want, q = theirs.predict(text, k=k, threshold=threshold)
        assert list(got) == list(want), text
        np.testing.assert_allclose(p, q, atol=1e-5, rtol=0)


# -- word n-grams and char n-grams hashed as fastText hashes them -----------------------------


@pytest.mark.parametrize("ngrams", [(2, 0, 0), (3, 0, 0), (2, 2, 4)])
def test_sentence_vectors_equal_fasttexts_so_every_row_is_hashed_the_same(data, tmp_path, ngrams):
    """The mean row of a line is fastText's exactly: the same words, char n-grams and word
    bigrams / trigrams (unicode words, unseen words) land in the same buckets."""
    word_ngrams, minn, maxn = ngrams
    theirs = _oracle(data[0], wordNgrams=word_ngrams, minn=minn, maxn=maxn, bucket=3000)
    theirs.save_model(str(tmp_path / "m.bin"))
    ours = FastTextClassifier.load_fasttext(tmp_path / "m.bin")
    for text in _texts(data[1])[:80] + _texts(data[1])[-3:]:
        np.testing.assert_array_equal(
            ours.get_sentence_vector(text), theirs.get_sentence_vector(text)
        )
    # a word's vector: the mean of its row and its char n-grams' rows, seen or unseen
    for word in ["cat", "straße", "naïve", "</s>", "unseenwörd", "日本語"]:
        np.testing.assert_allclose(
            ours.get_word_vector(word), theirs.get_word_vector(word), atol=1e-6, rtol=0
        )
    for word in theirs.words[:20]:
        np.testing.assert_allclose(ours.vectors[word], theirs.get_word_vector(word), atol=1e-6)


def test_the_compiled_encoder_is_the_token_by_token_reference():
    lines = read_labelled([*_lines(200, 3), "", "__label__nothing", "x y z"])
    encoder = LineEncoder(
        ["cat", "dog", "</s>", "ω"], ["__label__animal"], word_ngrams=3, minn=1, maxn=3, bucket=97
    )
    encoded = encoder.encode(lines)
    for line in range(len(lines)):
        tokens = [lines.keys[i] for i in lines.ids[lines.starts[line] : lines.starts[line + 1]]]
        rows, labels = encode_line_reference(encoder, tokens)
        assert encoded.inputs(line).tolist() == rows
        assert encoded.labels(line).tolist() == labels


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"word_ngrams": 3, "bucket": 97},
        {"word_ngrams": 2, "minn": 1, "maxn": 3, "bucket": 97},
        {"minn": 2, "maxn": 3, "bucket": 5, "prune": np.array([2, -1, 0, -1, 1], np.int32)},
    ],
)
def test_reading_straight_into_the_dictionary_encodes_what_the_interned_reading_does(options):
    """Prediction's reading (tokens looked up in the model's compiled dictionary, only the
    unknown ones interned) gives the rows and labels of reading every token first."""
    texts = [*_lines(200, 3), "", "__label__nothing x", "  日本 </s>\tω ω", "é" * 40, "a\u00a0b"]
    words, labels = ["cat", "dog", "</s>", "ω", "日本"], ["__label__animal", "__label__weather"]
    want = LineEncoder(words, labels, **options).encode(read_labelled(texts))
    got = LineEncoder(words, labels, **options).encode_batches([texts[:50], [], texts[50:]])
    for name in ("input_starts", "input_ids", "label_starts", "label_ids", "tokens"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)


def test_the_confusion_table_counts_fasttexts_predictions(data, tmp_path):
    """``confusion``: gold label against fastText's best label, counted by scikit-learn."""
    metrics = pytest.importorskip("sklearn.metrics")
    theirs = _oracle(data[0], epoch=1, lr=0.05)  # weak enough to make mistakes
    theirs.save_model(str(tmp_path / "m.bin"))
    ours = FastTextClassifier.load_fasttext(tmp_path / "m.bin")
    single = [line for line in _lines(300, 7) if line.count("__label__") == 1]
    gold = [line.split(" ", 1)[0] for line in single]
    texts = [line.split(" ", 1)[1] for line in single]
    predicted = [theirs.predict(text)[0][0] for text in texts]
    table = ours.confusion(texts, [g.removeprefix("__label__") for g in gold])
    assert table.labels == ours.labels_
    want = metrics.confusion_matrix(gold, predicted, labels=list(ours.labels_))
    np.testing.assert_array_equal(table.counts, want)
    assert 0 < np.trace(want) < len(single)  # right and wrong predictions both counted
    assert str(table).splitlines()[0] == "rows: gold label, columns: predicted"


# -- supervised .bin both ways ---------------------------------------------------------------


@pytest.mark.parametrize("loss", ["softmax", "ns", "hs", "ova"])
def test_a_fasttext_bin_predicts_the_same_labels_and_probabilities(data, tmp_path, loss):
    theirs = _oracle(data[0], loss=loss, wordNgrams=2, bucket=2000)
    theirs.save_model(str(tmp_path / "m.bin"))
    ours = FastTextClassifier.load_fasttext(tmp_path / "m.bin")
    texts = _texts(data[1])
    _same_predictions(ours, theirs, texts, k=2)
    _same_predictions(ours, theirs, texts, k=-1, threshold=0.2)
    assert ours.test(data[1], k=2) == theirs.test(str(data[1]), k=2)
    got, want = ours.test_label(data[1]), theirs.test_label(str(data[1]))
    assert got.keys() == want.keys()
    for label in got:
        np.testing.assert_allclose(list(got[label].values()), list(want[label].values()))
    ours.save_fasttext(tmp_path / "again.bin")  # what we write is byte for byte what it wrote
    assert (tmp_path / "again.bin").read_bytes() == (tmp_path / "m.bin").read_bytes()


@pytest.mark.parametrize("loss", ["softmax", "ova"])
def test_a_bin_written_here_predicts_the_same_in_fasttext(data, tmp_path, loss):
    ours = FastTextClassifier(
        vector_size=12, epochs=10, loss=loss, word_ngrams=2, bucket=5000, minn=2, maxn=3, workers=1
    ).fit(data[0])
    ours.save_fasttext(tmp_path / "ours.bin")
    theirs = fasttext.load_model(str(tmp_path / "ours.bin"))
    _same_predictions(ours, theirs, _texts(data[1]), k=3)
    assert ours.test(data[1]) == theirs.test(str(data[1]))
    assert ours.test(data[1]).precision > 0.8  # chance: 1/3


# -- training ------------------------------------------------------------------------------


def test_word_bigrams_learn_a_label_only_a_bigram_carries(tmp_path):
    """Each word is as frequent under both labels; only the order of a pair tells them apart
    ("a b" is one label, "b a" the other): word n-grams of 2 learn it, single words cannot."""
    rng = random.Random(0)
    lines = []
    for _ in range(800):
        x, y = rng.sample(["red", "blue", "green", "gold"], 2)
        label = "up" if x < y else "down"
        lines.append(f"__label__{label} {x} {y}")
    path = tmp_path / "order.txt"
    path.write_text("\n".join(lines) + "\n")

    def precision(word_ngrams: int) -> float:
        model = FastTextClassifier(
            vector_size=10, epochs=30, lr=0.5, word_ngrams=word_ngrams, bucket=10_000, workers=1
        )
        return model.fit(path).test(path).precision

    assert precision(2) > 0.99
    assert precision(1) < 0.75


def test_ova_predicts_label_sets_above_a_threshold(tmp_path):
    rng = random.Random(0)
    topics = {"sport": ["goal", "match", "team"], "money": ["bank", "price", "tax"]}
    lines, want = [], []
    for _ in range(600):
        chosen = [t for t in topics if rng.random() < 0.5] or ["sport"]
        words = [rng.choice(topics[t]) for t in chosen for _ in range(2)] + ["the", "a"]
        rng.shuffle(words)
        lines.append(" ".join(words))
        want.append(chosen)
    model = FastTextClassifier(vector_size=10, epochs=20, loss="ova", workers=1)
    model.fit(lines, want)
    labels, _probs = model.predict(lines[:100], k=-1, threshold=0.5)
    for got, expected in zip(labels, want[:100], strict=True):
        assert sorted(got) == sorted(f"__label__{t}" for t in expected)


@pytest.mark.parametrize("loss", ["softmax", "ns", "hs", "ova"])
def test_the_kernel_takes_the_reference_step(loss):
    rng = np.random.default_rng(0)
    W_in = rng.uniform(-0.5, 0.5, (12, 6)).astype(np.float32)
    W_out = rng.uniform(-0.5, 0.5, (4, 6)).astype(np.float32)
    inputs, labels, counts = [3, 7, 3, 11], [2, 0], np.array([9, 5, 3, 2])
    ref_in, ref_out = W_in.copy(), W_out.copy()
    want = update_reference(
        ref_in, ref_out, inputs, labels, loss=loss, lr=0.3, seed=77, label_counts=counts
    )
    from rowbook.data.sampling import negative_guide, negative_table

    table = negative_table(counts, 0.5)
    from rowbook.data.huffman import fasttext_tree

    lines = (
        np.array([0, 4]),
        np.array(inputs, np.int32),
        np.array([0, 2]),
        np.array(labels, np.int32),
        np.array([6]),
    )
    got = train_job(
        W_in,
        W_out,
        lines,
        0,
        1,
        LOSS_CODES[loss],
        (table, negative_guide(table), 5),
        fasttext_tree(counts)[2:],
        (0.3, 0.0, 0.0),
        77,
    )
    np.testing.assert_allclose(W_in, ref_in, atol=1e-6)
    np.testing.assert_allclose(W_out, ref_out, atol=1e-6)
    assert got == pytest.approx(want, rel=1e-5)


def _job(loss, seed, n_lines=40, d=6, n_labels=5):
    """A job's worth of random lines (1-4 input rows, 1-2 labels) and tables for train_job."""
    from rowbook.data.huffman import fasttext_tree
    from rowbook.data.sampling import negative_guide, negative_table

    rng = np.random.default_rng(seed)
    sizes, n_lab = rng.integers(1, 5, n_lines), rng.integers(1, 3, n_lines)
    lines = (
        np.concatenate([[0], np.cumsum(sizes)]),
        rng.integers(0, 30, sizes.sum()).astype(np.int32),
        np.concatenate([[0], np.cumsum(n_lab)]),
        rng.integers(0, n_labels, n_lab.sum()).astype(np.int32),
        sizes + n_lab + 1,
    )
    counts = np.arange(n_labels, 0, -1) * 3
    table = negative_table(counts, 0.5)
    tables = (
        rng.uniform(-0.5, 0.5, (30, d)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (n_labels, d)).astype(np.float32),
    )
    rest = (LOSS_CODES[loss], (table, negative_guide(table), 3), fasttext_tree(counts)[2:])
    return tables, lines, rest


@pytest.mark.parametrize("loss", ["softmax", "ova"])
def test_a_thread_on_its_own_output_rows_trains_what_it_trains_on_the_shared_ones(loss):
    """Several workers on a softmax step their own copies of W_out and merge them every few
    lines; alone, a thread that does so ends with the tables of training on W_out itself,
    bit for bit (a merge with nothing else changed takes the copy as it is)."""
    (W_in, W_out), lines, rest = _job(loss, 1)
    shared_in, shared_out = W_in.copy(), W_out.copy()
    want = train_job(shared_in, shared_out, lines, 3, 37, *rest, (0.2, 1e-4, 0.0), 5)
    own = (np.empty_like(W_out), np.empty_like(W_out), 4)  # merged every 4 lines
    got = train_job(W_in, W_out, lines, 3, 37, *rest, (0.2, 1e-4, 0.0), 5, own)
    np.testing.assert_array_equal(W_in, shared_in)
    np.testing.assert_array_equal(W_out, shared_out)
    np.testing.assert_array_equal(own[0], W_out)  # the copy is the merged rows
    assert got == want


def test_a_merge_adds_a_threads_change_to_the_others():
    from rowbook.models.fasttext_classifier.kernels import merge_rows

    rng = np.random.default_rng(0)
    start = rng.normal(size=(5, 3)).astype(np.float32)  # what this thread copied
    mine = start + rng.normal(size=(5, 3)).astype(np.float32)  # its steps since
    others = np.where(rng.random((5, 3)) < 0.5, rng.normal(size=(5, 3)), 0).astype(np.float32)
    shared = start + others  # the other threads' merges since, on half the elements
    both = start + others + (mine - start)  # every change, to rounding
    exact = np.where(others == 0, mine, shared + (mine - start))
    merge_rows(shared, mine, start, 3)
    np.testing.assert_allclose(shared, both, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(shared, exact)  # an element only this thread changed: mine
    np.testing.assert_array_equal(mine, shared)
    np.testing.assert_array_equal(start, shared)


@pytest.mark.parametrize("d", [7, 20])
def test_the_first_rows_drawn_on_threads_are_the_serial_draw(d):
    """Each thread draws its share from the generator advanced to where the share starts in
    the one stream: whatever the workers, the rows of one ``default_rng(seed)`` call."""
    from rowbook.models.fasttext_classifier.training import initial_input_rows

    n_words, n_buckets, seed = 300, 40_000, 11
    used_ids = np.random.default_rng(0).integers(0, n_words + n_buckets, 30_000)
    rows = np.union1d(np.arange(n_words), used_ids)
    serial = np.random.default_rng(seed).random((len(rows), d), dtype=np.float32)
    serial = (serial * np.float32(2) - np.float32(1)) / np.float32(d)
    for workers in (1, 2, 3):
        W = initial_input_rows(n_words, n_buckets, d, used_ids, seed, workers=workers)
        np.testing.assert_array_equal(W[rows], serial)
        assert not np.delete(W, rows, axis=0).any()


def test_one_worker_and_a_seed_train_the_same_model_and_workers_the_same_accuracy(data):
    def fit(workers):  # 10 epochs: trained to the ceiling, so two workers' races cannot
        # move the 150 test lines' precision by chance (at 3 epochs they moved it by 0.06)
        return FastTextClassifier(vector_size=10, epochs=10, workers=workers, batch_words=500).fit(
            data[0]
        )

    a, b = fit(1), fit(1)
    np.testing.assert_array_equal(a.W_in_, b.W_in_)
    np.testing.assert_array_equal(a.W_out_, b.W_out_)
    assert abs(fit(2).test(data[1]).precision - a.test(data[1]).precision) < 0.05


def test_a_resumed_fit_ends_where_the_uninterrupted_one_does(data, tmp_path):
    def model():
        return FastTextClassifier(vector_size=10, epochs=3, workers=1, batch_words=500)

    whole = model().fit(data[0])
    path = tmp_path / "ckpt.npz"

    def stop(progress):
        if progress.epoch == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model().fit(data[0], checkpoint=path, callback=stop)
    resumed = model().fit(data[0], checkpoint=path, resume=path)
    np.testing.assert_array_equal(resumed.W_in_, whole.W_in_)


def test_pretrained_rows_start_the_words_they_have(data, tmp_path, caplog):
    rng = np.random.default_rng(0)
    given = rowbook.Vectors(["cat", "bus", "absent"], rng.normal(size=(3, 10)).astype(np.float32))
    path = tmp_path / "pre.vec"
    given.save_word2vec_format(path)
    given.save(tmp_path / "pre.npz")
    n_words = len(read_labelled(data[0]).keys) - 3  # every key but the 3 labels (</s> is a word)
    for source in (given, path, tmp_path / "pre.npz"):
        with caplog.at_level(logging.INFO, logger="rowbook"):
            caplog.clear()
            fitted = FastTextClassifier(
                vector_size=10, epochs=1, lr=1e-7, workers=1, pretrained_vectors=source
            ).fit(data[0])
        for word in ("cat", "bus"):
            np.testing.assert_allclose(fitted.vectors[word], given[word], atol=1e-4)
        assert f"2 of the {n_words:,} words found; {n_words - 2:,} start at random" in caplog.text
    with pytest.raises(ParameterError, match="vector_size"):
        FastTextClassifier(vector_size=8, pretrained_vectors=given).fit(data[0])


def test_compressed_files_folders_and_several_files_train_the_same_model(data, tmp_path):
    """A gzip file, a folder and a list of files are read as the plain file's lines."""
    lines = data[0].read_bytes().splitlines(keepends=True)
    (tmp_path / "train.txt.gz").write_bytes(gzip.compress(b"".join(lines)))
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a.txt").write_bytes(b"".join(lines[:250]))
    (tmp_path / "parts" / "b.txt").write_bytes(b"".join(lines[250:]))
    parts = sorted((tmp_path / "parts").iterdir())

    def fit(source):
        return FastTextClassifier(
            vector_size=8, epochs=2, word_ngrams=2, bucket=500, workers=1
        ).fit(source)

    plain = fit(data[0])
    for source in (tmp_path / "train.txt.gz", tmp_path / "parts", parts):
        other = fit(source)
        assert other.labels_ == plain.labels_
        np.testing.assert_array_equal(other.W_in_, plain.W_in_)
        np.testing.assert_array_equal(other.W_out_, plain.W_out_)


# -- errors ------------------------------------------------------------------------------


def test_bad_training_data_is_refused_naming_the_fix(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("__label__a cat dog\njust words here\n")
    with pytest.raises(ValueError, match=r"line 2 .* has words but no label"):
        FastTextClassifier().fit(path)
    path.write_text("cat dog\nmore words\n")
    with pytest.raises(ParameterError, match="label_prefix"):
        FastTextClassifier().fit(path)
    path.write_text("")
    with pytest.raises(ValueError, match="empty"):
        FastTextClassifier().fit(path)
    model = FastTextClassifier(vector_size=4, epochs=1, workers=1).fit(["a b"], ["x"])
    with pytest.raises(ParameterError, match="k must be"):
        model.predict("a", k=0)
    assert not hasattr(model, "build_vocab")  # its words and labels are fixed by fit


# -- quantised .ftz both ways --------------------------------------------------------------


@pytest.mark.parametrize(
    "options", [{}, {"qnorm": True}, {"cutoff": 600, "qnorm": True}, {"cutoff": 500}]
)
def test_a_fasttext_ftz_predicts_the_same_labels_and_probabilities(data, tmp_path, options):
    theirs = _oracle(data[0], wordNgrams=2, bucket=2000)
    theirs.quantize(thread=10, **options)
    theirs.save_model(str(tmp_path / "m.ftz"))
    ours = FastTextClassifier.load_fasttext(tmp_path / "m.ftz")
    assert ours.is_quantized
    _same_predictions(ours, theirs, _texts(data[1]), k=2)
    assert ours.test(data[1]) == theirs.test(str(data[1]))


@pytest.mark.parametrize("options", [{}, {"qnorm": False}, {"cutoff": 400, "retrain": True}])
def test_quantize_writes_an_ftz_fasttext_opens_and_predicts_the_same(data, tmp_path, options):
    ours = FastTextClassifier(vector_size=10, epochs=5, word_ngrams=2, bucket=2000, workers=1).fit(
        data[0]
    )
    dense = ours.test(data[1]).precision
    if options.get("retrain"):
        options = options | {"data": data[0]}
    ours.quantize(**options)
    ours.save_fasttext(tmp_path / "ours.ftz")
    theirs = fasttext.load_model(str(tmp_path / "ours.ftz"))
    assert theirs.is_quantized()
    _same_predictions(ours, theirs, _texts(data[1]), k=2)
    assert ours.test(data[1]).precision >= dense - 0.05
    ours.save(tmp_path / "ours.npz")  # rowbook's own file keeps the codes too
    assert rowbook.load(tmp_path / "ours.npz").test(data[1]) == ours.test(data[1])


def test_quantised_output_rows_qout_both_ways(tmp_path):
    """``qout`` quantises the label rows too (it needs 256 labels, one per centroid): a
    fastText .ftz with it predicts the same here, and one written here the same there."""
    rng = random.Random(0)
    lines = [
        f"__label__t{i % 260} w{i % 260} w{(i * 7) % 260} {rng.choice(NOISE)}" for i in range(1300)
    ]
    path = tmp_path / "many.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [line.split(" ", 1)[1] for line in lines[:200]]
    theirs = _oracle(path, dim=10, epoch=1)
    theirs.quantize(thread=10, qout=True)
    theirs.save_model(str(tmp_path / "m.ftz"))
    ours = FastTextClassifier.load_fasttext(tmp_path / "m.ftz")
    assert "output" in ours._require_fitted("test").quant  # the label rows are codes
    _same_predictions(ours, theirs, texts, k=3)
    mine = FastTextClassifier(vector_size=10, epochs=1, workers=1).fit(path)
    mine.quantize(qout=True)
    assert "output" in mine._require_fitted("test").quant
    mine.save_fasttext(tmp_path / "mine.ftz")
    _same_predictions(mine, fasttext.load_model(str(tmp_path / "mine.ftz")), texts, k=3)


# -- autotune ------------------------------------------------------------------------------


def test_autotune_is_reproducible_with_a_seed_and_sets_the_best_parameters(data):
    def tuned():
        return FastTextClassifier(vector_size=10, workers=1).fit(
            data[0], validation=data[1], autotune_trials=5, autotune_metric="f1"
        )

    def timeless(record):
        trials = [{k: v for k, v in t.items() if k != "seconds"} for t in record["trials"]]
        return {k: v for k, v in record.items() if k != "seconds"} | {"trials": trials}

    a, b = tuned(), tuned()
    assert timeless(a.autotune_) == timeless(b.autotune_)
    assert len(a.autotune_["trials"]) == 5 and a.autotune_["trials"][0]["params"]["lr"] == 0.1
    best = max(a.autotune_["trials"], key=lambda t: t["score"])
    assert a.autotune_["best_score"] == best["score"]
    assert a.vector_size == 10  # given, so not searched
    for name, value in a.autotune_["best_params"].items():
        assert getattr(a, name) == value
    np.testing.assert_array_equal(a.W_in_, b.W_in_)


def test_autotune_metrics_follow_fasttexts_spelling(data):
    model = FastTextClassifier(vector_size=10, epochs=2, workers=1)
    model.fit(data[0], validation=data[1], autotune_trials=2, autotune_metric="f1:__label__vehicle")
    model.fit(
        data[0], validation=data[1], autotune_trials=1, autotune_metric="precisionAtRecall:30"
    )
    with pytest.raises(ParameterError, match="autotune_metric"):
        model.fit(data[0], validation=data[1], autotune_trials=1, autotune_metric="f1:__label__no")


def test_the_compiled_reading_is_the_plain_python_one(tmp_path):
    """Split, hash and intern in numba: the same ids, lines and keys as token by token."""
    from rowbook.data.labelled import read_labelled_reference

    texts = [*_lines(300, 5), "", "  ", "a\u00a0b c\x00d\x1ce\te", "日本 </s> x", "é" * 40]
    got, want = read_labelled(texts), read_labelled_reference(texts)
    assert got.keys == want.keys
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.starts, want.starts)
    path = tmp_path / "t.txt"
    path.write_text("\n".join(texts * 50) + "\n", encoding="utf-8")
    got, want = read_labelled(path), read_labelled_reference(path)
    assert got.keys == want.keys
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.starts, want.starts)
    # the hash each token was interned by is fastText's, which the word n-grams use
    assert want.hashes is None
    np.testing.assert_array_equal(got.hashes, fasttext_hashes(list(got.keys)))


@pytest.mark.parametrize("loss", ["softmax", "ns", "hs", "ova"])
def test_prediction_takes_a_second_thread_from_the_cut_off_and_the_same_labels(loss, monkeypatch):
    """Generated lines of 2 words and 60 labels: the lines whose work (``prediction_work``:
    input rows, output rows scored, lines) stays below ``THREAD_WORK`` are predicted on one
    thread, one line more on two, cut where the work is halved; the labels and probabilities
    are those of one thread (the count before, rows read, was fitted at load 12 and took a
    second thread where it lost)."""
    from rowbook.models.fasttext_classifier import prediction

    seen = []
    real = prediction.predict_lines

    def spy(tables, in_starts, in_ids, **kwargs):
        seen.append((in_starts, kwargs["bounds"]))
        return real(tables, in_starts, in_ids, **kwargs)

    texts = [f"w{i % 50} w{i * 7 % 53}" for i in range(40_000)]
    labels = [f"t{i % 60}" for i in range(40_000)]
    model = FastTextClassifier(vector_size=8, epochs=1, loss=loss, workers=2).fit(
        texts[:600], labels[:600]
    )
    monkeypatch.setattr(prediction, "predict_lines", spy)
    model.predict(texts)
    rows = np.diff(seen[0][0])  # (L,) input rows a line
    scored = 60 if loss != "hs" else (60).bit_length()  # k = 1: one path for hs
    ends = np.cumsum(prediction.prediction_work(8, rows, rows > 0, scored))  # (L,)
    below = int(np.searchsorted(ends, prediction.THREAD_WORK))  # the lines under the cut-off
    assert 100 < below < len(texts)
    seen.clear()
    model.predict(texts[:below])
    two = model.predict(texts[: below + 1])
    assert [b for _, b in seen] == [
        None,
        [0, int(np.searchsorted(ends, ends[below] / 2)) + 1, below + 1],
    ]
    model.workers = 1
    one = model.predict(texts[: below + 1])
    assert seen[-1][1] is None and one[0] == two[0]
    np.testing.assert_array_equal(np.concatenate(one[1]), np.concatenate(two[1]))


def test_predict_lines_gives_the_same_answer_whatever_the_cut():
    """Each line is predicted alone: any cut into ranges on any number of threads (empty
    ranges included) gives one thread's labels, probabilities and counts, for every loss."""
    from rowbook.data.huffman import fasttext_tree
    from rowbook.models.fasttext_classifier.prediction_kernels import predict_lines

    rng = np.random.default_rng(0)
    W_in = rng.standard_normal((300, 6)).astype(np.float32)
    W_out = rng.standard_normal((40, 6)).astype(np.float32)
    in_starts = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 500))]).astype(np.int64)
    in_ids = rng.integers(0, 300, in_starts[-1]).astype(np.int32)
    tree = fasttext_tree(np.sort(rng.integers(1, 100, 40))[::-1].copy())[:2]
    for loss in ("softmax", "ns", "hs", "ova"):
        args = ((W_in, None, W_out, None), in_starts, in_ids)
        options = {"loss": LOSS_CODES[loss], "k": 3, "threshold": 0.01, "children": tree}
        one = predict_lines(*args, **options)
        assert (one[2] > 0).any()
        for bounds in ([0, 1, 500], [0, 250, 250, 500], [0, 17, 300, 499, 500]):
            for a, b in zip(one, predict_lines(*args, **options, bounds=bounds), strict=True):
                np.testing.assert_array_equal(a, b)
