"""Quantised and mapped tables: what the bytes cost, re-ranked queries, opening big files.

Three parts, one run:

1. **Quality at a size.** On 1,000,000 x 300 generated vectors
   (:func:`rowbook.data.synthetic_vectors.clustered_vectors`: a common direction, topics,
   sub-topics and a row's own part in one anisotropic basis, Zipf-spread, log-normal
   norms) and on word2vec vectors trained on NewsArticles (the parameters of
   ``bench_word2vec.py``, d=100, 19k words): bytes, recall@10 (500 random keys, their exact
   top 10 by cosine, the key itself left out) and, for the words, the change of analogy
   accuracy (gensim's questions-words) and WordSim353 Spearman, for int8 and for product
   quantisation at 1/10, 1/20 and 1/40 of the float32 bytes, beside faiss's
   ``ProductQuantizer`` with the same sub-spaces and bits (where ``d`` is not a multiple
   of M, faiss gets the rows zero-padded so that its equal sub-spaces hold the same
   coordinates as rowbook's). faiss is scored as its own search scores (inner product with
   the decoded rows) and by the cosine of its decoded rows.
2. **Re-ranked queries** on the 1M table, each in a fresh process: the float table read
   into memory and scanned exactly, against the quantised table (codes in memory) linked
   to the float file, its 100 best candidates re-scored exactly from that file: median
   query time, recall@10, resident memory (VmRSS) above the process's baseline.
3. **Opening** the 1M table, each in a fresh process: rowbook's ``.npz`` mapped, the
   word2vec binary through the mapped cache (first run converts, later runs map), gensim's
   ``KeyedVectors.load(..., mmap="r")`` of its own file and gensim's
   ``load_word2vec_format``: time to the first ``most_similar`` and memory before and after.

    python benchmarks/bench_quantize.py           # the sizes above (30-60 minutes on 2 idle cores,
                                                  # ~6 GB disk; several times that on a busy machine)
    python benchmarks/bench_quantize.py --quick   # 20,000 rows, a few hundred news documents
    python benchmarks/bench_quantize.py --rows 200000 --parts quality   # one part, scaled
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_word2vec import GENSIM_LR, PARAMS
from benchmarks.corpora import cache_dir, newsarticles_tokens
from benchmarks.timing import machine, print_targets
from rowbook.data.synthetic_vectors import clustered_vectors
from rowbook.vectors import Vectors
from rowbook.vectors.quantize.cost import nearest, recall
from rowbook.vectors.quantize.pq import ProductQuantizer

W2V = {**PARAMS, "seed": 0, "lr": GENSIM_LR}  # bench_word2vec.py's settings
SIZES = (10, 20, 40)  # pq at 1/10, 1/20, 1/40 of the float32 bytes
QUERIES = 500


def _test_data() -> dict[str, str]:
    from gensim.test.utils import datapath

    return {"analogies": datapath("questions-words.txt"), "ws353": datapath("wordsim353.tsv")}


def news_vectors(quick: bool) -> Vectors:
    """word2vec on NewsArticles (trained once, then kept in the benchmark cache)."""
    from rowbook.models import Word2Vec

    path = cache_dir() / f"news-word2vec-{'quick' if quick else 'full'}-{W2V['vector_size']}.npz"
    if not path.exists():
        tokens = newsarticles_tokens()[: 300 if quick else None]
        Word2Vec(**{**W2V, "min_count": 2 if quick else 5}).fit(tokens).vectors.save(path)
    return Vectors.load(path)


# -- 1. quality at a size ---------------------------------------------------------------------


def faiss_scores(table: Vectors, m: int, rows: np.ndarray) -> tuple[float, float, Vectors, float]:
    """faiss's PQ with rowbook's sub-spaces: recall by its inner product and by cosine, the
    decoded table, the training time."""
    import faiss

    faiss.omp_set_num_threads(1)  # as rowbook's kernels: one thread each
    widths = ProductQuantizer(m=m)._split(table.vector_size)
    wide = max(widths)
    starts = np.cumsum((0, *widths[:-1]))
    gather = np.concatenate(
        [
            np.where(np.arange(wide) < w, s + np.arange(wide), -1)
            for s, w in zip(starts, widths, strict=True)
        ]
    )
    unit = table.get_normed_vectors()
    if len(set(widths)) == 1:
        padded = unit  # faiss's own split is rowbook's
    else:  # zero columns where rowbook's sub-space is one narrower: the same coordinates each
        padded = np.zeros((len(unit), len(gather)), dtype=np.float32)  # (V, m * wide)
        padded[:, gather >= 0] = unit[:, gather[gather >= 0]]
    start = time.perf_counter()
    pq = faiss.ProductQuantizer(padded.shape[1], m, 8)
    pq.train(padded)
    codes = pq.compute_codes(padded)
    seconds = time.perf_counter() - start
    del padded
    decoded = np.ascontiguousarray(pq.decode(codes)[:, gather >= 0])  # (V, d) rowbook's coordinates
    decoded_table = Vectors(table.index_to_key, decoded, copy=False)
    truth = nearest(table, table, rows, 10)
    found_ip = []
    for block in np.array_split(rows, max(1, len(rows) // 16)):
        scores = unit[block] @ decoded.T
        scores[np.arange(len(block)), block] = -np.inf
        found_ip += np.argsort(-scores, axis=1)[:, :10].tolist()
    by_cosine = recall(nearest(decoded_table, table, rows, 10), truth)
    return recall(found_ip, truth), by_cosine, decoded_table, seconds


def quality(name: str, table: Vectors, words: bool, results: list[dict]) -> None:
    d, rng = table.vector_size, np.random.default_rng(0)
    rows = np.sort(rng.choice(len(table), min(QUERIES, len(table)), replace=False))
    truth = nearest(table, table, rows, 10)
    data = _test_data() if words else {}
    base = evaluations(table, data)
    for method, size in [("int8", None)] + [("pq", s) for s in SIZES]:
        m = None if size is None else max(1, round(4 * d / size))
        start = time.perf_counter()
        small = table.quantize(method, m=m, verbose=False)
        seconds = time.perf_counter() - start
        row = {
            "dataset": name,
            "method": method if m is None else f"pq 1/{size} (m={m})",
            "bytes": small.matrix.nbytes / len(table),
            "float": 4 * d,
            "recall": recall(nearest(small, table, rows, 10), truth),
            "seconds": seconds,
            **deltas(base, evaluations(small, data)),
        }
        if m is not None:
            ip, cos, decoded, f_seconds = faiss_scores(table, m, rows)
            row.update(
                faiss_ip=ip,
                faiss_cos=cos,
                faiss_seconds=f_seconds,
                **{f"faiss_{k}": v for k, v in deltas(base, evaluations(decoded, data)).items()},
            )
        results.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)


def evaluations(table: Vectors, data: dict[str, str]) -> dict[str, float]:
    if not data:
        return {}
    return {
        "analogy": table.evaluate_analogies(data["analogies"])[0],
        "ws353": table.evaluate_word_pairs(data["ws353"])[1][0],
    }


def deltas(base: dict[str, float], new: dict[str, float]) -> dict[str, float]:
    return {f"d_{k}": new[k] - base[k] for k in base}


def print_quality(results: list[dict]) -> None:
    print("\n### Bytes and answers, rowbook beside faiss's ProductQuantizer at the same bytes\n")
    print(
        "| table | method | bytes/row (1/x) | recall@10 | faiss recall@10 (inner product / cosine) "
        "| analogy change (faiss) | WordSim353 change (faiss) | quantise s (faiss s) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        faiss = f"{r['faiss_ip']:.3f} / {r['faiss_cos']:.3f}" if "faiss_ip" in r else "-"

        def change(key: str, r: dict = r) -> str:
            if f"d_{key}" not in r:
                return "-"
            other = f" ({r[f'faiss_d_{key}']:+.4f})" if f"faiss_d_{key}" in r else ""
            return f"{r[f'd_{key}']:+.4f}{other}"

        seconds = f"{r['seconds']:.0f}" + (
            f" ({r['faiss_seconds']:.0f})" if "faiss_seconds" in r else ""
        )
        print(
            f"| {r['dataset']} | {r['method']} | {r['bytes']:.1f} (1/{r['float'] / r['bytes']:.1f}) "
            f"| {r['recall']:.3f} | {faiss} | {change('analogy')} | {change('ws353')} | {seconds} |"
        )


# -- 2 and 3: fresh processes -------------------------------------------------------------------

CHILD_PRELUDE = """
import json, sys, time
import numpy as np
def memory():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {k: int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "RssAnon", "RssFile")}
import rowbook.vectors, rowbook.vectors.quantize  # imports before the baseline
_ = np.ones((64, 64), np.float32) @ np.ones(64, np.float32)
base = memory()
"""

QUERY_CHILD = (
    CHILD_PRELUDE
    + """
from rowbook.vectors import Vectors
path, keys = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
table = Vectors.load(path)
opened = time.perf_counter() - start
table.fill_norms()
answers, times = [], []
for key in keys:
    start = time.perf_counter()
    answers.append([k for k, _ in table.most_similar(key, topn=10)])
    times.append(time.perf_counter() - start)
after = memory()
print(json.dumps({"open": opened, "ms": 1e3 * float(np.median(times[3:])), "answers": answers,
                  "memory": {k: after[k] - base[k] for k in after}}))
"""
)

OPEN_CHILD = (
    CHILD_PRELUDE
    + """
how, path, key = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
if how == "rowbook npz mapped":
    from rowbook.vectors import Vectors
    table = Vectors.load(path, mmap=True)
elif how == "rowbook word2vec binary, mapped cache":
    from rowbook.vectors import Vectors
    table = Vectors.load_word2vec_format(path, binary=True, mmap=True, cache_dir=sys.argv[4])
elif how == "gensim load(mmap='r')":
    from gensim.models import KeyedVectors
    table = KeyedVectors.load(path, mmap="r")
else:
    from gensim.models import KeyedVectors
    table = KeyedVectors.load_word2vec_format(path, binary=True)
opened, before = time.perf_counter() - start, memory()
first = table.most_similar(key, topn=10)
answered, after = time.perf_counter() - start, memory()
start = time.perf_counter()
table.most_similar(key, topn=10)
print(json.dumps({"open": opened, "first": answered, "second": time.perf_counter() - start,
                  "before": {k: before[k] - base[k] for k in before},
                  "after": {k: after[k] - base[k] for k in after}, "answer": [k for k, _ in first]}))
"""
)


def child(script: str, *args: str) -> dict:
    print(f"{time.strftime('%H:%M:%S')} child: {' '.join(map(str, args))[:120]}", file=sys.stderr)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def reranked(table: Vectors, folder: Path, size: int, rerank: int = 100) -> dict:
    """The float table scanned in memory against the quantised one re-ranked from the file."""
    float_path, small_path = folder / "float.npz", folder / f"pq{size}.npz"
    if not float_path.exists():
        table.save(float_path)
    m = round(4 * table.vector_size / size)
    mapped = Vectors.load(float_path, mmap=True)
    mapped.quantize("pq", m=m, rerank=rerank, verbose=False).save(small_path)
    del mapped
    rng = np.random.default_rng(1)
    keys = [table.index_to_key[i] for i in rng.choice(len(table), 53, replace=False)]
    exact = child(QUERY_CHILD, float_path, json.dumps(keys))
    small = child(QUERY_CHILD, small_path, json.dumps(keys))
    hits = [
        len(set(a) & set(b)) / 10 for a, b in zip(small["answers"], exact["answers"], strict=True)
    ]
    return {
        "size": size,
        "m": m,
        "exact": exact,
        "small": small,
        "recall": float(np.mean(hits)),
        "table_bytes": 4 * len(table) * table.vector_size,
    }


def opening(table: Vectors, folder: Path) -> dict[str, dict]:
    """Time to the first most_similar and memory, four ways, each in a fresh process."""
    from gensim.models import KeyedVectors

    npz, binary, native = folder / "float.npz", folder / "float.bin", folder / "gensim.kv"
    if not npz.exists():
        table.save(npz)
    table.save_word2vec_format(binary, binary=True)
    kv = KeyedVectors(table.vector_size)
    kv.add_vectors(list(table.index_to_key), np.asarray(table.vectors))
    kv.save(str(native))
    del kv
    key, caches = table.index_to_key[17], folder / "caches"
    return {
        "rowbook npz mapped": child(OPEN_CHILD, "rowbook npz mapped", npz, key),
        "rowbook word2vec binary, mapped cache (converting)": child(
            OPEN_CHILD, "rowbook word2vec binary, mapped cache", binary, key, caches
        ),
        "rowbook word2vec binary, mapped cache": child(
            OPEN_CHILD, "rowbook word2vec binary, mapped cache", binary, key, caches
        ),
        "gensim load(mmap='r')": child(OPEN_CHILD, "gensim load(mmap='r')", native, key),
        "gensim load_word2vec_format": child(
            OPEN_CHILD, "gensim load_word2vec_format", binary, key
        ),
    }


def print_reranked(results: list[dict], n: int) -> None:
    print(
        f"\n### Re-ranked queries on the {n:,} x 300 table "
        "(fresh processes; memory above the baseline)\n"
    )
    print(
        "| query | median ms | recall@10 | VmRSS MB (anonymous + file pages) | share of the float table |"
    )
    print("|---|---:|---:|---:|---:|")
    for r in results:
        for label, part, rec in (
            ("float table in memory, exact scan", r["exact"], 1.0),
            (
                f"pq 1/{r['size']} (m={r['m']}) codes + 100 re-ranked from the file",
                r["small"],
                r["recall"],
            ),
        ):
            mem = part["memory"]
            print(
                f"| {label} | {part['ms']:.1f} | {rec:.3f} | {mem['VmRSS'] / 1e6:.0f} "
                f"({mem['RssAnon'] / 1e6:.0f} + {mem['RssFile'] / 1e6:.0f}) "
                f"| {mem['VmRSS'] / r['table_bytes']:.2f} |"
            )


def print_opening(results: dict[str, dict], table_bytes: int) -> None:
    print(
        f"\n### Opening the {table_bytes // 1200:,} x 300 table "
        "(fresh processes; memory above the baseline)\n"
    )
    print(
        "| how | open s | first most_similar s | second s | VmRSS MB before queries | after the first |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for how, r in results.items():
        print(
            f"| {how} | {r['open']:.2f} | {r['first']:.2f} | {r['second']:.3f} | "
            f"{r['before']['VmRSS'] / 1e6:.0f} ({r['before']['VmRSS'] / table_bytes:.2f} of the table) "
            f"| {r['after']['VmRSS'] / 1e6:.0f} |"
        )


PARTS = ("quality", "rerank", "opening")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help="rows of the generated table (default 1,000,000; 20,000 with --quick)",
    )
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="the parts to run (default: all three), each with its targets",
    )
    args = parser.parse_args(argv)
    n = args.rows or (20_000 if args.quick else 1_000_000)
    print(f"{machine()}; {n:,} x 300 generated rows; faiss and rowbook kernels on one thread\n")
    synthetic = Vectors([f"w{i}" for i in range(n)], clustered_vectors(n, 300, seed=0), copy=False)
    targets: list[tuple[str, float, float]] = []
    if "quality" in args.parts:
        news = news_vectors(args.quick)
        results: list[dict] = []
        quality(f"generated {n // 1000}k x 300", synthetic, False, results)
        name = f"NewsArticles word2vec {len(news) // 1000}k x {news.vector_size}"
        quality(name, news, True, results)
        print_quality(results)
        pq = [r for r in results if "faiss_ip" in r]
        targets += [
            (
                "pq recall@10 / faiss's (its inner product), worst size",
                min(r["recall"] / r["faiss_ip"] for r in pq),
                1.0,
            ),
            (
                "pq recall@10 / faiss's decoded rows by cosine, worst size",
                min(r["recall"] / r["faiss_cos"] for r in pq),
                1.0,
            ),
            (
                "int8 recall@10, worst table",
                min(r["recall"] for r in results if r["method"] == "int8"),
                0.98,
            ),
        ]
    with tempfile.TemporaryDirectory(dir=cache_dir()) as folder:
        folder = Path(folder)
        if "rerank" in args.parts:
            ranked = [reranked(synthetic, folder, size) for size in (20, 40)]
            print_reranked(ranked, n)
            best = max(ranked, key=lambda r: (r["recall"] >= 0.95, -r["small"]["memory"]["VmRSS"]))
            targets += [
                (f"re-ranked recall@10 (pq 1/{best['size']})", best["recall"], 0.95),
                (
                    "float table bytes / re-ranked VmRSS",
                    best["table_bytes"] / best["small"]["memory"]["VmRSS"],
                    5.0,
                ),
                (
                    "float exact scan ms / re-ranked query ms",
                    best["exact"]["ms"] / best["small"]["ms"],
                    1.0,
                ),
            ]
        if "opening" in args.parts:
            table_bytes = 4 * n * 300
            opened = opening(synthetic, folder)
            print_opening(opened, table_bytes)
            mapped, gensim = opened["rowbook npz mapped"], opened["gensim load_word2vec_format"]
            targets += [
                (
                    "gensim load_word2vec_format / rowbook mapped: time to first answer",
                    gensim["first"] / mapped["first"],
                    10.0,
                ),
                (
                    "table bytes / mapped VmRSS before queries",
                    table_bytes / mapped["before"]["VmRSS"],
                    4.0,
                ),
            ]
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
