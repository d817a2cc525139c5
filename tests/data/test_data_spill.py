"""Spilling by default: the decision from the corpus's size, folders that go away on every
exit (a dead process's swept by the next), a full disk as one error, and flat memory with
no options."""

from __future__ import annotations

import errno
import gzip
import io
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import rowbook.data.spill as spill
from rowbook import GloVe, Word2Vec
from rowbook.checks import ParameterError
from rowbook.data import id_stream, read_corpus
from rowbook.data import shuffle as shuffle_module
from rowbook.data.cooccurrence_runs import RunCounter
from rowbook.data.spill_folder import SpillFolder, SpillSpaceError, sweep_stale

W2V = {"vector_size": 6, "window": 2, "min_count": 1, "epochs": 2, "workers": 1, "seed": 3}


def _corpus_file(path: Path, lines: int, seed: int = 0, repeat: int = 1) -> Path:
    """``lines`` lines of 100 Zipf-drawn words of 2,000, the whole text ``repeat`` times."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 2001)
    words = np.array([f"w{i}" for i in range(2000)])[rng.choice(2000, (lines, 100), p=p / p.sum())]
    text = "".join(" ".join(row) + "\n" for row in words)
    path.write_text(text * repeat, encoding="utf-8")
    return path


@pytest.fixture
def small_machine(monkeypatch, tmp_path):
    """A machine with 16 MB available, whose temporary folder is ``tmp_path / "tmp"``: the
    line is at 64 KB of ids (16k tokens)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(spill, "available_memory", lambda: 16 * 2**20)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    return tmp


# -- the decision ---------------------------------------------------------------------------


def test_small_corpora_stay_in_ram_and_large_files_spill_to_the_temporary_folder(
    small_machine, tmp_path
):
    small = _corpus_file(tmp_path / "small.txt", 10)  # ~1k tokens: 4 KB of ids
    large = _corpus_file(tmp_path / "large.txt", 400)  # ~40k tokens: 160 KB of ids
    assert spill.choose_spill(small) == spill.SpillChoice(None)
    choice = spill.choose_spill(large)
    assert choice.folder == str(small_machine)
    note = choice.said()
    assert "more than 1/256 of the 16 MB available" in note and str(small_machine) in note
    assert "spill_dir=False keeps them in RAM" in note
    cli = choice.said(keep="--no-spill", choose="--spill-dir DIR")
    assert "--no-spill keeps them in RAM, --spill-dir DIR chooses the folder" in cli
    assert spill.choose_spill(large, False) == spill.SpillChoice(None)
    assert spill.choose_spill(small, tmp_path).folder == tmp_path
    assert spill.choose_spill([["token", "lists"]] * 10**5).folder is None  # size unknown


def test_the_line_is_tied_to_the_memory_available(monkeypatch, tmp_path):
    corpus = _corpus_file(tmp_path / "c.txt", 100)  # about 60 KB of text
    ids = spill.id_bytes(corpus)
    per_token = spill.text_bytes_per_token(spill.corpus_source(corpus))
    assert ids == int(corpus.stat().st_size / per_token) * 4
    monkeypatch.setattr(spill, "available_memory", lambda: ids * spill.SPILL_SHARE)
    assert spill.choose_spill(corpus).folder is None
    monkeypatch.setattr(spill, "available_memory", lambda: ids * spill.SPILL_SHARE - 1)
    assert spill.choose_spill(corpus).folder is not None


def _profile_corpus(path: Path, words: list[str], tokens: int = 60_000) -> Path:
    """A corpus of ``tokens`` Zipf-drawn ``words``, 20 a line."""
    rng = np.random.default_rng(1)
    p = 1.0 / np.arange(1, len(words) + 1)
    drawn = np.array(words)[rng.choice(len(words), (tokens // 20, 20), p=p / p.sum())]
    path.write_text("".join(" ".join(row) + "\n" for row in drawn), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "profile",
    [
        "one CJK character a token",  # 4.0 bytes a token: the constant's 5 underestimated it
        "short words",  # w0 ... w1999: 3.7
        "long words",  # 8 to 20 letters: 15
    ],
)
def test_the_id_estimate_is_not_below_the_true_ids_on_text_of_any_density(tmp_path, profile):
    words = {
        "one CJK character a token": [chr(0x4E00 + i) for i in range(2_000)],
        "short words": [f"w{i}" for i in range(2_000)],
        "long words": [
            "".join("abcdefgh"[(i >> j) % 8] for j in range(8 + i % 13)) for i in range(2_000)
        ],
    }[profile]
    corpus = _profile_corpus(tmp_path / "c.txt", words)
    true = read_corpus(corpus, min_count=1)[1].ids.nbytes  # the trainer's ids
    estimate = spill.id_bytes(corpus)
    assert estimate >= true
    if profile != "long words":  # denser than the constant: the sample's figure, less a fifth
        assert estimate <= 1.3 * true


def test_compressed_files_count_as_their_text_and_folders_as_their_files(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    plain = _corpus_file(folder / "a.txt", 50)
    with gzip.open(folder / "b.txt.gz", "wb") as f:
        f.write(plain.read_bytes())
    packed = (folder / "b.txt.gz").stat().st_size
    assert spill.corpus_text_bytes(folder) == plain.stat().st_size + spill.COMPRESSION * packed
    assert spill.corpus_text_bytes([plain, plain]) == 2 * plain.stat().st_size


def test_a_pipe_on_standard_input_stays_in_ram(monkeypatch):
    read, write = os.pipe()
    try:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.FileIO(read, closefd=False)))
        assert spill.corpus_text_bytes("-") is None
    finally:
        os.close(read)
        os.close(write)


def test_no_room_on_the_temporary_disk_keeps_the_ids_in_ram_and_says_why(
    small_machine, tmp_path, monkeypatch
):
    large = _corpus_file(tmp_path / "large.txt", 400)
    free = type("Usage", (), {"free": 1000})()
    monkeypatch.setattr(spill.shutil, "disk_usage", lambda _: free)
    choice = spill.choose_spill(large)
    assert choice.folder is None and "they stay in RAM" in choice.said()


def test_spill_dir_takes_a_folder_false_or_none():
    with pytest.raises(ParameterError, match=r"spill_dir must be None .*, False .* or a folder"):
        spill.choose_spill([["a"]], True)


def test_a_trainer_spills_by_itself_says_so_once_and_learns_the_same_vectors(
    small_machine, tmp_path, monkeypatch
):
    """Said once as Python's default filter says it: once a place, until the warning filters
    change, and numba changes them while it compiles (``catch_warnings`` in its compiler). So
    a first call compiles the kernels (unless this process has): the counted first call did
    it when numba's cache on disk was cold, and the note was said twice."""
    corpus = _corpus_file(tmp_path / "c.txt", 300)
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 4096)
    made = []
    monkeypatch.setattr(id_stream.RawIdSink, "blocks", _spy(id_stream.RawIdSink.blocks, made))
    with pytest.warns(spill.SpillNotice):
        Word2Vec(**W2V).fit(corpus)  # the kernels compiled, if not yet in this process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):  # the same call again: said once
            spilled = Word2Vec(**W2V).fit(corpus)
    notes = [w for w in caught if issubclass(w.category, spill.SpillNotice)]
    assert len(notes) == 1 and made, "the ids did not spill"
    in_ram = Word2Vec(**W2V).fit(corpus, spill_dir=False)
    np.testing.assert_array_equal(spilled.W_in_, in_ram.W_in_)
    assert list(small_machine.iterdir()) == []  # removed when fit returned


def _spy(function, calls):
    def spied(*args, **kwargs):
        calls.append(1)
        return function(*args, **kwargs)

    return spied


# -- removed on every exit; a dead process's folders swept -----------------------------------


@pytest.mark.parametrize("model", [Word2Vec, GloVe])
def test_the_spill_folder_goes_when_training_fails(small_machine, tmp_path, model):
    corpus = _corpus_file(tmp_path / "c.txt", 300)
    settings = W2V if model is Word2Vec else {**W2V, "memory": 0.001}

    def stop(progress):
        assert list(small_machine.iterdir()), "nothing was spilled"
        raise RuntimeError("stop here")

    with pytest.warns(spill.SpillNotice), pytest.raises(RuntimeError, match="stop here"):
        model(**settings).fit(corpus, callback=stop)
    assert list(small_machine.iterdir()) == []


def test_the_spill_folder_goes_when_reading_fails(tmp_path, monkeypatch):
    corpus = _corpus_file(tmp_path / "c.txt", 300)
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 1000)
    written = []

    def write(self, ids, _write=id_stream.RawIdSink.write):
        if len(written) == 3:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the scan
        written.append(1)
        _write(self, ids)

    monkeypatch.setattr(id_stream.RawIdSink, "write", write)
    with pytest.raises(KeyboardInterrupt):
        read_corpus(corpus, spill_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]


_SIGINT = """
import os, signal, sys
from rowbook import Word2Vec
def interrupt(progress):  # Ctrl-C after the first epoch
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause()
try:
    Word2Vec(vector_size=6, min_count=1, epochs=3, workers=2).fit(
        sys.argv[1], spill_dir=sys.argv[2], callback=interrupt)
except KeyboardInterrupt:
    print("interrupted", sorted(os.listdir(sys.argv[2])))
"""


def test_ctrl_c_removes_the_spill_folder(tmp_path):
    corpus = _corpus_file(tmp_path / "c.txt", 100)
    folder = tmp_path / "spill"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _SIGINT, str(corpus), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip() == "interrupted []", done.stdout + done.stderr[-2000:]
    assert list(folder.iterdir()) == []


def test_a_folder_whose_process_died_is_swept_and_a_live_one_is_not(tmp_path):
    code = (
        "import os, sys; from rowbook.data.spill_folder import SpillFolder; "
        "f = SpillFolder(sys.argv[1], 'ids'); (f.path / 'raw.i32').write_bytes(b'1234'); "
        "print(f.path, flush=True); os.kill(os.getpid(), 9)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True)
    assert done.returncode == -signal.SIGKILL
    dead = Path(done.stdout.decode().strip())
    assert dead.exists()  # kill -9: nothing could clean up
    lookalike = tmp_path / "rowbook-demo"  # not a spill folder: never touched
    lookalike.mkdir()
    with SpillFolder(tmp_path, "records") as alive:
        assert not dead.exists()  # swept when the next folder was made
        assert sweep_stale(tmp_path) == [] and alive.path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rowbook-demo"]


# -- a full disk ----------------------------------------------------------------------------


class _FullDisk:
    """A file whose writes fail with ENOSPC once ``room`` bytes are written."""

    def __init__(self, path, mode, room):
        self._file, self.room = open(path, mode), room

    def write(self, data):
        self.room -= len(memoryview(data).cast("B"))
        if self.room < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._file.write(data)

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()


def test_a_full_disk_while_spilling_ids_is_one_error_naming_the_folder(tmp_path, monkeypatch):
    corpus = _corpus_file(tmp_path / "c.txt", 300)
    folder = tmp_path / "spill"
    folder.mkdir()
    monkeypatch.setattr(id_stream, "BLOCK_TOKENS", 1000)
    monkeypatch.setattr(id_stream, "open", lambda p, m: _FullDisk(p, m, 20_000), raising=False)
    with pytest.raises(SpillSpaceError) as caught:
        Word2Vec(**W2V).fit(corpus, spill_dir=folder)
    message = str(caught.value)
    assert caught.value.errno == errno.ENOSPC
    assert f"no space left in {folder} for the corpus's word ids" in message
    assert "it needs about" in message and "MB was free" in message
    assert "partial files were removed" in message and "spill_dir" in message
    assert list(folder.iterdir()) == []


def test_a_full_disk_during_the_shuffle_is_one_error_and_leaves_no_file(tmp_path, monkeypatch):
    calls = []

    def pwrite_all(fd, values, offset, _write=shuffle_module.pwrite_all):
        calls.append(1)
        if len(calls) == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        _write(fd, values, offset)

    monkeypatch.setattr(shuffle_module, "pwrite_all", pwrite_all)
    corpus = [
        [f"w{i}" for i in row] for row in np.random.default_rng(0).integers(0, 300, (200, 30))
    ]
    with pytest.raises(
        SpillSpaceError, match=r"for GloVe's shuffled records .*: it needs more than"
    ):
        GloVe(**{**W2V, "memory": 0.001}).fit(corpus, spill_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_while_counting_runs_is_one_error(tmp_path, monkeypatch):
    import rowbook.data.cooccurrence_runs as runs

    monkeypatch.setattr(runs, "open", lambda p, m: _FullDisk(p, m, 100), raising=False)
    counter = RunCounter((50, 50), memory=1 << 20, folder=tmp_path)
    counter.add(np.arange(50), np.arange(50), np.ones(50, np.int64))
    with pytest.raises(SpillSpaceError, match="co-occurrence counts' sorted runs"):
        counter._spill()
    counter.close()
    assert list(tmp_path.iterdir()) == []


def test_a_hopeless_spill_fails_before_reading(tmp_path, monkeypatch):
    corpus = _corpus_file(tmp_path / "c.txt", 50)
    folder = tmp_path / "spill"
    folder.mkdir()
    free = type("Usage", (), {"free": 10})()
    monkeypatch.setattr("rowbook.data.spill_folder.shutil.disk_usage", lambda _: free)
    with pytest.raises(SpillSpaceError, match=r"it needs about .* and 0\.0 MB was free"):
        read_corpus(corpus, spill_dir=folder)
    assert list(folder.iterdir()) == []


# -- flat memory with no options ---------------------------------------------------------------

_PEAK = """
import sys
import rowbook.data.spill as spill
spill.available_memory = lambda: 64 * 2**20  # a small machine: the line at 256 KB of ids
from rowbook import Word2Vec
settings = dict(vector_size=4, window=1, negative=1, epochs=1, workers=1, min_count=1, sample=1e-5)
Word2Vec(**settings).fit(sys.argv[1], **({} if sys.argv[2] == "default" else {"spill_dir": False}))
with open("/proc/self/status") as f:
    print(next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024)
"""


def _peak_mb(corpus: Path, how: str, tmp: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _PEAK, str(corpus), how],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.split()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_file_corpus_fit_keeps_memory_flat_with_no_options(tmp_path):
    """x4 and x16 of a generated corpus (1.2M and 4.8M tokens): the default peak grows by
    less than a third of the extra ids, where keeping them in RAM grows by them all. From
    x4 on, the buffers sized by a block of reading (the reading buffer, a block's ids, the
    room for its new words) have their size; x1 (1.2 MB) is about one block."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    x4 = _corpus_file(tmp_path / "x4.txt", 3000, repeat=4)
    x16 = _corpus_file(tmp_path / "x16.txt", 3000, repeat=16)  # the same words, 4 times the text
    extra_ids_mb = 12 * 300_000 * 4 / 2**20
    small, large = _peak_mb(x4, "default", tmp), _peak_mb(x16, "default", tmp)
    assert large - small < extra_ids_mb / 3, f"default: {small:.1f} MB at x4, {large:.1f} at x16"
    in_ram = _peak_mb(x16, "ram", tmp)
    assert in_ram - large > 0.7 * extra_ids_mb, f"in RAM {in_ram:.1f} MB, spilled {large:.1f}"
    assert list(tmp.iterdir()) == []
