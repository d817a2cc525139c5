"""Skip-gram against its C anchors: word2vec.c, pWord2Vec (HogBatch) and gensim, whole runs from one file.

Every tool trains skip-gram with negative sampling on the same file (NewsArticles, one
document a line, ``[a-z0-9']+`` lowercased tokens; 2.16M tokens) with the same settings:
d = 100, window 5, negative 5, sample 1e-3, min_count 5, 5 epochs, learning rate 0.025,
at 1 and at 2 threads. A run is timed whole, from the file to the trained table, as a user
meets it: the C programs as subprocesses (vocabulary, training and writing their binary
vectors file), gensim from ``corpus_file`` (its fastest path), rowbook's ``fit`` on the
path with each kernel (``kernel="classic"`` and ``"batched"``). The tools run in turn in
every repetition (medians of ``--repeat``, default 3), so a change of load reaches all
alike; the load average is printed before and after. Scores are gensim's
``KeyedVectors`` evaluation of each run's vectors (questions-words, WordSim353,
SimLex-999), the mean over the repetitions (rowbook and gensim seeded 1, 2, 3; the C
programs have no seed option).

The C sources are vendored in ``benchmarks/anchors/`` with their licences (Apache 2.0):
``word2vec.c`` of tmikolov/word2vec (commit 20c129a) and ``pWord2Vec.cpp`` of
IntelLabs/pWord2Vec (commit 672a12b), unchanged, so a fresh machine needs only a C/C++
compiler with OpenMP (``gcc``, ``g++``). They are built once into the benchmark cache
(``ROWBOOK_BENCH_CACHE``, default ``~/.cache/rowbook-bench/anchors``) with word2vec's
makefile flags (``-O3 -march=native -funroll-loops``) and, for pWord2Vec, ``g++ -O3
-march=native -fopenmp -D USE_MKL`` with ``benchmarks/anchors/mkl.h`` standing in for
MKL's header, so its three products are OpenBLAS's ``cblas_sgemm``: the system's
(``libopenblas-dev``) when it is installed, else the OpenBLAS that SciPy's wheel bundles
(symbols prefixed ``scipy_``). With neither, pWord2Vec is built with its own loops (no
``USE_MKL``) and the table says so.

FLOP/s: a skip-gram pair costs ``(1 + negative) * 3 * 2 * d`` floating-point operations
(a dot product and two axpy's of ``d`` per target), whichever the kernel (the batched one
does the same arithmetic as matrix products), so each run's GFLOP/s per core is
``pairs * epochs * 6 (1 + negative) d / (seconds * threads)``, with the pairs counted from
rowbook's subsampling and window draws. ``--kernels`` also times the two kernels alone on
one epoch of the encoded corpus at d = 50, 100, 200, 300 (CPU seconds, one thread), against
one core's peak: 2 FMA pipes x 16 floats x 2 FLOPs = 64 FLOP a cycle (Zen 5's 512-bit
units, ``FLOP_PER_CYCLE``) at the clock measured on a chain of dependent adds (``--peak``:
the FMA throughput measured too).

CBOW (``--architecture cbow``): the same runs with CBOW, learning rate 0.05 (word2vec.c's
and rowbook's default for CBOW) for every tool, against word2vec.c (``-cbow 1``) and gensim
(pWord2Vec has no CBOW); its FLOPs a window with a context are ``(1 + negative) * 6 d`` for
the targets and ``2 d`` a context word (the mean and the scatter of its step).

Run ``python benchmarks/bench_anchors.py`` (``--quick``: 300 documents, 1 epoch, one
repetition; ``--quality``: also classic, and for skip-gram ``"hogbatch"`` (a draw of
negatives a window), against batched on 3 seeds of NewsArticles and of the health tweets,
the measurement behind ``Word2Vec``'s default kernel; ``--kernels --shared 1,2,4,8``: the
skip-gram kernel alone at each count of consecutive windows sharing a draw of negatives;
``--hot-rows``: the batched kernel with every row hot, to tell memory from the rest;
``--gap-seeds N``: only gensim, classic and batched on N seeds of the file, each score's
mean and standard deviation and rowbook's gap to gensim with its standard error, to tell a
gap from seed noise).
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_word2vec import gensim_scores
from benchmarks.corpora import cache_dir, healthtweets_tokens, newsarticles_tokens
from benchmarks.timing import machine, print_targets
from rowbook.models.word_vectors.word2vec import DEFAULT_LR, Word2Vec

ANCHORS = Path(__file__).resolve().parent / "anchors"
SETTINGS = {"vector_size": 100, "window": 5, "negative": 5, "sample": 1e-3, "min_count": 5}
#: One core's float32 FLOPs a cycle: 2 FMA pipes x 16 floats x 2 FLOPs. This AMD EPYC is Zen 5
#: (family 26, LLVM's host CPU "znver5"), whose desktop and server parts execute AVX-512 on
#: full 512-bit units (AMD's Zen 5 launch material, "AVX-512 with full 512-bit data path";
#: A. J. Yee, "Zen5's AVX512 Teardown", numberworld.org, 2024; Zen 4 ran 512-bit
#: instructions on two 256-bit halves, 32). ``--peak`` measures it: 258 GFLOP/s at 4.03 GHz.
FLOP_PER_CYCLE = 64


# -- building the anchors ------------------------------------------------------------------------


def _blas() -> tuple[list[str], str] | None:
    """``(compiler flags, description)`` for OpenBLAS's ``cblas_sgemm``, or None."""
    system = [Path("/usr/include/x86_64-linux-gnu/cblas.h"), Path("/usr/include/cblas.h")]
    if any(p.exists() for p in system) and shutil.which("gcc"):
        found = subprocess.run(
            ["gcc", "-lopenblas", "-x", "c", "-", "-o", os.devnull],
            input="int main(void){return 0;}",
            capture_output=True,
            text=True,
        )
        if found.returncode == 0:
            return ["-lopenblas"], "system OpenBLAS"
    try:
        import scipy
    except ImportError:
        return None
    libs = Path(scipy.__file__).resolve().parent.parent / "scipy.libs"
    for lib in sorted(libs.glob("libscipy_openblas-*.so")):  # LP64, not the 64_ build
        flags = ["-D", "ROWBOOK_BLAS_PREFIX=scipy_", f"-L{libs}", f"-l:{lib.name}"]
        return [*flags, f"-Wl,-rpath,{libs}"], f"SciPy's bundled OpenBLAS ({lib.name})"
    return None


def build_anchors() -> dict[str, tuple[Path, str]]:
    """``{"word2vec.c": (binary, how built), "pWord2Vec": ...}``, compiled once into the cache."""
    out = cache_dir() / "anchors"
    out.mkdir(exist_ok=True)
    built = {}
    w2v = out / "word2vec"
    flags = ["-lm", "-pthread", "-O3", "-march=native", "-Wall", "-funroll-loops"]
    if not w2v.exists():
        subprocess.run(
            ["gcc", str(ANCHORS / "word2vec.c"), "-o", str(w2v), *flags, "-Wno-unused-result"],
            check=True,
        )
    built["word2vec.c"] = (w2v, "gcc -O3 -march=native -funroll-loops")
    blas = _blas()
    pw2v = out / ("pWord2Vec" if blas else "pWord2Vec-noblas")
    common = ["-std=c++11", "-O3", "-march=native", "-fopenmp", "-w"]
    common += ["-include", "cstdio", "-include", "cstdlib", "-include", "mm_malloc.h"]
    if not pw2v.exists():
        extra = ["-D", "USE_MKL", *blas[0]] if blas else []
        source = str(ANCHORS / "pWord2Vec.cpp")
        subprocess.run(["g++", source, "-o", str(pw2v), *common, *extra], check=True)
    how = f"g++ -O3 -march=native -fopenmp, {blas[1] if blas else 'no BLAS: its own loops'}"
    built["pWord2Vec"] = (pw2v, how)
    return built


# -- the runs ------------------------------------------------------------------------------------


def corpus_file(sentences: list[list[str]], name: str) -> Path:
    """The sentences written one a line (tokens split by spaces), kept in the cache."""
    path = cache_dir() / f"{name}.txt"
    if not path.exists():
        text = "\n".join(" ".join(s) for s in sentences) + "\n"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return path


def _c_run(
    binary: Path, path: Path, threads: int, epochs: int, out: Path, pword2vec: bool, arch: str
):
    s = SETTINGS
    argv = [str(binary), "-train", str(path), "-output", str(out), "-size", str(s["vector_size"])]
    argv += ["-window", str(s["window"]), "-negative", str(s["negative"])]
    argv += ["-sample", str(s["sample"]), "-min-count", str(s["min_count"]), "-iter", str(epochs)]
    argv += ["-threads", str(threads), "-alpha", str(DEFAULT_LR[arch])]
    argv += ["-binary", "1", "-debug", "0"]
    if pword2vec:
        argv += ["-batch-size", str(2 * s["window"] + 1)]
    else:
        argv += ["-cbow", str(int(arch == "cbow")), "-hs", "0"]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1"}
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)


def run_c(binary: Path, pword2vec: bool, arch: str = "skipgram"):
    def train(path: Path, threads: int, epochs: int, seed: int):
        from gensim.models import KeyedVectors

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "vectors.bin"
            start = time.perf_counter()
            _c_run(binary, path, threads, epochs, out, pword2vec, arch)
            seconds = time.perf_counter() - start
            kv = KeyedVectors.load_word2vec_format(str(out), binary=True)
        words = [w for w in kv.index_to_key if w != "</s>"]  # the C programs' line-end token
        return seconds, gensim_scores(words, kv[words])

    return train


def run_gensim(arch: str = "skipgram"):
    def train(path: Path, threads: int, epochs: int, seed: int):
        from gensim.models import Word2Vec as GensimWord2Vec

        sg, alpha = int(arch == "skipgram"), DEFAULT_LR[arch]
        start = time.perf_counter()
        model = GensimWord2Vec(
            corpus_file=str(path),
            sg=sg,
            workers=threads,
            epochs=epochs,
            seed=seed,
            alpha=alpha,
            **SETTINGS,
        )
        seconds = time.perf_counter() - start
        return seconds, gensim_scores(model.wv.index_to_key, model.wv.vectors)

    return train


def run_rowbook(kernel: str, arch: str = "skipgram"):
    def train(path: Path, threads: int, epochs: int, seed: int):
        model = Word2Vec(
            architecture=arch,
            kernel=kernel,
            workers=threads,
            epochs=epochs,
            seed=seed,
            lr=DEFAULT_LR[arch],
            **SETTINGS,
        )
        start = time.perf_counter()
        model.fit(path)
        seconds = time.perf_counter() - start
        return seconds, gensim_scores(model.index_to_key_, model.W_in_)

    return train


def epoch_flop(sentences: list[list[str]], d: int, arch: str) -> tuple[int, int]:
    """``(FLOPs, pairs)`` of one epoch after subsampling and window shrinking (rowbook's
    draws): a skip-gram pair costs ``(1 + negative) * 6 d``, a CBOW window with a context
    that for its targets and ``2 d`` a context word (the mean, the scatter of the step)."""
    windows, pairs = windows_per_epoch(sentences)
    per_target = (1 + SETTINGS["negative"]) * 6 * d
    if arch == "skipgram":
        return pairs * per_target, pairs
    return windows * per_target + pairs * 2 * d, pairs


def windows_per_epoch(sentences: list[list[str]]) -> tuple[int, int]:
    """Windows with a context, and (centre, context) pairs, of one epoch after subsampling
    and window shrinking (rowbook's draws)."""
    from rowbook.data.corpus import encode_corpus
    from rowbook.data.sampling import sample_thresholds
    from rowbook.models.word_vectors.word2vec_batched_kernels import context_windows
    from rowbook.models.word_vectors.word2vec_kernels import kept_words

    vocab = Word2Vec(min_count=SETTINGS["min_count"]).choose_vocab(_counts(sentences))
    encoded = encode_corpus(sentences, vocab.keys)
    ids, starts = encoded.sentences(0, len(encoded.raw_lengths))
    thresholds = sample_thresholds(vocab.counts, SETTINGS["sample"])
    w = SETTINGS["window"]
    sentences = (ids, starts, 0, len(starts) - 1)
    _, ends, shrinks, _ = kept_words(sentences, (thresholds, True, w, True), np.uint64(7))
    _, lows, highs = context_windows(ends, shrinks, w)
    return len(lows), int((highs - lows - 1).sum())


def _counts(sentences):
    from collections import Counter

    counts: Counter[str] = Counter()
    for s in sentences:
        counts.update(s)
    return counts


_CLOCK_C = r"""
#include <stdio.h>
#include <time.h>
int main(void) {  /* 4 dependent integer adds an iteration: 4 cycles */
    long n = 500000000L, x = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (long i = 0; i < n; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    printf("%f\n", 4.0 * n / ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec)) / 1e9);
    return x == 0;
}
"""

_PEAK_C = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#define FMA(k) a##k = _mm512_fmadd_ps(a##k, b, c)
int main(void) {  /* 8 independent chains of 512-bit FMAs: bound by their throughput */
    __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = b, a1 = c, a2 = b, a3 = c, a4 = b, a5 = c, a6 = b, a7 = c;
    long n = 100000000L;
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (long i = 0; i < n; i++) {
        FMA(0); FMA(1); FMA(2); FMA(3); FMA(4); FMA(5); FMA(6); FMA(7);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                               _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    printf("%f %f\n", n * 8.0 * 16 * 2 / s / 1e9, _mm512_reduce_add_ps(sum));
    return 0;
}
"""


def _run_c(name: str, source: str, flags: list[str]) -> list[float]:
    """Compile ``source`` once into the benchmark cache and run it; the numbers it prints."""
    binary = cache_dir() / "anchors" / name
    if not binary.exists():
        binary.parent.mkdir(exist_ok=True)
        src = binary.with_suffix(".c")
        src.write_text(source)
        subprocess.run(["gcc", "-O2", *flags, str(src), "-o", str(binary)], check=True)
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    return [float(x) for x in out.split()]


@functools.cache
def clock_ghz() -> float:
    """The core's clock, measured on a chain of dependent adds (one a cycle): under a
    hypervisor ``/proc/cpuinfo``'s "cpu MHz" is the nominal clock (2.6 GHz on this EPYC,
    whose core ran at 4.03), so it is only the fallback, without a C compiler."""
    if shutil.which("gcc"):
        return _run_c("clock_ghz", _CLOCK_C, [])[0]
    with open("/proc/cpuinfo") as f:
        return max(float(line.split(":")[1]) for line in f if line.startswith("cpu MHz")) / 1e3


def measured_peak() -> None:
    """One core's float32 FMA throughput, measured (512-bit FMAs), against ``FLOP_PER_CYCLE``."""
    gflops = _run_c("fma_peak", _PEAK_C, ["-mavx512f"])[0]
    ghz = clock_ghz()
    print(
        f"\none core: {gflops:.0f} GFLOP/s of 512-bit FMAs at {ghz:.2f} GHz = "
        f"{gflops / ghz:.1f} FLOP a cycle (FLOP_PER_CYCLE: {FLOP_PER_CYCLE}; load {load()})"
    )


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# -- the kernels alone ---------------------------------------------------------------------------


def kernel_flops(
    sentences: list[list[str]],
    dims=(50, 100, 200, 300),
    repeat: int = 3,
    name: str = "NewsArticles",
    arch: str = "skipgram",
    batches: tuple[int, ...] = (),
    shared: tuple[int, ...] = (),
) -> None:
    """CPU seconds of one epoch of each kernel (after a first epoch), and their GFLOP/s;
    for CBOW, also the batched kernel at each minibatch size of ``batches``; for skip-gram,
    hogbatch (a draw of negatives a window) and the batched kernel at each count of windows
    sharing a draw in ``shared``."""
    from rowbook.data.corpus import encode_corpus
    from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
    from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import (
        CBOW_BATCH,
        train_job_batched_cbow,
    )
    from rowbook.models.word_vectors.word2vec_batched_kernels import (
        SHARED_WINDOWS,
        train_job_batched,
    )
    from rowbook.models.word_vectors.word2vec_kernels import train_job

    vocab = Word2Vec(min_count=SETTINGS["min_count"]).choose_vocab(_counts(sentences))
    encoded = encode_corpus(sentences, vocab.keys)
    ids, starts = encoded.sentences(0, len(encoded.raw_lengths))
    thresholds = sample_thresholds(vocab.counts, SETTINGS["sample"])
    table = negative_table(vocab.counts)
    peak = FLOP_PER_CYCLE * clock_ghz()
    kernels = {"classic": (train_job, (arch == "skipgram", True))}
    if arch == "skipgram":
        kernels["hogbatch"] = (train_job_batched, (1,))
        kernels["batched"] = (train_job_batched, (SHARED_WINDOWS,))
        for b in sorted(set(shared) - {1, SHARED_WINDOWS}):
            kernels[f"shared={b}"] = (train_job_batched, (b,))
    for batch in sorted({CBOW_BATCH, *batches}) if arch == "cbow" else ():
        kernels["batched" if batch == CBOW_BATCH else f"B={batch}"] = (
            train_job_batched_cbow,
            (True, batch),
        )
    print(f"\n### The {arch} kernels alone: one epoch of {name}, one thread (load {load()})\n")
    print(
        f"one core's peak: {FLOP_PER_CYCLE} FLOP/cycle x {clock_ghz():.2f} GHz = {peak:.0f} GFLOP/s\n"
    )
    print("| d | " + " | ".join(f"{k} CPU s | {k} GFLOP/s" for k in kernels) + " | speed-up |")
    print("|---:|" + "---:|---:|" * len(kernels) + "---:|")
    w, n, lr = SETTINGS["window"], len(starts) - 1, DEFAULT_LR[arch]
    for d in dims:
        rng = np.random.default_rng(1)
        W_in0 = ((rng.random((len(vocab), d), dtype=np.float32) - 0.5) / d).astype(np.float32)

        def epoch(kernel, rest, W_in0=W_in0):
            W_in, W_out = W_in0.copy(), np.zeros_like(W_in0)
            out = (W_out, table, negative_guide(table), SETTINGS["negative"])
            head = (W_in, (ids, starts, 0, n), (thresholds, True, w, True), out, None)
            kernel(*head, *rest, lr, 1, False, None)  # a first epoch: the tables as training has
            start = time.process_time()
            kernel(*head, *rest, lr * 0.5, 2, False, None)
            return time.process_time() - start

        times = {k: [] for k in kernels}
        for _ in range(repeat):
            for k, (kernel, rest) in kernels.items():
                times[k].append(epoch(kernel, rest))
        flop = epoch_flop(sentences, d, arch)[0]
        median = {k: statistics.median(t) for k, t in times.items()}
        cells = " | ".join(f"{t:.2f} | {flop / t / 1e9:.1f}" for t in median.values())
        print(f"| {d} | {cells} | {median['classic'] / median['batched']:.2f} |")


def hot_rows(sentences: list[list[str]], moduli=(8192, 1024, 64), repeat: int = 3) -> None:
    """How much of the batched skip-gram kernel is fetching rows: one epoch (d = 100, no
    subsampling, so that the same windows run) on the real ids and on every id taken modulo
    each of ``moduli`` (tables of that many rows: 64 fit in L1), CPU seconds, medians."""
    from rowbook.data.corpus import encode_corpus
    from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
    from rowbook.models.word_vectors.word2vec_batched_kernels import (
        SHARED_WINDOWS,
        train_job_batched,
    )

    vocab = Word2Vec(min_count=SETTINGS["min_count"]).choose_vocab(_counts(sentences))
    encoded = encode_corpus(sentences, vocab.keys)
    ids, starts = encoded.sentences(0, len(encoded.raw_lengths))
    d, w, n = SETTINGS["vector_size"], SETTINGS["window"], len(starts) - 1

    def epoch(ids, counts):
        rng = np.random.default_rng(1)
        W_in = ((rng.random((len(counts), d), dtype=np.float32) - 0.5) / d).astype(np.float32)
        table = negative_table(counts)
        out = (np.zeros_like(W_in), table, negative_guide(table), SETTINGS["negative"])
        sampling = (sample_thresholds(counts, 1e-3), False, w, True)
        args = (W_in, (ids, starts, 0, n), sampling, out, None, SHARED_WINDOWS)
        train_job_batched(*args, 0.025, 1, False)  # a first epoch
        times = []
        for r in range(repeat):
            start = time.process_time()
            train_job_batched(*args, 0.0125, 2 + r, False)
            times.append(time.process_time() - start)
        return statistics.median(times)

    print(f"\n### The batched kernel with every row hot (d = {d}, no subsampling, load {load()})\n")
    print("| rows a table | CPU s | of the real ids' |")
    print("|---|---:|---:|")
    real = epoch(ids, np.asarray(vocab.counts))
    print(f"| {len(vocab):,} (the real ids) | {real:.2f} | 100% |")
    for m in moduli:
        small = (ids % m).astype(ids.dtype)
        t = epoch(small, np.bincount(small, minlength=m))
        print(f"| {m:,} (ids modulo {m}) | {t:.2f} | {t / real:.0%} |")


def blas_or_loops(dims=(50, 100, 200, 300), windows: int = 20_000) -> None:
    """One window's three products (6 targets x 6 inputs) by numba's ``np.dot`` (BLAS
    ``sgemm``) on gathered blocks against the batched kernel's loops on the rows (CPU time,
    best of 5)."""
    import numba

    from rowbook.models.word_vectors.word2vec_batched_kernels import _scores, add_rows

    @numba.njit
    def with_blas(Y, X, reps):
        s = 0.0
        for _ in range(reps):
            S = np.dot(Y, X.T)  # (O, I)
            dY = np.dot(S, X)  # (O, d)
            dX = np.dot(S.T, Y)  # (I, d)
            s += S[0, 0] + dY[0, 0] + dX[0, 0]
        return s

    @numba.njit(fastmath=True, _nrt=False)  # as the kernel runs them
    def with_loops(W_out, targets, W_in, context, G, work, reps):
        s = 0.0
        for _ in range(reps):
            _scores(W_out, targets, 6, W_in, context, 6, G)
            GT = G.T
            for i in range(6):
                add_rows(work, i, W_out, targets, GT, i, 6)
            for o in range(6):
                add_rows(W_out, targets[o], W_in, context, G, o, 6)
            s += G[0, 0]
        return s

    print("\n### One window's three products: BLAS or loops (6 x 6, microseconds)\n")
    print("| d | np.dot (sgemm) on gathered blocks | the kernel's loops | loops faster by |")
    print("|---:|---:|---:|---:|")
    for d in dims:
        rng = np.random.default_rng(0)
        W_in = (rng.standard_normal((100, d)) * 1e-3).astype(np.float32)
        W_out = W_in.copy()
        context, targets = np.arange(6), np.arange(6) + 10
        G, work = np.zeros((6, 10), np.float32), np.zeros((10, d), np.float32)
        Y, X = W_out[targets].copy(), W_in[context].copy()
        best = {
            "blas": _best_microseconds(with_blas, (Y, X), windows),
            "loops": _best_microseconds(
                with_loops, (W_out, targets, W_in, context, G, work), windows
            ),
        }
        print(
            f"| {d} | {best['blas']:.2f} | {best['loops']:.2f} | {best['blas'] / best['loops']:.1f}x |"
        )


def _best_microseconds(fn, args: tuple, windows: int) -> float:
    """The best of 5 CPU times of ``fn(*args, windows)``, per window, in microseconds."""
    fn(*args, 10)  # compiled
    times = []
    for _ in range(5):
        start = time.process_time()
        fn(*args, windows)
        times.append(time.process_time() - start)
    return min(times) / windows * 1e6


# -- quality of the two kernels ------------------------------------------------------------------


def kernel_quality(seeds: int = 3, arch: str = "skipgram") -> list[tuple[str, float, float]]:
    """Classic (and for skip-gram, hogbatch: a draw of negatives a window) against batched
    (2 workers, 5 epochs, the architecture's default learning rate) on NewsArticles and the
    health tweets: mean scores and fit time over ``seeds``; returns the targets (batched -
    each other kernel)."""
    targets = []
    for name, sentences in (
        ("NewsArticles", newsarticles_tokens()),
        ("health tweets", healthtweets_tokens()),
    ):
        n = sum(map(len, sentences))
        print(
            f"\n### Classic and batched {arch} on {name} ({n:,} tokens, {seeds} seeds, 2 workers, load {load()})\n"
        )
        print("| kernel | fit s (median) | analogy | WS353 | SimLex |")
        print("|---|---:|---:|---:|---:|")
        scores = {}
        kernels = (
            ("classic", "hogbatch", "batched") if arch == "skipgram" else ("classic", "batched")
        )
        for kernel in kernels:
            runs = []
            for seed in range(1, seeds + 1):
                model = Word2Vec(
                    architecture=arch,
                    kernel=kernel,
                    workers=2,
                    seed=seed,
                    lr=DEFAULT_LR[arch],
                    epochs=5,
                    **SETTINGS,
                )
                start = time.perf_counter()
                model.fit(sentences)
                seconds = time.perf_counter() - start
                runs.append((seconds, gensim_scores(model.index_to_key_, model.W_in_)))
            mean = {k: float(np.mean([r[1][k] for r in runs])) for k in runs[0][1]}
            scores[kernel] = mean
            sec = statistics.median(r[0] for r in runs)
            print(
                f"| {kernel} | {sec:.1f} | {mean['analogy']:.3f} | {mean['ws353']:.3f} | {mean['simlex']:.3f} |"
            )
        for other in kernels[:-1]:
            targets += [
                (
                    f"{name}: {arch} {k} batched - {other}",
                    scores["batched"][k] - scores[other][k],
                    -0.01,
                )
                for k in scores[other]
            ]
    print(f"\nload after: {load()}")
    return targets


def score_gap(path: Path, arch: str, seeds: int, threads: int) -> list[tuple[str, float, float]]:
    """gensim (``corpus_file``), rowbook ``"classic"`` and ``"batched"`` on ``seeds`` seeds of
    the file, ``threads`` threads, 5 epochs: each score's mean and standard deviation, and
    rowbook's gap to gensim with its standard error (the seeds of each side independent),
    so a gap can be told from seed noise. Returns the targets (each gap at least -0.02)."""
    tools = {
        "gensim (corpus_file)": run_gensim(arch),
        "rowbook classic": run_rowbook("classic", arch),
        "rowbook batched": run_rowbook("batched", arch),
    }
    print(f"\n### {arch} scores on {seeds} seeds ({path.name}, {threads} threads, load {load()})\n")
    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for seed in range(1, seeds + 1):
        for tool, train in tools.items():
            runs[tool].append(train(path, threads, 5, seed)[1])
    keys = ("analogy", "ws353", "simlex")
    print("| tool | " + " | ".join(f"{k} mean +- sd | gap +- se" for k in keys) + " |")
    print("|---|" + "---:|---:|" * len(keys))
    gensim, targets = runs["gensim (corpus_file)"], []
    for tool, scores in runs.items():
        cells = []
        for k in keys:
            mine, theirs = np.array([r[k] for r in scores]), np.array([r[k] for r in gensim])
            se = np.sqrt(mine.var(ddof=1) / len(mine) + theirs.var(ddof=1) / len(theirs))
            gap = mine.mean() - theirs.mean()
            cells += [f"{mine.mean():.3f} +- {mine.std(ddof=1):.3f}", f"{gap:+.3f} +- {se:.3f}"]
            if tool != "gensim (corpus_file)":
                targets.append((f"{seeds} seeds: {k} {tool} - gensim", gap, -0.02))
        print(f"| {tool} | " + " | ".join(cells) + " |")
    print(f"\nload after: {load()}")
    return targets


# -- the table -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, 1 epoch, 1 repetition")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tool (medians)")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--kernels", action="store_true", help="also time the kernels alone")
    parser.add_argument("--quality", action="store_true", help="also classic vs batched, 3 seeds")
    parser.add_argument(
        "--architecture", choices=("skipgram", "cbow"), default="skipgram", help="what to train"
    )
    parser.add_argument(
        "--cbow-batches", default="", help="CBOW: also time these minibatch sizes (--kernels)"
    )
    parser.add_argument(
        "--hot-rows", action="store_true", help="also the batched kernel with its rows hot"
    )
    parser.add_argument(
        "--peak", action="store_true", help="also one core's FMA throughput, measured"
    )
    parser.add_argument(
        "--gap-seeds",
        type=int,
        default=0,
        help="only the scores against gensim on this many seeds (mean, sd, gap and its se)",
    )
    parser.add_argument(
        "--shared",
        default="",
        help="skip-gram: also time these runs of windows sharing a draw of negatives (--kernels)",
    )
    args = parser.parse_args(argv)
    arch = args.architecture
    logging.getLogger("gensim").setLevel(logging.ERROR)
    sentences, epochs, name = newsarticles_tokens(), 5, "newsarticles_tokens"
    if args.quick:
        sentences, epochs, args.repeat, name = sentences[:300], 1, 1, "newsarticles_tokens_300"
    path = corpus_file(sentences, name)
    if args.gap_seeds:
        threads = int(args.threads.split(",")[-1])
        run_rowbook("batched", arch)(corpus_file(sentences[:50], "newsarticles_tokens_50"), 1, 1, 1)
        print(f"\n{machine()}")
        met = print_targets(score_gap(path, arch, args.gap_seeds, threads))
        return 0 if met else 1
    anchors = build_anchors()
    if arch == "cbow":
        anchors.pop("pWord2Vec")  # skip-gram only
    n_tokens = sum(map(len, sentences))
    flop, pairs = epoch_flop(sentences, SETTINGS["vector_size"], arch)
    flop *= epochs
    peak = FLOP_PER_CYCLE * clock_ghz()
    print(
        f"\n## {arch} against {', '.join(anchors)} and gensim, whole runs from one file\n\n{machine()}\n"
    )
    print(
        f"{path.name}: {n_tokens:,} tokens, {pairs:,} pairs an epoch; {SETTINGS}, "
        f"lr {DEFAULT_LR[arch]}, {epochs} epochs"
    )
    for tool, (binary, how) in anchors.items():
        print(f"- {tool}: {binary} ({how})")
    tools = {
        tool: run_c(binary, pword2vec=tool == "pWord2Vec", arch=arch)
        for tool, (binary, _) in anchors.items()
    }
    tools["gensim (corpus_file)"] = run_gensim(arch)
    for kernel in ("classic", "batched"):
        tools[f"rowbook {kernel}"] = run_rowbook(kernel, arch)
        tools[f"rowbook {kernel}"](
            corpus_file(sentences[:50], "newsarticles_tokens_50"), 1, 1, 1
        )  # compile
    targets, results = [], {}
    for threads in (int(t) for t in args.threads.split(",")):
        before = load()
        runs: dict[str, list] = {t: [] for t in tools}
        for seed in range(1, args.repeat + 1):
            for tool, train in tools.items():
                runs[tool].append(train(path, threads, epochs, seed))
        print(f"\n### {threads} thread(s): load average {before} before, {load()} after\n")
        print(
            "| tool | whole run s (median) | words/s per core | GFLOP/s per core | of peak | analogy | WS353 | SimLex |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for tool, rs in runs.items():
            sec = statistics.median(r[0] for r in rs)
            mean = {k: float(np.mean([r[1][k] for r in rs])) for k in rs[0][1]}
            results[threads, tool] = (sec, mean)
            gflops = flop / sec / threads / 1e9
            print(
                f"| {tool} | {sec:.2f} | {n_tokens * epochs / sec / threads / 1e3:,.0f}k | {gflops:.1f} | "
                f"{gflops / peak:.0%} | {mean['analogy']:.3f} | {mean['ws353']:.3f} | {mean['simlex']:.3f} |"
            )
    required_speed = {  # (threads, anchor, rowbook's speed-up at least)
        "skipgram": [
            (1, "word2vec.c", 2.0),
            (1, "pWord2Vec", 1.5),
            (2, "gensim (corpus_file)", 3.0),
            (2, "pWord2Vec", 1.5),
        ],
        "cbow": [(2, "gensim (corpus_file)", 2.5)],
    }[arch]
    for threads, anchor, required in required_speed:
        if (threads, anchor) in results:
            ratio = results[threads, anchor][0] / results[threads, "rowbook batched"][0]
            targets.append(
                (f"{threads} thread(s): rowbook batched speed / {anchor}", ratio, required)
            )
    for threads in (1, 2):
        if (threads, "gensim (corpus_file)") in results:
            g = results[threads, "gensim (corpus_file)"][1]
            r = results[threads, "rowbook batched"][1]
            targets += [
                (f"{threads} thread(s): {k} rowbook batched - gensim", r[k] - g[k], -0.02)
                for k in g
            ]
    if args.kernels:
        if arch == "skipgram":
            blas_or_loops()
        batches = tuple(int(b) for b in args.cbow_batches.split(",") if b)
        shared = tuple(int(b) for b in args.shared.split(",") if b)
        kernel_flops(sentences, arch=arch, batches=batches, shared=shared)
        if not args.quick:  # a second kind of text: tweets, short lines
            tweets = healthtweets_tokens()
            kernel_flops(
                tweets, dims=(100,), name="health tweets", arch=arch, batches=batches, shared=shared
            )
    if args.peak:
        measured_peak()
    if args.hot_rows:
        hot_rows(sentences)
    if args.quality:
        targets += kernel_quality(arch=arch)
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
