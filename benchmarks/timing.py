"""Shared timing and table helpers for the benchmarks: medians, ratios, markdown."""

from __future__ import annotations

import gc
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Row",
    "interleaved_medians_ms",
    "interleaved_times_ms",
    "machine",
    "median_ms",
    "print_table",
    "print_targets",
    "realtime",
    "zipf_ids",
]


def median_ms(fn: Callable[[], object], *, repeat: int = 15, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` in milliseconds (garbage collection paused while timing)."""
    for _ in range(warmup):
        fn()
    times = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return float(np.median(times)) * 1e3


def interleaved_times_ms(
    fns: dict[str, Callable[[], object]],
    *,
    repeat: int = 7,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, np.ndarray]:
    """Each of ``fns``' wall times in ms, the functions run in turn in every repetition, so
    that a change of load on a shared machine reaches all of them alike (garbage collection
    paused). ``clock=time.process_time`` times the CPU the process received instead: steadier
    than wall time for one-threaded work on a busy machine."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in fns.items():
                start = clock()
                fn()
                times[name].append(clock() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: np.array(t) * 1e3 for name, t in times.items()}


def interleaved_medians_ms(
    fns: dict[str, Callable[[], object]], *, repeat: int = 7, warmup: int = 1
) -> dict[str, float]:
    """Median of :func:`interleaved_times_ms` for each function."""
    times = interleaved_times_ms(fns, repeat=repeat, warmup=warmup)
    return {name: float(np.median(t)) for name, t in times.items()}


def zipf_ids(n: int, vocab: int, rng: np.random.Generator, a: float = 1.2) -> np.ndarray:
    """``n`` ids in ``[0, vocab)`` from a Zipf(a) law: id 0 is the most frequent."""
    out = np.empty(0, dtype=np.int64)
    while out.size < n:
        draw = rng.zipf(a, 2 * n) - 1
        out = np.concatenate([out, draw[draw < vocab]])
    return out[:n].astype(np.int64)


@dataclass
class Row:
    """One line of a benchmark table: a measurement and the reference it is compared with."""

    group: str
    name: str
    ms: float
    note: str = ""


def machine() -> str:
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from rowbook._threads import usable_cores

    cores, usable = os.cpu_count(), usable_cores()
    cores = f"{cores} cores" + (f" ({usable} this process may use)" if usable != cores else "")
    return f"{cpu}, {cores}, Python {platform.python_version()}, NumPy {np.__version__}"


def realtime(priority: int = 10) -> bool:
    """Run this process under ``SCHED_FIFO`` from here on, where the system allows it (Linux,
    root or ``CAP_SYS_NICE``): its threads, and the threads and processes it starts, then run
    before every ordinary process, so a benchmark on a machine that other work shares times
    what an idle one gives. Returns whether it was allowed.

    The kernel keeps 5% of each second for the others (``sched_rt_runtime_us``), so a
    runaway benchmark cannot lock the machine. On this 2-core VM, with helpers' tests on both
    cores (load 2-3), the classifier's defaults under it gave every core / one worker on the
    mail 1.08 and jobs of 100,000 / 10,000 1.02, against 1.01-1.18 and 0.91-0.96 in earlier
    runs on the idle machine without it.
    """
    import os

    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (AttributeError, OSError):  # not Linux, or not allowed
        return False
    return True


def print_table(title: str, rows: list[Row], subject: dict[str, str]) -> None:
    """Print rows as markdown; ``subject[group]`` names the row (rowbook's) that the others
    in its group are compared with. The ratio is ``row time / subject time``: a value above 1
    means rowbook is that many times faster than the row.
    """
    print(f"\n### {title}\n")
    print("| group | operation | median ms | this / rowbook | note |")
    print("|---|---|---:|---:|---|")
    by_name = {(r.group, r.name): r for r in rows}
    for r in rows:
        ref = by_name.get((r.group, subject.get(r.group, "")))
        ratio = "" if ref is None else "-" if ref is r else f"{r.ms / ref.ms:.2f}"
        print(f"| {r.group} | {r.name} | {r.ms:.2f} | {ratio} | {r.note} |")


def print_targets(targets: list[tuple[str, float, float]]) -> bool:
    """Print ``(description, measured ratio, required ratio)`` rows; True when all are met."""
    print("\n| target | measured | required | met |")
    print("|---|---:|---:|---|")
    ok = True
    for text, measured, required in targets:
        met = measured >= required
        ok &= met
        print(f"| {text} | {measured:.2f} | {required:.2f} | {'yes' if met else 'NO'} |")
    return ok
