"""usable_cores: the cores the process may use, which ``workers=None`` follows;
serial_below: a small kernel on one thread gives the numbers its parallel run gives;
side_by_side: every task run, errors raised, the new thread off the caller's core."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import rowbook._threads
from rowbook.nn.loss_kernels import lse_rows, softmax_minus_target
from rowbook.optim.adam_kernels import adam_dense

ROOT = Path(__file__).resolve().parent.parent


def _kernels(rng: np.random.Generator) -> list[np.ndarray]:
    z = rng.standard_normal((300, 1001)).astype(np.float32)
    ids = rng.integers(0, 1001, 300)
    lse, loss = lse_rows(z, ids)
    grad = softmax_minus_target(z, ids, lse, np.full(300, 1 / 300, np.float32))
    p, g = rng.standard_normal((2, 1 << 17)).astype(np.float32)
    m, v = np.zeros_like(p), np.zeros_like(p)
    for step in (1, 2, 3):
        adam_dense(
            p,
            g,
            m,
            v,
            None,
            step=step,
            lr=1e-2,
            beta1=0.9,
            beta2=0.999,
            eps=1e-8,
            weight_decay=0.01,
            decoupled=True,
        )
    return [lse, loss, grad, p, m, v]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_workers_none_follows_the_cores_the_process_may_use():
    """A process held to one core (as by ``taskset -c 0`` or a container's cpuset) counts
    one, however many the machine has, and starts no second thread on it."""
    child = textwrap.dedent(
        """
        import threading
        from rowbook._threads import resolve_workers, usable_cores
        from rowbook.fork_pool import map_in_threads
        threads = set(map_in_threads(lambda _: threading.get_ident(), range(8), workers=4))
        print(usable_cores(), resolve_workers(None), resolve_workers(3), len(threads))
        """
    )
    core = min(os.sched_getaffinity(0))
    out = subprocess.run(
        [sys.executable, "-c", child],
        preexec_fn=lambda: os.sched_setaffinity(0, {core}),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["1", "1", "3", "1"]


def test_usable_cores_is_the_affinity_or_else_the_machine_s(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        assert rowbook._threads.usable_cores() == len(os.sched_getaffinity(0))
        monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert rowbook._threads.usable_cores() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert rowbook._threads.usable_cores() == rowbook._threads.resolve_workers(None) == 6


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_one_thread_and_two_give_the_same_bits(monkeypatch):
    numba.set_num_threads(2)
    serial = _kernels(np.random.default_rng(0))
    monkeypatch.setattr(rowbook._threads, "SERIAL_BELOW", 0)  # every kernel parallel
    parallel = _kernels(np.random.default_rng(0))
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_thread_count_comes_back():
    before = numba.get_num_threads()
    with rowbook._threads.serial_below(10):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with rowbook._threads.serial_below(10, threshold=5):
        assert numba.get_num_threads() == before


def test_side_by_side_runs_every_task_and_raises_a_thread_s_error():
    done = []
    rowbook._threads.side_by_side(lambda a, b: done.append(a * b), [(1, 2), (3, 4), (5, 6)])
    assert sorted(done) == [2, 12, 30]

    def job(fail: bool) -> None:
        if fail:
            raise ValueError("the thread's task")

    with pytest.raises(ValueError, match="the thread's task"):
        rowbook._threads.side_by_side(job, [(False,), (True,)])


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs two cores this process may pin threads to",
)
def test_side_by_side_starts_the_new_thread_off_the_caller_s_core(monkeypatch):
    """Left to the scheduler, the new thread often began on the caller's core and waited
    there while the other idled; it runs held to another core, the caller's mask kept."""
    before = os.sched_getaffinity(0)
    masks, seen = {}, []
    cores = rowbook._threads._cores
    monkeypatch.setattr(rowbook._threads, "_cores", lambda: seen.append(cores()) or seen[-1])

    def job(who: str) -> None:
        masks[who] = os.sched_getaffinity(0)

    rowbook._threads.side_by_side(job, [("caller",), ("new",)])
    ((allowed, caller_core),) = seen
    assert masks["caller"] == before == allowed == os.sched_getaffinity(0)
    assert len(masks["new"]) == 1 and caller_core not in masks["new"] <= allowed
