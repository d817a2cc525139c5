"""The classifier's defaults on data they were not chosen on (rows of ``bench_defaults.py``).

:class:`~rowbook.models.FastTextClassifier`'s own choices (the rest are fastText's
supervised defaults, checked against fastText by ``bench_classifier.py``) were measured on
the health tweets (16 agencies, about 13 tokens a line):

* ``workers=None`` (every core) and ``batch_words=10_000`` (tokens a job, the unit of
  threading): the target, training faster on every core than on one at the same
  precision@1 (within a point), and jobs of 10,000 tokens no slower than of 100,000; beside
  them every core with the output rows shared by the threads, as fastText shares them (the
  way before :class:`~rowbook.models.fasttext_classifier.training.OwnOutputRows`: on 500
  labels twice one worker's time);
* :data:`~rowbook.models.fasttext_classifier.prediction.THREAD_WORK`: a second prediction
  thread from that much work (:func:`~rowbook.models.fasttext_classifier.prediction.
  prediction_work`, input rows, output rows scored and lines weighted apart, about 0.75 ms
  of one thread's CPU), fitted on all three sets below (``fit_predict_cutoff.py``): the
  target, two threads no slower than one from the cut-off, at it and at twice it; and one
  thread's CPU for that much work alike on every set, the two :func:`check_sets` included.

The second data: :func:`bench_classifier.generated_mail` (2 labels, lines of about 200
tokens) and :func:`generated_topics` (500 labels, about 15 tokens a line).
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import numpy as np
from bench_classifier import generated_mail
from corpora import healthtweets_labelled
from timing import interleaved_times_ms

from rowbook import FastTextClassifier
from rowbook.models.fasttext_classifier import prediction, training

__all__ = ["check_sets", "fit_rows", "generated_topics", "labelled_sets", "predict_rows"]

Split = tuple[list[str], list[str], list[str], list[str]]  # train texts, labels; test texts, labels


def generated_topics(n_lines: int, labels: int = 500, seed: int = 0) -> tuple[list[str], list[str]]:
    """Short lines of many labels: ``labels`` topics of Zipf(0.7) frequencies, 5-25 tokens a
    line from a Zipf(1.0) vocabulary of 30,000 made-up words, half of them drawn instead
    from 20 cue words of the line's topic."""
    rng = np.random.default_rng(seed)
    V = 30_000
    words = np.array([f"{w:x}q" for w in rng.choice(1 << 24, V, replace=False)])
    base = np.cumsum(1.0 / np.arange(1, V + 1))
    cues = rng.integers(0, V, (labels, 20))  # (labels, 20)
    topic_p = 1.0 / np.arange(1, labels + 1) ** 0.7
    topics = rng.choice(labels, n_lines, p=topic_p / topic_p.sum())
    texts = []
    for topic, n in zip(topics, rng.integers(5, 26, n_lines), strict=True):
        ids = np.searchsorted(base, rng.random(n) * base[-1])
        cue = rng.random(n) < 1 / 2
        ids[cue] = cues[topic, rng.integers(0, 20, int(cue.sum()))]
        texts.append(" ".join(words[ids]))
    return texts, [f"t{t}" for t in topics]


def _split(texts: list[str], labels: list[str], seed: int = 0) -> Split:
    order = list(range(len(texts)))
    random.Random(seed).shuffle(order)
    cut = len(order) * 4 // 5
    return (
        [texts[i] for i in order[:cut]],
        [labels[i] for i in order[:cut]],
        [texts[i] for i in order[cut:]],
        [labels[i] for i in order[cut:]],
    )


def labelled_sets(quick: bool) -> dict[str, Split]:
    """The health tweets the defaults were chosen on, and the two generated sets."""
    tweets = [(a, " ".join(t)) for a, t in healthtweets_labelled() if t]
    random.Random(0).shuffle(tweets)
    tweets = tweets[: 10_000 if quick else None]
    mail = [line.split(" ", 1) for line in generated_mail(1_000 if quick else 5_000)]
    topics = generated_topics(4_000 if quick else 30_000)
    return {
        "health tweets (16 labels, 13 tokens a line)": _split(
            [t for _, t in tweets], [a for a, _ in tweets]
        ),
        "generated mail (2 labels, 200 tokens a line)": _split(
            [t for _, t in mail], [label.removeprefix("__label__") for label, _ in mail]
        ),
        "generated topics (500 labels, 15 tokens a line)": _split(*topics),
    }


def fit_rows(sets: dict[str, Split], repeat: int) -> list[tuple[str, dict[str, tuple], str]]:
    """(data, {setting: (median fit seconds, precision@1)}, load average before -> after) for every core with the default
    jobs, one worker, every core with jobs of 100,000 tokens, and every core on shared output
    rows (fastText's way, before :class:`~rowbook.models.fasttext_classifier.training.
    OwnOutputRows`); ``3 * repeat`` rounds of fits interleaved, each round in a shuffled
    order, after one fit of each data set not timed (in a fixed order the first setting of
    a round, the defaults, took 0.52 s on the mail in all three rounds of one idle run and
    0.27-0.31 s in others). Three rounds were too few for fits of 0.26 s: the mail's jobs
    of 100,000 / 10,000 came out 0.91-0.96 in five idle runs, and 1.00 in 15 rounds (261.1
    against 260.6 ms, quartiles 257-268 ms each)."""
    settings = {  # name: (options, each thread its own output rows)
        "every core, jobs of 10,000": ({}, True),
        "one worker": ({"workers": 1}, True),
        "every core, jobs of 100,000": ({"batch_words": 100_000}, True),
        "every core, output rows shared": ({}, False),
    }
    rows = []
    FastTextClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"])  # compile outside the timers
    for name, (train, train_y, test, test_y) in sets.items():
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        seconds: dict[str, list[float]] = {s: [] for s in settings}
        precision: dict[str, list[float]] = {s: [] for s in settings}
        FastTextClassifier().fit(train, train_y)  # this data's first fit, not timed
        names, rng = list(settings), np.random.default_rng(0)
        for _ in range(3 * repeat):  # each round in a shuffled order: no setting always first
            for setting in (names[i] for i in rng.permutation(len(names))):
                options, own_rows = settings[setting]
                training.OWN_OUTPUT_ROWS = own_rows
                start = time.perf_counter()
                model = FastTextClassifier(**options).fit(train, train_y)
                seconds[setting].append(time.perf_counter() - start)
                precision[setting].append(model.test(test, test_y).precision)
        training.OWN_OUTPUT_ROWS = True
        rows.append(
            (
                name,
                {
                    s: (statistics.median(seconds[s]), statistics.median(precision[s]))
                    for s in settings
                },
                f"{load} -> {' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
            )
        )
    return rows


def check_sets(sets: dict[str, Split]) -> dict[str, tuple[dict, Split]]:
    """The prediction cost model's checks, data it was not fitted on: the health tweets
    with ``loss="ova"`` at ``d = 50`` and the generated topics with ``loss="hs"``."""
    tweets, _, topics = sets.values()
    return {
        "check: health tweets, loss ova, d = 50": ({"loss": "ova", "vector_size": 50}, tweets),
        "check: generated topics, loss hs": ({"loss": "hs"}, topics),
    }


def _forced(model, state, encoded, threads: int):
    """``predictions`` of ``encoded`` on ``threads`` threads, whatever the cut-off."""

    def call() -> None:
        model.workers = threads
        saved = prediction.THREAD_WORK
        prediction.THREAD_WORK = 1e-9 if threads > 1 else 1e30
        try:
            prediction.predictions(model, state, encoded, 1, 0.0)
        finally:
            prediction.THREAD_WORK = saved

    return call


def _work_ends(model, state, encoded) -> np.ndarray:
    """``(L,)`` where each line's work ends, for its best label."""
    return prediction.work_ends(model, encoded.input_starts, len(state.labels), 1)


def predict_rows(sets: dict[str, Split], repeat: int) -> list[tuple]:
    """(data, one thread's CPU ms for THREAD_WORK of work over the test lines, then for the
    first lines holding 1 and 2 x THREAD_WORK: (lines, ms on one thread, on two, the threads
    the rule chose), or None where the test lines hold less), for the three sets and
    :func:`check_sets`; wall times medians of ``5 x repeat`` runs in turn."""
    rows = []
    cases = {name: ({}, split) for name, split in sets.items()} | check_sets(sets)
    for name, (options, (train, train_y, test, _)) in cases.items():
        model = FastTextClassifier(workers=1, **options).fit(train, train_y)
        state, encoded = model._encode_texts(test)
        ends = _work_ends(model, state, encoded)
        one = interleaved_times_ms(
            {"one": _forced(model, state, encoded, 1)},
            repeat=max(5, repeat),
            clock=time.process_time,
        )["one"]
        per_cutoff = float(np.median(one)) * prediction.THREAD_WORK / ends[-1]
        at = []
        for times in (1, 2):
            if ends[-1] < times * prediction.THREAD_WORK:  # the test lines hold less work
                at.append(None)
                continue
            lines = int(np.searchsorted(ends, times * prediction.THREAD_WORK)) + 1
            _, part = model._encode_texts(test[:lines])
            ways = {n: _forced(model, state, part, n) for n in (1, 2)}
            ms = interleaved_times_ms(ways, repeat=5 * repeat, warmup=2)
            chose = prediction.prediction_threads(2, float(_work_ends(model, state, part)[-1]))
            at.append((lines, float(np.median(ms[1])), float(np.median(ms[2])), chose))
        rows.append((name, per_cutoff, at))
    return rows
