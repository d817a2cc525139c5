"""numba's cache of a kernel is renewed when a compiled function it calls changes in another
module (rowbook._numba_cache); numba alone keys a kernel on its own file.

A package of two modules is written to a temporary folder: ``kernel.py`` calls
``callee.value()`` (compiled into the kernel). A fresh interpreter runs the kernel, the
callee's file is changed, and a second fresh interpreter runs it again from the same cache
folder: it must see the new callee.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from rowbook._numba_cache import root_of, source_stamp

ROOT = Path(__file__).resolve().parent.parent

_KERNEL = """
import numba
from pkg.callee import value


@numba.njit(cache=True)
def kernel():
    return value() + 10
"""

_CALLEE = """
import numba


@numba.njit(cache=True)
def value():
    return {value}
"""


def _run(folder: Path, cache: Path, *, watch: bool) -> int:
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(folder)!r})
        import rowbook._numba_cache as numba_cache
        if {watch!r}:
            numba_cache.watch({str(folder / "pkg")!r})
        from pkg.kernel import kernel
        print(kernel())
        """
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


def _package(folder: Path, value: int) -> None:
    pkg = folder / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernel.py").write_text(_KERNEL)
    (pkg / "callee.py").write_text(_CALLEE.format(value=value))


def test_a_kernel_sees_its_callee_change_in_another_module(tmp_path: Path) -> None:
    """Unwatched (numba alone), the second run prints 11 again: the old callee."""
    _package(tmp_path, 1)
    cache = tmp_path / "cache"
    assert _run(tmp_path, cache, watch=True) == 11
    assert any(cache.rglob("*.nbi"))  # compiled and saved, so the next run could load it
    _package(tmp_path, 2)
    assert _run(tmp_path, cache, watch=True) == 12


def test_rowbook_is_watched_and_its_stamp_follows_only_compiled_modules(tmp_path: Path) -> None:
    assert root_of(str(ROOT / "rowbook" / "text" / "bpe" / "merge_kernels.py")) is not None
    assert root_of(str(tmp_path / "elsewhere.py")) is None
    (tmp_path / "kernel.py").write_text("import numba\n")
    (tmp_path / "plain.py").write_text("x = 1\n")
    before = source_stamp(tmp_path)
    (tmp_path / "plain.py").write_text("x = 2\n")
    assert source_stamp(tmp_path) == before
    (tmp_path / "kernel.py").write_text("import numba  # changed\n")
    assert source_stamp(tmp_path) != before
