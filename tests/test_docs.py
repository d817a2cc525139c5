"""The README and the manual: every Python block runs, stated outputs hold, the site builds.

How a page marks its code (the markers are HTML comments, invisible on GitHub and in the site):

* A ```` ```python ```` block runs on its own, in a fresh namespace, in a temporary folder.
* ``<!-- continue -->`` on the line before a block: it runs in the namespace of the previous
  Python block of the same page (one chain of blocks is one test).
* ``<!-- output -->`` before a ```` ```text ```` block right after a Python block: that text
  is what the Python block prints (compared as doctest does: whitespace normalised, ``...``
  matches anything).
* A block whose lines start with ``>>>`` is a doctest: each statement's output is checked.
* ``<!-- requires: rowbook.models.FastText -->``: the chain runs only where that name
  exists (parts still being built); otherwise it is skipped, saying what is missing.
* ``<!-- skip: reason -->``: the block is shown but not run; the reason is required.

Other languages (``bash``, ``text`` without the output marker, diagrams) are not run.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_BUDGET = 250
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`]*)$")
MARKER = re.compile(
    r"^\s*<!--\s*(?P<name>continue|output|skip|requires)\s*:?\s*(?P<arg>.*?)\s*-->\s*$"
)


@dataclass
class Block:
    """One fenced code block of a page, with the marker on the line before it."""

    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str = ""
    arg: str = ""
    expected: str | None = None  # the ``<!-- output -->`` text block that follows


@dataclass
class Chain:
    """Python blocks that share one namespace: a block and those continuing it."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        first = self.blocks[0]
        return f"{first.page.relative_to(ROOT)}:{first.line}"


def read_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order, with its marker (if any)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        code = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mk = MARKER.match(prev)
        lang = (m["info"].split() or [""])[0].lower()
        blocks.append(
            Block(page, i + 1, lang, code, mk["name"] if mk else "", mk["arg"] if mk else "")
        )
        i = end + 1
    return blocks


def chains(page: Path) -> list[Chain]:
    """The page's Python blocks grouped into chains, each with its expected output attached."""
    found: list[Chain] = []
    last_python: Block | None = None
    for block in read_blocks(page):
        if block.marker == "output":
            assert last_python is not None and block.lang == "text", (
                f"{page}:{block.line}: <!-- output --> must mark a ```text block after a python block"
            )
            last_python.expected = block.code
            continue
        if block.lang not in ("python", "py", "pycon"):
            continue
        if block.marker == "continue":
            assert found, f"{page}:{block.line}: <!-- continue --> with no block before it"
            found[-1].blocks.append(block)
        else:
            found.append(Chain([block]))
        last_python = block
    return found


ALL_CHAINS = [chain for page in PAGES for chain in chains(page)]


def missing(requirement: str) -> bool:
    """True if ``module.attr`` (e.g. ``rowbook.models.FastText``) cannot be imported."""
    module, _, attr = requirement.rpartition(".")
    try:
        return not hasattr(importlib.import_module(module), attr)
    except ImportError:
        return True


def run_block(block: Block, namespace: dict) -> None:
    """Run one block in ``namespace``: as a doctest if it has ``>>>``, else as a script."""
    where = f"{block.page.relative_to(ROOT)}:{block.line}"
    if re.search(r"^>>> ", block.code, re.M):
        test = doctest.DocTestParser().get_doctest(block.code, namespace, where, where, block.line)
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        out = io.StringIO()
        result = runner.run(test, out=out.write, clear_globs=False)
        namespace.update(test.globs)  # DocTest works on a copy; the next block continues it
        assert result.failed == 0, out.getvalue()
        return
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(block.code, where, "exec"), namespace)
    if block.expected is not None:
        checker = doctest.OutputChecker()
        got = stdout.getvalue()
        assert checker.check_output(block.expected, got, FLAGS), (
            f"{where}: printed output differs from the page\n--- page\n{block.expected}--- got\n{got}"
        )


@pytest.mark.parametrize("chain", ALL_CHAINS, ids=[c.id for c in ALL_CHAINS])
def test_code_block_runs(chain: Chain, tmp_path, monkeypatch) -> None:
    first = chain.blocks[0]
    if first.marker == "skip":
        assert first.arg, f"{chain.id}: <!-- skip: ... --> needs a reason"
        pytest.skip(f"{chain.id}: {first.arg}")
    if first.marker == "requires" and missing(first.arg):
        pytest.skip(f"{chain.id}: needs {first.arg}, which this rowbook does not have yet")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    namespace = {"__name__": "__docs__"}
    for block in chain.blocks:
        run_block(block, namespace)


def test_every_page_has_its_markers_well_formed() -> None:
    """A marker is placed right before a fence, and every skip says why."""
    for page in PAGES:
        for block in read_blocks(page):
            if block.marker == "skip":
                assert block.arg, f"{page}:{block.line}: a skip marker needs a reason"
            if block.marker == "requires":
                assert "." in block.arg, f"{page}:{block.line}: requires needs module.attr"


def test_collector_finds_the_blocks() -> None:
    """The collector sees Python blocks in the README and in the manual (it can fail)."""
    pages = {chain.blocks[0].page for chain in ALL_CHAINS}
    assert ROOT / "README.md" in pages
    assert len(pages) >= 10


def test_readme_is_a_front_page() -> None:
    """Under the line budget, and its first two code blocks are the two set-up commands."""
    readme = ROOT / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= README_BUDGET
    first, second = read_blocks(readme)[:2]
    assert first.lang == second.lang == "bash"
    assert "pip install -e ." in first.code and "rowbook demo" in first.code
    assert 'pip install -e ".[test]"' in second.code and "pytest" in second.code


def test_no_numbered_seeds() -> None:
    """Worked examples are named by what they are, never by a number such as seed 0-0-1."""
    pattern = re.compile("seed " + "0" + r"0\d", re.I)
    roots = ["rowbook", "tests", "docs", "benchmarks", "examples"]
    files = [ROOT / "README.md"] + [p for r in roots for p in (ROOT / r).rglob("*") if p.is_file()]
    hits = []
    for path in files:
        if path.suffix in {".png", ".npz", ".pyc", ".gz"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{path.relative_to(ROOT)}:{m.group()}" for m in pattern.finditer(text)]
    assert not hits


def test_every_public_module_is_in_the_reference() -> None:
    """Each public module of rowbook has a ``::: module`` entry in docs/api/ (CLI and demo aside)."""
    entries = set(
        re.findall(
            r"^::: (\S+)$",
            "".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md")),
            re.M,
        )
    )
    missing = []
    for path in sorted((ROOT / "rowbook").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts) or parts[1:2] in (("cli",), ("demo",)):
            continue
        if ".".join(parts) not in entries:
            missing.append(".".join(parts))
    assert not missing, f"add to docs/api/: {missing}"


def test_manual_builds_strict(tmp_path) -> None:
    """``mkdocs build --strict``: a broken link or a missing API reference fails the build."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "api" / "models" / "index.html").exists()
