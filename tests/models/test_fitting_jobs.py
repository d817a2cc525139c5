"""The Hogwild job runner: every job once, every result reported, errors stop it cleanly."""

from __future__ import annotations

import threading
import time

import pytest

from rowbook.models.word_vectors.jobs import run_jobs


@pytest.mark.parametrize("workers", [1, 2, 5])
def test_every_job_runs_once_and_is_reported_with_its_result(workers):
    ran, reported = [], {}

    def job(j):
        ran.append(j)
        time.sleep(0.001 * (j % 3))  # uneven jobs finish out of order
        return j * j

    run_jobs(40, workers, job, reported.__setitem__, poll_seconds=0.01)
    assert sorted(ran) == list(range(40))
    assert reported == {j: j * j for j in range(40)}


def test_one_worker_reports_in_job_order_in_this_thread():
    order, threads = [], set()
    run_jobs(6, 1, lambda j: threads.add(threading.get_ident()) or j, lambda j, r: order.append(j))
    assert order == list(range(6)) and threads == {threading.get_ident()}


def test_the_calling_thread_reports_without_being_woken_per_job():
    reporters = set()
    run_jobs(
        20, 3, lambda j: j, lambda j, r: reporters.add(threading.get_ident()), poll_seconds=0.01
    )
    assert reporters == {threading.get_ident()}


def test_an_error_in_a_job_stops_the_others_and_is_raised_here():
    ran = []

    def job(j):
        ran.append(j)
        if j == 3:
            raise ValueError("job 3 failed")
        time.sleep(0.002)
        return j

    before = threading.active_count()
    with pytest.raises(ValueError, match="job 3 failed"):
        run_jobs(1000, 2, job, lambda j, r: None, poll_seconds=0.01)
    assert len(ran) < 1000  # the remaining jobs were not started
    assert threading.active_count() == before  # the workers were joined


def test_an_error_in_report_waits_for_the_jobs_in_flight():
    running = threading.Event()

    def job(j):
        running.set()
        time.sleep(0.005)
        return j

    def report(j, r):
        raise KeyError("stop")

    before = threading.active_count()
    with pytest.raises(KeyError, match="stop"):
        run_jobs(500, 2, job, report, poll_seconds=0.01)
    assert running.is_set() and threading.active_count() == before  # the workers were joined
