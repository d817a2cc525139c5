"""Past RAM: fixed costs, peak memory of word2vec reading as the corpus grows, out-of-core GloVe counting, big tables.

Every figure is the peak resident memory (``VmHWM``) of a fresh child process, so runs do
not see each other's allocations; the corpus is NewsArticles repeated (``--copies``) and
written once to a cache file, read as a file by both tools.

0. Fixed costs of word2vec on NewsArticles x 1 (12.8 MB, 2.1M tokens; 1 epoch, skip-gram,
   d=100, min_count 5, 2 workers): ``Word2Vec(...).fit(path)``, ``rowbook train word2vec``
   (its default word tokenizer) and gensim on ``LineSentence``, each in a fresh
   interpreter, medians of ``--repeats`` runs: seconds from the process's launch to the
   end of the imports, of reading and counting the corpus, of building the tables and of
   the first trained job (the first trained words); resident memory after the imports,
   at the peak, and at the peak minus the tables (``W_in`` and ``W_out``, V x d x 4 bytes
   each). The stages are timed by wrapping each tool's own functions in the child.
1. word2vec, 1 epoch, skip-gram, d=100, 2 workers: rowbook with the id stream in RAM, rowbook
   with ``spill_dir`` (ids on disk, read job by job), gensim streaming ``LineSentence``, at
   the corpus and at 4x the corpus. Target: rowbook (spilled) peak <= gensim's peak + the
   tables + 100 MB, and flat (within 10%) as the corpus grows 4x.
2. GloVe co-occurrence counting (window 10): in RAM and under ``memory=0.25`` GB, time and
   peak, on the 4x corpus; and glove.c's ``demo.sh`` setting (window 15, ``-memory 4``) on a
   generated corpus shaped like its text8 (:func:`text8_like_file`). glove.c is not packaged
   for this machine and text8 is not on a package registry, so glove.c's figures on text8
   (35 s and 2.0 GB, 91M non-zeros, measured on this machine when the work was planned) are
   quoted, not re-measured.
3. ``Embedding(V, 64)`` construction and 30 SparseAdam steps of 4,096 random ids on it
   (V = 20M, a 4.9 GB table): peak against the table's own size (1x is the floor). The
   moments are resident only for the pages of touched rows (4 KB: 16 rows of 64 floats), so
   the state stays small while touched rows are few against the table's pages.

    python benchmarks/bench_scale.py            # NewsArticles x 9 and x 36 (19M and 78M tokens)
    python benchmarks/bench_scale.py --quick    # x 1 and x 4, small tables: a smoke test
    python benchmarks/bench_scale.py --fixed-costs-only
    python benchmarks/bench_scale.py --defaults-only                  # x 1, x 4, x 36
    python benchmarks/bench_scale.py --defaults-only --default-copies 1 4

``--defaults-only``: word2vec as a new user runs it, ``Word2Vec(...).fit(path)`` with no
option (the id stream spills to disk by itself when the corpus's ids would take more than
1/256 of the available memory), beside gensim streaming ``LineSentence``, at NewsArticles
x 1, x 4 and x 36 (2.1M, 8.6M and 78M tokens): peak memory, seconds, and whether the
default spilled.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpora import cache_dir, newsarticles_tokens
from benchmarks.timing import machine, print_targets

_PREAMBLE = """
import sys, time
def vm_hwm_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
"""


def child(code: str, *args: str) -> tuple[float, float]:
    """(peak MB, seconds) printed by ``code`` run in a fresh interpreter."""
    peak, seconds = child_output(code, *args).split()[-2:]
    return float(peak), float(seconds)


def child_output(code: str, *args: str) -> str:
    """What ``code`` prints in a fresh interpreter, then its peak MB and ``seconds``."""
    script = _PREAMBLE + textwrap.dedent(code) + "\nprint(vm_hwm_mb(), seconds)\n"
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    return out.stdout


def text8_like_file() -> Path:
    """A generated corpus shaped like text8, the corpus of glove.c's ``demo.sh``: 17,005,207
    tokens drawn from a Zipf-Mandelbrot law (exponent 1.3, offset 5) fitted so that about
    71,000 words occur 5 times or more (text8: 71,290) and the commonest word is 5% of the
    tokens (text8's "the": 6%), in lines of 1,000 tokens."""
    path = cache_dir() / "text8_like.txt"
    if not path.exists():
        rng = np.random.default_rng(0)
        ranks = np.arange(1, 3_000_001)
        p = 1.0 / (ranks + 5.0) ** 1.3
        ids = rng.choice(len(ranks), size=17_005_207, p=p / p.sum())
        words = np.char.add("w", ids.astype("U7"))
        with open(path, "w", encoding="utf-8") as f:
            for i in range(0, len(words), 1000):
                f.write(" ".join(words[i : i + 1000].tolist()) + "\n")
    return path


def corpus_file(copies: int) -> Path:
    path = cache_dir() / f"newsarticles_x{copies}.txt"
    if not path.exists():
        lines = "\n".join(" ".join(doc) for doc in newsarticles_tokens()) + "\n"
        path.write_text(lines * copies, encoding="utf-8")
    return path


W2V = """
from rowbook import Word2Vec
path, spill = sys.argv[1], sys.argv[2]
t = time.perf_counter()
m = Word2Vec(vector_size=100, window=5, min_count=5, epochs=1, workers=2).fit(
    path, spill_dir=False if spill == "-" else spill)
seconds = time.perf_counter() - t
"""

W2V_DEFAULT = """
import warnings
from rowbook import Word2Vec
path = sys.argv[1]
t = time.perf_counter()
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    m = Word2Vec(vector_size=100, window=5, min_count=5, epochs=1, workers=2).fit(path)
seconds = time.perf_counter() - t
print("spilled" if any("spill" in str(w.message) for w in said) else "in-RAM")
"""

GENSIM = """
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence
path = sys.argv[1]
t = time.perf_counter()
m = Word2Vec(LineSentence(path), vector_size=100, window=5, min_count=5, epochs=1, workers=2, sg=1)
seconds = time.perf_counter() - t
"""

COOCCUR = """
from rowbook.data import count_cooccurrences, read_corpus
path, budget, window = sys.argv[1], sys.argv[2], int(sys.argv[3])
spill = None if budget == "-" else sys.argv[4]  # under a budget the ids stay on disk too
vocab, enc = read_corpus(path, min_count=5, ties="alphabetical", spill_dir=spill)
t = time.perf_counter()
nnz = sum(b.nnz for b in count_cooccurrences(enc, len(vocab), window,
          memory=None if budget == "-" else int(float(budget) * 2**30)))
seconds = time.perf_counter() - t
print(nnz)
"""

TABLE = """
import numpy as np
from rowbook.nn import Embedding
from rowbook.optim import SparseAdam
V, batch = int(sys.argv[1]), int(sys.argv[2])
t = time.perf_counter()
emb = Embedding(V, 64, sparse=True, rng=0)
opt = SparseAdam(emb.parameters(), lr=0.01)
rng = np.random.default_rng(0)
for _ in range(30):
    opt.zero_grad()
    emb(rng.integers(0, V, batch)).sum().backward()
    opt.step()
seconds = time.perf_counter() - t
"""


_STAGES = """
T0 = time.time()
marks = {}
def rss_mb(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(key)) / 1024
def wrap(owner, name, stage):
    def wrapped(*args, _f=getattr(owner, name), **kwargs):
        result = _f(*args, **kwargs)
        marks.setdefault(stage, time.time())
        return result
    setattr(owner, name, wrapped)
"""
W2V_API = """
from rowbook import Word2Vec
import rowbook.models.word_vectors.base as family
import rowbook.models.word_vectors.job_args as job_args
marks["import"], marks["rss_import"] = time.time(), rss_mb("VmRSS")
wrap(family, "read_corpus", "read"); wrap(Word2Vec, "_new_state", "tables"); wrap(job_args, "word2vec_train_job", "job")
m = Word2Vec(vector_size=100, window=5, min_count=5, epochs=1, workers=2, progress=False).fit(sys.argv[1])
marks["V"] = len(m.index_to_key_)
"""
W2V_CLI = """
import rowbook.cli
import rowbook.models.word_vectors.base as family
import rowbook.models.word_vectors.job_args as job_args
marks["import"], marks["rss_import"] = time.time(), rss_mb("VmRSS")
wrap(family, "read_corpus", "read"); wrap(family.WordVectorModel, "_new_state", "tables"); wrap(job_args, "word2vec_train_job", "job")
assert rowbook.cli.main(["train", "word2vec", sys.argv[1], "-o", sys.argv[2], "--quiet", "--epochs", "1",
                         "--vector-size", "100", "--min-count", "5", "--workers", "2"]) == 0
marks["V"] = len(open(sys.argv[2]).readlines()) - 1
"""
GENSIM_STAGES = """
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence
marks["import"], marks["rss_import"] = time.time(), rss_mb("VmRSS")
wrap(Word2Vec, "scan_vocab", "read"); wrap(Word2Vec, "prepare_weights", "tables"); wrap(Word2Vec, "_do_train_job", "job")
m = Word2Vec(LineSentence(sys.argv[1]), vector_size=100, window=5, min_count=5, epochs=1, workers=2, sg=1)
marks["V"] = len(m.wv.index_to_key)
"""


def stages(code: str, *args: str) -> dict[str, float]:
    """The marks ``code`` (run in a fresh interpreter after :data:`_STAGES`) records, stage
    times counted from the launch of the process, and its peak resident MB."""
    script = "import json\n" + _PREAMBLE + _STAGES + textwrap.dedent(code)
    script += '\nmarks["peak"] = rss_mb("VmHWM")\nprint(json.dumps(marks))\n'
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    marks = json.loads(done.stdout.splitlines()[-1])
    return {
        k: v - start if k in ("import", "read", "tables", "job") else v for k, v in marks.items()
    }


def fixed_costs(path: str, repeats: int) -> None:
    """The fixed-costs table (section 0 of the module docstring)."""
    out = str(Path(tempfile.mkdtemp(prefix="bench-fixed-")) / "vectors.txt")
    print(
        "\n| word2vec, NewsArticles x 1 | import s | read s | tables s | first trained word s "
        "| RSS after import MB | peak MB | tables MB | peak - tables MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, code in [
        ("rowbook Word2Vec.fit", W2V_API),
        ("rowbook train word2vec", W2V_CLI),
        ("gensim Word2Vec", GENSIM_STAGES),
    ]:
        runs = [stages(code, path, out) for _ in range(repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        tables_mb = 2 * med["V"] * 100 * 4 / 2**20
        print(
            f"| {name} | {med['import']:.2f} | {med['read'] - med['import']:.2f} | "
            f"{med['tables'] - med['read']:.2f} | {med['job']:.2f} | {med['rss_import']:.0f} | "
            f"{med['peak']:.0f} | {tables_mb:.0f} | {med['peak'] - tables_mb:.0f} |"
        )
    print(
        "\nimport, first trained word: seconds since the process was launched; read: reading and "
        "counting the corpus (rowbook chooses the vocabulary there too); tables: gensim choosing "
        "its vocabulary, and both allocating the tables. "
        f"Medians of {repeats} runs."
    )


def defaults(copies: list[int], gensim_up_to: int | None = None) -> int:
    """Peak memory of ``Word2Vec(...).fit(path)`` with no option beside gensim's, as the
    corpus grows; the target: rowbook's peak grows by at most 10% from the smallest corpus
    to the largest, as gensim's streaming does."""
    print(
        "\n| word2vec, default options | corpus | tokens | rowbook peak MB | spilled? "
        "| rowbook s | gensim peak MB | gensim s |\n|---|---|---:|---:|---|---:|---:|---:|"
    )
    peaks, once = [], sum(len(doc) for doc in newsarticles_tokens()) / 1e6
    for n in copies:
        path = str(corpus_file(n))
        said, peak, seconds = child_output(W2V_DEFAULT, path).split()[-3:]
        theirs, their_seconds = (
            child(GENSIM, path) if gensim_up_to is None or n <= gensim_up_to else (0.0, 0.0)
        )
        peaks.append(float(peak))
        tokens = n * once
        print(
            f"| 1 epoch, skip-gram, d=100, 2 workers | NewsArticles x {n} | {tokens:.1f}M | "
            f"{float(peak):.0f} | {said} | {float(seconds):.1f} | "
            + (f"{theirs:.0f} | {their_seconds:.1f} |" if theirs else "not run | - |"),
            flush=True,
        )
    ok = print_targets(
        [
            (
                f"default-options peak flat from x {copies[0]} to x {copies[-1]} (1.1 / growth)",
                1.1 / (peaks[-1] / peaks[0]),
                1.0,
            )
        ]
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5, help="runs per fixed-costs row")
    parser.add_argument("--fixed-costs-only", action="store_true", help="section 0 alone")
    parser.add_argument(
        "--defaults-only", action="store_true", help="word2vec with default options alone"
    )
    parser.add_argument(
        "--default-copies",
        type=int,
        nargs="+",
        default=(1, 4, 36),
        help="NewsArticles copies for --defaults-only (default: 1 4 36)",
    )
    parser.add_argument(
        "--gensim-up-to",
        type=int,
        default=None,
        metavar="COPIES",
        help="--defaults-only: run gensim only up to this many copies (its streaming peak is "
        "flat; an hour saved on a loaded machine at x 36)",
    )
    parser.add_argument(
        "--copies",
        type=int,
        nargs=2,
        default=(9, 36),
        metavar=("SMALL", "LARGE"),
        help="NewsArticles copies of the two corpora (default 9 and 36: 19M and 78M tokens)",
    )
    args = parser.parse_args(argv)
    small, large = (1, 4) if args.quick else args.copies
    rows = 2_000_000 if args.quick else 20_000_000
    print(machine())
    if args.defaults_only:
        return defaults(args.default_copies, args.gensim_up_to)
    fixed_costs(str(corpus_file(1)), 1 if args.quick else args.repeats)
    if args.fixed_costs_only:
        return 0
    spill = tempfile.mkdtemp(prefix="bench-spill-")
    print("\n| work | corpus | peak MB | seconds |\n|---|---|---:|---:|")
    peaks = {}
    for copies in (small, large):
        path = str(corpus_file(copies))
        for name, code, extra in [
            ("rowbook word2vec, ids in RAM", W2V, "-"),
            ("rowbook word2vec, spill_dir", W2V, spill),
            ("gensim word2vec, LineSentence", GENSIM, "-"),
        ]:
            peak, seconds = child(code, path, extra)
            peaks[name, copies] = peak
            print(f"| {name} | NewsArticles x {copies} | {peak:.0f} | {seconds:.1f} |")
    path = str(corpus_file(large))
    for name, budget in [
        ("rowbook GloVe counting, in RAM", "-"),
        ("rowbook GloVe counting, memory=0.25 GB", "0.25"),
    ]:
        peak, seconds = child(COOCCUR, path, budget, "10", spill)
        peaks[name, large] = peak
        print(f"| {name} | NewsArticles x {large} | {peak:.0f} | {seconds:.1f} |")
    glove_c = None
    if not args.quick:  # glove.c's demo.sh: text8, window 15, min_count 5, -memory 4
        nnz, peak, glove_c = child_output(
            COOCCUR, str(text8_like_file()), "4", "15", spill
        ).split()[-3:]
        glove_c = float(glove_c)
        print(
            f"| rowbook GloVe counting, memory=4 GB, window 15 | text8-like, 17M tokens, "
            f"{int(nnz) / 1e6:.0f}M non-zeros | {float(peak):.0f} | {glove_c:.1f} |"
        )
        print(
            "| glove.c `cooccur -memory 4 -window-size 15` (figures quoted from the issue) | text8, "
            "17M tokens, 91M non-zeros | 2,000 | 35 |"
        )
    batch = 256 if args.quick else 4096  # touched rows stay a small share of the table's pages
    peak, seconds = child(TABLE, str(rows), str(batch))
    table_mb = rows * 64 * 4 / 2**20
    print(
        f"| Embedding({rows:,}, 64) + 30 SparseAdam steps | table {table_mb:.0f} MB | {peak:.0f} | {seconds:.1f} |"
    )
    counts = Counter(w for doc in newsarticles_tokens() for w in doc)
    V = sum(c * large >= 5 for c in counts.values())  # min_count 5 on the large corpus
    tables_mb = 2 * 100 * 4 * V / 2**20  # W_in + W_out
    print(f"\nvocabulary {V:,} words: W_in + W_out {tables_mb:.0f} MB")
    spilled_small, spilled_large = (
        peaks["rowbook word2vec, spill_dir", small],
        peaks["rowbook word2vec, spill_dir", large],
    )
    gensim_large = peaks["gensim word2vec, LineSentence", large]
    budgeted = peaks["rowbook GloVe counting, memory=0.25 GB", large]
    targets = (
        []
        if glove_c is None
        else [
            (
                "GloVe counting vs glove.c's 35 s on 17M tokens, window 15 (35 s / ours)",
                35.0 / glove_c,
                1.0,
            )
        ]
    )
    ok = print_targets(
        [
            *targets,
            (
                "GloVe counting peak within the 0.25 GB budget + 150 MB of interpreter, NumPy, SciPy "
                "and numba (allowance / peak)",
                (256 + 150) / budgeted,
                1.0,
            ),
            (
                "spilled peak within gensim + tables + 100 MB (ratio of the allowance to the peak)",
                (gensim_large + tables_mb + 100) / spilled_large,
                1.0,
            ),
            (
                "spilled peak flat as the corpus grows 4x (1.1 / growth)",
                1.1 / (spilled_large / spilled_small),
                1.0,
            ),
            (
                "Embedding + SparseAdam peak within 1.6x the table (1.6 x table / peak)",
                1.6 * table_mb / peak,
                1.0,
            ),
        ]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
