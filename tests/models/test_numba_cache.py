"""The training kernels are compiled once and loaded from numba's cache afterwards.

Two fresh interpreters fit the same small word2vec model with ``NUMBA_CACHE_DIR`` set to
an empty folder, as a read-only install of rowbook does with numba's user-wide cache
(``~/.cache/numba``; an editable checkout caches in ``__pycache__`` beside the source).
Numba's own report says what happened: its ``numba:compile`` event fires for every
function compiled (a cache miss) and ``NUMBA_DEBUG_CACHE=1`` prints every index and data
file saved or loaded. The first run compiles and saves; the second compiles nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

_FIT = """
import json
from numba.core import event
from rowbook import Word2Vec

compiled = []


class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


event.register("numba:compile", Compiles())
corpus = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "a", "log"]] * 30
Word2Vec(vector_size=8, min_count=1, epochs=1, workers=2).fit(corpus)
print(json.dumps(compiled))
"""


def _fit(cache_dir: Path) -> tuple[list[str], list[str]]:
    """(functions numba compiled, its cache report lines) of one run in a fresh interpreter."""
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(cache_dir),
        "NUMBA_DEBUG_CACHE": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_FIT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cache_dir,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]), [line for line in lines if line.startswith("[cache]")]


def test_the_second_run_loads_every_training_kernel_from_the_cache(tmp_path):
    compiled, report = _fit(tmp_path)
    assert "train_job_batched" in compiled  # an empty cache: the default kernel is compiled
    assert any(line.startswith("[cache] data saved to") for line in report)
    assert str(tmp_path) in report[0]  # in NUMBA_CACHE_DIR, not beside the source

    compiled, report = _fit(tmp_path)
    assert compiled == []
    assert not [line for line in report if "saved" in line]
    loaded = [line for line in report if line.startswith("[cache] data loaded from")]
    assert any("train_job_batched" in line for line in loaded)
