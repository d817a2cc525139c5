"""Faults in the middle of out-of-core work: ``kill -9`` while ids spill, while training reads
them, while co-occurrences are counted under a memory budget, while GloVe's records are
shuffled on disk, while a Dask count runs; a full disk (a real, small tmpfs where this
machine allows mounting one); a Dask worker killed mid-count.

Every kill is a ``SIGKILL`` the child sends itself at the N-th call of a function of the
stage (:data:`_CHILD`), N drawn from a seeded generator among the calls an uninterrupted
run makes, so the kill points differ by seed but every run of the suite sees the same ones,
and no test waits on a clock. After each kill the same command is run again: it finishes
with the uninterrupted run's result (with ``--resume`` where training had started), sweeps
what the dead process left, and leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rowbook.data.cooccurrence_file import load_cooccurrence
from rowbook.vectors import Vectors

ROOT = Path(__file__).resolve().parents[1]

#: Run ``rowbook.cli.main(argv)`` with some library functions wrapped to count their calls
#: (written to ``counts`` at exit) and to ``kill -9`` this process at the N-th call of one.
_CHILD = r"""
import atexit, importlib, json, os, signal, sys
plan = json.loads(sys.argv[1])
for module, name, value in plan.get("set", []):
    setattr(importlib.import_module(module), name, value)
calls = {}

def wrap(target, kill_at):
    module, _, path = target.partition(":")
    owner = importlib.import_module(module)
    *owners, name = path.split(".")
    for part in owners:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls[target] = 0

    def wrapped(*args, **kwargs):
        calls[target] += 1
        if calls[target] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(owner, name, wrapped)

for target, kill_at in plan["hooks"].items():
    wrap(target, kill_at)

@atexit.register
def report():
    with open(plan["counts"], "w") as f:
        json.dump(calls, f)

from rowbook.cli import main
sys.exit(main(plan["argv"]))
"""

READ_IDS = "rowbook.data.id_stream:RawIdSink.write"
TRAIN_READS = "rowbook.data.id_stream:IdFile.read"
SAVE = "rowbook._npz:write_members"  # save_state writes its archive with it
COUNT_RUNS = "rowbook.data.cooccurrence_runs:RunCounter._spill"
SHUFFLE = "rowbook.data.shuffle:ColumnFile.write"
SMALL_BLOCKS = [["rowbook.data.id_stream", "BLOCK_TOKENS", 2048]]


def _run(tmp_path: Path, argv: list, hooks: dict, env: dict | None = None, **plan) -> tuple:
    """``(exit status, calls of each hooked function)`` of the command in a child process."""
    counts = tmp_path / "counts.json"
    counts.unlink(missing_ok=True)
    plan = {"argv": [str(a) for a in argv], "hooks": hooks, "counts": str(counts), **plan}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    calls = json.loads(counts.read_text()) if counts.exists() else None
    if done.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"status {done.returncode}: {done.stderr[-3000:]}")
    return done.returncode, calls, done.stderr


def _killed_at(tmp_path, argv, target, at, **plan) -> None:
    status, _, _ = _run(tmp_path, argv, {target: at}, **plan)
    assert status == -signal.SIGKILL, f"{target} was called fewer than {at} times"


def _spill_folders(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("rowbook-", ".rowbook")))


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".new")))


def _corpus(path: Path, lines: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 1501)
    ids = rng.choice(1500, (lines, 40), p=p / p.sum())
    path.write_text("".join(" ".join(f"w{i}" for i in row) + "\n" for row in ids))
    return path


@pytest.mark.parametrize("seed", [1])
def test_kill_9_while_word_ids_spill_and_while_training_reads_them(tmp_path, seed):
    """word2vec with its ids spilled: killed while reading the corpus, while an epoch reads
    the ids back, while a checkpoint is saved; the rerun with --resume ends as the
    uninterrupted run, and no spill folder or temporary file outlives the runs."""
    corpus, spill = _corpus(tmp_path / "corpus.txt", 1500), tmp_path / "spill"
    spill.mkdir()
    common = ["--vector-size", 8, "--min-count", 1, "--epochs", 3, "--workers", 1, "--quiet"]
    common += ["--spill-dir", spill, "--checkpoint", "ck.npz", "--resume"]
    argv = ["train", "word2vec", corpus, "-o", "out.npz", *common]
    hooks = {READ_IDS: 0, TRAIN_READS: 0, SAVE: 0}
    status, calls, _ = _run(tmp_path, [*argv[:4], "expected.npz", *common], hooks, set=SMALL_BLOCKS)
    assert status == 0 and calls[SAVE] == 4  # 3 checkpoints and the model's output
    expected = Vectors.load(tmp_path / "expected.npz")
    (tmp_path / "ck.npz").unlink()
    rng = random.Random(seed)
    reads_per_epoch = calls[TRAIN_READS] // 3

    _killed_at(tmp_path, argv, READ_IDS, rng.randint(1, calls[READ_IDS]), set=SMALL_BLOCKS)
    assert _spill_folders(spill) and not (tmp_path / "ck.npz").exists()
    _killed_at(tmp_path, argv, TRAIN_READS, rng.randint(reads_per_epoch + 1, 2 * reads_per_epoch))
    assert (tmp_path / "ck.npz").exists() and not (tmp_path / "out.npz").exists()
    _killed_at(tmp_path, argv, SAVE, 2)  # in the second checkpoint's write
    assert _temporaries(tmp_path), "the killed save's temporary file is left"
    status, _, _ = _run(tmp_path, argv, {})
    assert status == 0
    got = Vectors.load(tmp_path / "out.npz")
    assert got.index_to_key == expected.index_to_key
    np.testing.assert_array_equal(got.vectors, expected.vectors)
    assert _spill_folders(spill) == [] and _temporaries(tmp_path) == []


@pytest.mark.parametrize("seed", [2])
def test_kill_9_while_counting_under_a_budget_and_while_shuffling_on_disk(tmp_path, seed):
    """GloVe under ``--memory``: killed while counted runs spill, while the shuffle writes
    its runs and records file, while an epoch reads the records; each rerun sweeps the dead
    run's folders, and the last ends with the uninterrupted run's vectors."""
    corpus, spill = _corpus(tmp_path / "corpus.txt", 2500), tmp_path / "spill"
    spill.mkdir()
    common = ["--vector-size", 8, "--min-count", 1, "--window", 5, "--epochs", 2]
    common += ["--workers", 1, "--memory", 0.001, "--spill-dir", spill, "--quiet"]
    common += ["--checkpoint", "ck.npz", "--resume"]
    argv = ["train", "glove", corpus, "-o", "out.npz", *common]
    records = "rowbook.data.shuffle:RecordFile.read"
    hooks = {COUNT_RUNS: 0, SHUFFLE: 0, records: 0}
    status, calls, _ = _run(tmp_path, [*argv[:4], "expected.npz", *common], hooks)
    assert status == 0 and calls[COUNT_RUNS] > 1 and calls[SHUFFLE] > 8, calls
    expected = Vectors.load(tmp_path / "expected.npz")
    (tmp_path / "ck.npz").unlink()
    rng = random.Random(seed)

    _killed_at(tmp_path, argv, COUNT_RUNS, rng.randint(2, calls[COUNT_RUNS]))
    left = _spill_folders(spill)
    assert left
    _killed_at(tmp_path, argv, SHUFFLE, rng.randint(1, calls[SHUFFLE]))
    assert _spill_folders(spill) and not set(left) & set(_spill_folders(spill))
    per_epoch = calls[records] // 2
    _killed_at(tmp_path, argv, records, rng.randint(per_epoch + 1, 2 * per_epoch))
    assert (tmp_path / "ck.npz").exists() and not (tmp_path / "out.npz").exists()
    status, _, _ = _run(tmp_path, argv, {})
    assert status == 0
    np.testing.assert_array_equal(Vectors.load(tmp_path / "out.npz").vectors, expected.vectors)
    assert _spill_folders(spill) == [] and _temporaries(tmp_path) == []


# -- Dask -----------------------------------------------------------------------------------


def test_kill_9_during_a_dask_count_then_the_same_command_writes_the_same_file(tmp_path):
    """``rowbook cooccur --scheduler``: the command killed while the cluster counts, then
    while it writes the counts; no counts file until the rerun, which writes what counting
    here writes."""
    distributed = pytest.importorskip("distributed")
    folder = tmp_path / "shards"
    folder.mkdir()
    for s in range(3):
        _corpus(folder / f"part{s}.txt", 200, seed=s)
    argv = ["cooccur", folder, "--window", 3, "--min-count", 2, "--quiet", "-o"]
    status, _, _ = _run(tmp_path, [*argv, "here.npz"], {})
    assert status == 0
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0"
    ) as cluster:
        there = [*argv, "there.npz", "--scheduler", cluster.scheduler_address]
        _killed_at(tmp_path, there, "distributed:Client.gather", 1)  # the tasks submitted
        _killed_at(tmp_path, there, SAVE, 1)  # counted, in the file's write
        assert not (tmp_path / "there.npz").exists()
        status, _, _ = _run(tmp_path, there, {})
    assert status == 0 and _temporaries(tmp_path) == []
    here, there = (
        load_cooccurrence(tmp_path / "here.npz"),
        load_cooccurrence(tmp_path / "there.npz"),
    )
    assert here.keys == there.keys
    assert (here.matrix != there.matrix).nnz == 0


class _KillsItsWorker:
    """A tokenizer that kills the worker process it runs in, on the first line of a shard
    while ``marker`` does not exist (and makes it: the task's next run counts); with
    ``always``, every time."""

    def __init__(self, marker: Path, always: bool = False) -> None:
        self.marker, self.always = marker, always

    def __call__(self, line: str) -> list[str]:
        if self.always or not self.marker.exists():
            self.marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return line.split()


@pytest.fixture(scope="module")
def process_cluster():
    """Two worker processes (a worker killed is restarted by its nanny); the scheduler here."""
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import us
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield cluster, client


def test_a_worker_killed_mid_count_leaves_the_count_exact(tmp_path, process_cluster):
    from rowbook.distributed import word_counts

    _, client = process_cluster
    shards = [_corpus(tmp_path / f"part{s}.txt", 100, seed=s) for s in range(3)]
    counts = word_counts(shards, tokenizer=_KillsItsWorker(tmp_path / "killed"), client=client)
    assert (tmp_path / "killed").exists(), "no worker was killed"
    assert counts == word_counts(shards)  # counted here, in one process


def test_a_task_that_keeps_killing_workers_fails_in_one_line_naming_its_shard(
    tmp_path, process_cluster
):
    from rowbook.distributed import WorkerLost, word_counts

    cluster, client = process_cluster
    shards = [_corpus(tmp_path / f"part{s}.txt", 20, seed=s) for s in range(2)]
    killer = _KillsItsWorker(tmp_path / "killed", always=True)
    allowed, cluster.scheduler.allowed_failures = cluster.scheduler.allowed_failures, 0
    try:
        with pytest.raises(WorkerLost) as caught:
            word_counts(shards, tokenizer=killer, client=client)
    finally:
        cluster.scheduler.allowed_failures = allowed
    message = str(caught.value)
    assert "\n" not in message and "a Dask worker died while counting shard" in message
    assert str(shards[0]) in message or str(shards[1]) in message
    assert "stopped, not shortened" in message


# -- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """``mount(kb)``: a tmpfs of ``kb`` KB at a fresh folder, unmounted afterwards; skipped
    where this process may not mount (not root, or no mount namespace of its own)."""
    mounted = []

    def mount(kb: int) -> Path:
        where = tmp_path / f"disk{len(mounted)}"
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'})")
        mounted.append(where)
        return where

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the simulated ENOSPC tests run anyway")
    yield mount
    busy = []
    for where in mounted:  # a file left open on the disk (a leak) keeps it busy
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            busy.append(where)
            subprocess.run(["umount", "-l", str(where)], check=False)
    assert not busy, f"a file was left open on {busy}"


def _one_line_error(capsys, argv) -> str:
    from rowbook.cli import main

    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("kb", [256, 640])  # full before reading, or while the ids are encoded
def test_a_full_disk_while_spilling_ids_is_one_line_and_keeps_the_old_output(
    tmp_path, small_disk, capsys, kb
):
    disk = small_disk(kb)
    corpus = _corpus(tmp_path / "corpus.txt", 2500)
    out = tmp_path / "out.txt"
    out.write_text("the vectors of an earlier run\n")
    argv = ["train", "word2vec", corpus, "-o", out, "--spill-dir", disk, "--quiet", "--epochs", 1]
    err = _one_line_error(capsys, argv)
    assert f"no space left in {disk} for the corpus's word ids" in err
    assert "it needs about" in err and "was free" in err
    assert out.read_text() == "the vectors of an earlier run\n"
    assert list(disk.iterdir()) == [] and _temporaries(tmp_path) == []


def test_a_full_disk_during_the_shuffle_is_one_line_and_keeps_the_old_output(
    tmp_path, small_disk, capsys
):
    from rowbook.cli import main

    corpus = _corpus(tmp_path / "corpus.txt", 2500)
    counts = tmp_path / "counts.npz"
    assert main(["cooccur", str(corpus), "-o", str(counts), "--min-count", "1", "--quiet"]) == 0
    disk = small_disk(256)
    out = tmp_path / "out.txt"
    out.write_text("the vectors of an earlier run\n")
    argv = ["train", "glove", counts, "-o", out, "--memory", 0.001, "--spill-dir", disk]
    err = _one_line_error(capsys, [*argv, "--quiet", "--epochs", 1])
    assert f"no space left in {disk} for GloVe's shuffled records" in err
    assert out.read_text() == "the vectors of an earlier run\n"
    assert list(disk.iterdir()) == []
