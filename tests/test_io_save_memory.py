"""Saving a model writes its arrays straight into the file: no second copy in memory.

Checked in a child process by its peak RSS (a bound with a margin, never a timing).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from rowbook.io import load_state, save_state

SAVE_200_MB = """
import resource, sys
import numpy as np
from rowbook.io import save_state
table = np.ones((500, 100_000), dtype=np.float32)  # 200 MB, resident
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
save_state(sys.argv[1], {"tables": {"W": table}}, kind="checkpoint")
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


def test_save_state_does_not_hold_a_second_copy_of_the_arrays(tmp_path):
    path = tmp_path / "big.npz"
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SAVE_200_MB), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    grown = float(out.stdout.split()[-1])
    assert grown < 50, f"saving a 200 MB table grew the peak by {grown:.0f} MB"
    W = load_state(path, kind="checkpoint")["tables"]["W"]
    assert W.shape == (500, 100_000) and bool((W == 1).all())


def test_a_saved_state_round_trips_arrays_and_values(tmp_path):
    state = {
        "a": np.arange(6, dtype=np.int32).reshape(2, 3),
        "b": [1.5, "x", None],
        "c": {"d": True},
    }
    save_state(tmp_path / "s.npz", state, kind="checkpoint")
    back = load_state(tmp_path / "s.npz", kind="checkpoint")
    np.testing.assert_array_equal(back["a"], state["a"])
    assert (
        back["a"].dtype == np.int32 and back["b"] == [1.5, "x", None] and back["c"] == {"d": True}
    )


READ_SMALL_JSON_CAPPED = """
import resource, sys
from rowbook.io import read_json
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
with open("/proc/self/statm") as f:
    in_use = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (in_use + (256 << 20), hard))  # 256 MB of room
print(read_json(sys.argv[1], "Vocab"))
"""


def test_reading_a_small_json_file_sets_aside_no_more_than_it_holds(tmp_path):
    # the default size limit is 1 GiB: reading "up to" it must not reserve it first
    path = tmp_path / "small.json"
    path.write_text('{"a": [1, 2]}')
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(READ_SMALL_JSON_CAPPED), str(path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "{'a': [1, 2]}"
