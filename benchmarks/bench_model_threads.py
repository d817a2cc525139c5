"""Where ``encode_batch`` of a SentencePiece ``.model`` spends each thread's time: one worker against two.

The ``.model`` files of ``bench_tokenizers.py --only models`` (8,000 pieces, ``nmt_nfkc``
rules, Unigram and BPE, trained by ``sentencepiece`` on NewsArticles) encode the first 10 MB
of its lines with ``workers=1`` and ``workers=2`` in turn, medians of ``--repeat``. Each
thread's time is summed by phase: a batch's texts joined (``joined``, Python), the compiled
pass (code points, normalizer, words, lattice or merges; without the GIL), the lists of ids
(``_unpacked``) and the ``Encoding`` objects (both Python, holding the GIL). For each, from
``/proc/thread-self/schedstat``: on a CPU, waiting for a CPU (the machine's load), and asleep
(the GIL). "outside" is the rest of a thread's wall time: waiting for a batch or a result.
``sentencepiece``'s ``encode`` on one thread and on every core is timed beside it.

With ``--text tweets`` the lines are the health tweets (:func:`corpora.healthtweets_tokens`,
each tweet's tokens joined by spaces), with ``--text many-words`` generated text of many
distinct long words (:func:`corpora.many_words_lines`): the same models, another kind of
text, for a default chosen on the news lines.

With ``--against REV`` it times the compiled pass alone instead, on one thread: this tree's
``batch.py`` beside the one of git revision ``REV`` (read into a temporary module), in turn,
medians of the thread's CPU time (``time.thread_time``: the machine's load leaves it alone),
the ids checked equal: what a change to the pass costs, in one command.

    python benchmarks/bench_model_threads.py                 # Unigram and BPE, 10 MB
    python benchmarks/bench_model_threads.py --kinds unigram --megabytes 2
    python benchmarks/bench_model_threads.py --kinds unigram --text tweets
    python benchmarks/bench_model_threads.py --against main --repeat 15 --text tweets
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encode_threads import _clock  # (wall, on a CPU, waiting for one) of this thread
from bench_tokenizers import ENCODE_MB, VOCAB, first_megabytes, spm_train
from corpora import (
    cache_dir,
    healthtweets_tokens,
    many_words_lines,
    newsarticles_lines,
    newsarticles_texts,
)
from timing import machine

from rowbook.text import subword_pipeline
from rowbook.text.sentencepiece import batch
from rowbook.text.sentencepiece.files import read_parts
from rowbook.text.sentencepiece.loading import model_from_parts
from rowbook.text.trie import joined

PHASES = ("joined text", "compiled pass", "lists of ids", "encodings")


class _Spent:
    """Each thread's time in each phase: ``by_thread[(who, phase)]``, who being the caller
    or the other thread."""

    by_thread: dict[tuple[str, str], np.ndarray]

    def __init__(self) -> None:
        self.lock, self.by_thread = threading.Lock(), {}

    def add(self, phase: str, spent: np.ndarray) -> None:
        who = "caller" if threading.current_thread() is threading.main_thread() else "other"
        with self.lock:
            key = (who, phase)
            self.by_thread[key] = self.by_thread.get(key, 0) + spent

    def wrap(self, phase: str, function):
        def timed(*args, **kwargs):
            start = _clock()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(phase, _clock() - start)

        return timed


def _model(kind: str) -> bytes:
    path = cache_dir() / f"newsarticles-{kind}-{VOCAB}-nmt_nfkc.model"
    if not path.exists():
        path.write_bytes(spm_train(newsarticles_texts(), VOCAB, kind, rule="nmt_nfkc"))
    return path.read_bytes()


def _timed(spent: _Spent, tok, lines: list[str], workers: int) -> dict:
    spent.by_thread.clear()
    start = _clock()
    tok.encode_batch(lines, workers=workers)
    total = _clock() - start
    rows = dict(spent.by_thread)
    for who in ("caller", "other"):
        inside = sum((v for (w, _), v in rows.items() if w == who), np.zeros(3))
        if who == "caller":  # its own time between the phases: on a CPU, waiting, asleep
            rows[(who, "outside")] = total - inside
        elif inside[0]:  # the other thread's time outside is idle: waiting for a batch
            rows[(who, "outside")] = np.array([total[0] - inside[0], 0.0, 0.0])
    rows[("all", "wall")] = np.array([total[0], 0.0, 0.0])
    return rows


def _batch_of(rev: str, folder: str):
    """The module :mod:`rowbook.text.sentencepiece.batch` as it is at git revision ``rev``
    (its imports from this tree)."""
    path = Path(folder, "batch_at_rev.py")
    root = Path(__file__).resolve().parent.parent
    source = ["git", "-C", str(root), "show", f"{rev}:rowbook/text/sentencepiece/batch.py"]
    path.write_bytes(subprocess.run(source, check=True, capture_output=True).stdout)
    spec = importlib.util.spec_from_file_location("batch_at_rev", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # for its dataclass
    spec.loader.exec_module(module)
    return module


def _against(args, lines: list[str]) -> int:
    """The compiled pass of this tree and of ``args.against``, one thread, in turn: medians
    of the thread's CPU time."""
    texts = joined(lines)
    with tempfile.TemporaryDirectory() as folder:
        old = _batch_of(args.against, folder)
        for kind in args.kinds:
            tok = model_from_parts(read_parts(_model(kind), f"{kind}.model"))
            job = tok._batch_job()
            make = old.unigram_job if kind == "unigram" else old.bpe_job
            jobs = {"this tree": job, args.against: make(tok, job.by_word)}
            ours, theirs = (j.run(texts) for j in jobs.values())  # compiled (or read) here
            assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True)), kind
            spent: dict[str, list[float]] = {name: [] for name in jobs}
            for i in range(args.repeat):
                for name, each in list(jobs.items())[:: 1 if i % 2 == 0 else -1]:
                    start = time.thread_time()
                    each.run(texts)
                    spent[name].append(time.thread_time() - start)
            ms = {name: np.median(t) * 1e3 for name, t in spent.items()}
            print(
                f"{kind}: compiled pass, thread CPU ms, medians of {args.repeat}: this tree "
                f"{ms['this tree']:.1f}, {args.against} {ms[args.against]:.1f}, "
                f"ratio {ms['this tree'] / ms[args.against]:.3f}"
            )
    print(f"1-min load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kinds", nargs="+", default=["unigram", "bpe"])
    parser.add_argument("--megabytes", type=float, default=ENCODE_MB)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--text", choices=["news", "tweets", "many-words"], default="news")
    parser.add_argument("--against", metavar="REV", help="the compiled pass beside REV's")
    args = parser.parse_args(argv)
    import sentencepiece as spm

    print(f"{machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}")
    if args.text == "news":
        lines = first_megabytes(newsarticles_lines(), args.megabytes)
    elif args.text == "tweets":
        lines = first_megabytes([" ".join(t) for t in healthtweets_tokens()], args.megabytes)
    else:
        lines = many_words_lines(int(args.megabytes * 1e6))
    print(f"{len(lines):,} lines of {args.text}, {sum(map(len, lines)) / 1e6:.1f} M characters")
    if args.against:
        return _against(args, lines)
    spent = _Spent()
    batch.joined = spent.wrap("joined text", batch.joined)
    subword_pipeline.joined = spent.wrap("joined text", subword_pipeline.joined)
    subword_pipeline._unpacked = spent.wrap("lists of ids", subword_pipeline._unpacked)
    for kind in args.kinds:
        data = _model(kind)
        tok = model_from_parts(read_parts(data, f"{kind}.model"))
        theirs = spm.SentencePieceProcessor(model_proto=data)
        job = tok._batch_job()
        timed_job = batch.Job(spent.wrap("compiled pass", job.kernel), job.tables, job.by_word)
        tok._batch_job = lambda job=timed_job: job
        tok._encodings = spent.wrap("encodings", tok._encodings)
        assert [e.ids for e in tok.encode_batch(lines, workers=2)] == theirs.encode(lines)
        runs: dict[int, list[dict]] = {1: [], 2: []}
        theirs_ms: dict[int, list[float]] = {1: [], -1: []}
        for _ in range(args.repeat):
            for workers in (1, 2):
                runs[workers].append(_timed(spent, tok, lines, workers))
            for threads in (1, -1):
                start = time.perf_counter()
                theirs.encode(lines, num_threads=threads)
                theirs_ms[threads].append((time.perf_counter() - start) * 1e3)
        print(
            f"\n{kind}: ms, medians of {args.repeat} (wall / on a CPU / waiting for one / asleep)"
        )
        for workers, results in runs.items():
            print(f"  workers={workers}")
            for key in sorted({k for r in results for k in r}, key=lambda k: (k[0], k[1])):
                wall, cpu, wait = (
                    np.median([r.get(key, np.zeros(3)) for r in results], axis=0) * 1e3
                )
                print(
                    f"    {key[0]:6s} {key[1]:14s} {wall:7.0f} {cpu:7.0f} {wait:7.0f} {wall - cpu - wait:7.0f}"
                )
        ours = {w: np.median([r[("all", "wall")][0] for r in runs[w]]) * 1e3 for w in runs}
        theirs_med = {n: np.median(theirs_ms[n]) for n in theirs_ms}
        print(
            f"  sentencepiece: one thread {theirs_med[1]:.0f} ms, every core {theirs_med[-1]:.0f} ms; "
            f"sentencepiece / rowbook: one thread {theirs_med[1] / ours[1]:.2f}x, "
            f"every core {theirs_med[-1] / ours[2]:.2f}x"
        )
    print(f"\n1-min load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
