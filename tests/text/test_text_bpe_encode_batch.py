"""``encode_batch`` on several threads or processes: the serial encodings, and those of ``tokenizers``.

The batch size constants are made small so that a corpus of a few thousand lines is cut
into many batches and actually goes through the workers (threads for GPT-2's compiled
pre-split, processes otherwise). ASCII text is pre-split with
a twin of GPT-2's pattern for the standard ``re``, held here to the original.
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import multiprocessing
import re
import sys
import threading

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import ByteLevelBPETokenizer, Tokenizer

from rowbook import fork_pool
from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch as bpe_batch
from rowbook.text.bpe import cutoff as bpe_cutoff
from rowbook.text.bpe import presplit
from rowbook.text.bpe.bytelevel import GPT2_ASCII_PATTERN, GPT2_PATTERN
from rowbook.text.bpe.word_cache import WordCache
from rowbook.text.utf8 import utf8_of

from .conftest import SENTENCES

SPECIALS = ["<pad>", "<|endoftext|>"]


@pytest.fixture(scope="module")
def texts(corpus, hard_strings):
    lines = [*corpus, *corpus[::-1]]  # about 3,000 lines
    return [
        t
        for i, line in enumerate(lines)
        for t in ([line, hard_strings[i % len(hard_strings)]] if i % 50 == 0 else [line])
    ]


@pytest.fixture
def pool_calls(monkeypatch):
    """Small batches, and a record of ``(number of batches, workers, "processes" or
    "threads")`` of each pool run."""
    monkeypatch.setattr(bpe_cutoff, "POOL_WORK", 0)
    monkeypatch.setattr(bpe_batch, "BATCH_CHARS", 2_000)
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", 0)
    monkeypatch.setattr(bpe_batch, "THREAD_BATCH_CHARS", 2_000)
    calls = []

    def spy(pool, kind):
        def run(job, tasks, workers, **options):
            tasks = list(tasks)
            calls.append((len(tasks), workers, kind))
            return pool(job, tasks, workers, **options)

        return run

    monkeypatch.setattr(bpe_batch, "map_in_order", spy(fork_pool.map_in_order, "processes"))
    monkeypatch.setattr(bpe_batch, "map_in_threads", spy(fork_pool.map_in_threads, "threads"))
    return calls


def _model(corpus, tmp_path, **params):
    ours = ByteLevelBPE(**params).fit(corpus, 600, special_tokens=SPECIALS)
    ours.add_tokens(["héllo wörld", "☃", "sat on"])
    ours.add_special_tokens(["<mask>"])
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    return ours, Tokenizer.from_file(str(tmp_path / "tokenizer.json"))


def _fields(encodings):
    return [(e.ids, e.tokens, e.offsets) for e in encodings]


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_parallel_equals_serial_equals_tokenizers(
    corpus, texts, pool_calls, tmp_path, add_prefix_space
):
    ours, theirs = _model(corpus, tmp_path, add_prefix_space=add_prefix_space)
    parallel = ours.encode_batch(texts, workers=2)  # cold cache: every word met in a worker
    assert pool_calls and pool_calls[0][0] >= 8 and pool_calls[0][1:] == (2, "processes")
    serial = ours.encode_batch(texts, workers=1)
    assert _fields(parallel) == _fields(serial) == _fields(theirs.encode_batch(texts))
    assert parallel == serial == [ours.encode(t) for t in texts]
    assert ours.encode_batch(texts, workers=2) == serial  # now with a warm cache in the parent


@pytest.fixture(scope="module")
def plain_model(corpus):
    """GPT-2's settings: no unsplit tokens, no prefix space (the compiled path)."""
    return ByteLevelBPE().fit(corpus, 600)


@pytest.fixture(scope="module")
def plain_hf(plain_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("plain") / "tokenizer.json"
    plain_model.to_tokenizer_json(path)
    return Tokenizer.from_file(str(path))


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("cache_size", [100_000, 30])
def test_plain_model_equals_encode_text_by_text_for_every_worker_count(
    plain_model, plain_hf, texts, hard_strings, pool_calls, workers, cache_size
):
    ours = copy.deepcopy(plain_model)  # a cold cache
    ours.cache_size = cache_size  # 30: emptied every few texts, in the workers too
    assert ours._encoder.plain and ours._encoder.pretokenizer.compiled
    hard = [*texts[:800], *SENTENCES, *hard_strings]
    batch = ours.encode_batch(hard, workers=workers)
    assert _fields(batch) == _fields([plain_model.encode(t) for t in hard])
    assert _fields(batch) == _fields(plain_hf.encode_batch(hard))
    assert [call[1:] for call in pool_calls] == [(workers, "threads")] * (workers > 1)
    assert len(ours._encoder.cache) <= cache_size
    assert (ours._encoder.emptied > 0) == (cache_size == 30)
    assert _fields(batch) == _fields([ours.encode(t) for t in hard])  # the cache as it is now


@pytest.mark.parametrize("workers", [2, 3])
def test_documents_cut_across_threads_get_the_ids_of_the_whole(
    plain_model, plain_hf, texts, hard_strings, pool_calls, workers
):
    ours = copy.deepcopy(plain_model)
    glue = ["\n\n", " ", "  ", "\t \n", "\u3000 ", " \u3000", "'s ", "  's", "\r\n  "]
    parts = [*texts[:600], *SENTENCES, *hard_strings]
    documents = [glue[i % len(glue)].join(parts[i::3]) for i in range(3)]  # 3 long texts
    documents += ["short one", glue[3].join(parts[:40]), ""]
    batch = ours.encode_batch(documents, workers=workers)
    assert pool_calls[0][0] > len(documents)  # more batches than texts: the long ones were cut
    assert _fields(batch) == _fields([plain_model.encode(t) for t in documents])
    assert _fields(batch) == _fields(plain_hf.encode_batch(documents))


@pytest.mark.parametrize("size", [1, 7, 64, 333, 1_000])
def test_documents_cut_at_any_size_get_the_ids_of_one_pass(
    plain_model, hard_strings, pool_calls, monkeypatch, size
):
    """Pieces of every size (one character: a cut at nearly every space), batches of pieces
    shared by the calling thread and a helper, each piece's ids joined back to its text's."""
    monkeypatch.setattr(bpe_batch, "THREAD_BATCH_CHARS", size)
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", 0)  # these few texts go to the threads too
    ours = copy.deepcopy(plain_model)
    ours._encoder.cache.clear()
    parts = [*SENTENCES, *hard_strings, "it's  ok", " 's\n\n x", "\u3000 a", "  "]
    documents = [" ".join(parts), "\n".join(parts[::-1]), "", "one", "  ".join(parts[3:])]
    one_pass = [plain_model.encode(t).ids for t in documents]
    assert [e.ids for e in ours.encode_batch(documents, workers=2)] == one_pass
    assert [e.ids for e in ours.encode_batch(documents, workers=2)] == one_pass  # warm cache
    assert pool_calls and pool_calls[0][1:] == (2, "threads")


def test_the_calling_thread_shares_the_tasks_and_results_keep_task_order():
    ran = []

    def job(task):
        ran.append(("thread", task))
        return task * 10

    def here(task):
        ran.append(("caller", task))
        return task * 10

    assert list(fork_pool.map_in_threads(job, range(40), workers=2, here=here)) == [
        t * 10 for t in range(40)
    ]
    assert sorted(t for _, t in ran) == list(range(40))
    assert {who for who, _ in ran} <= {"thread", "caller"} and ("thread", 0) in ran

    def failing(task):
        if task == 5:
            raise ValueError("task 5")
        return task

    with pytest.raises(ValueError, match="task 5"):
        list(fork_pool.map_in_threads(failing, range(20), workers=2))


def test_a_threads_copy_takes_the_words_its_source_learned_since(plain_model, corpus):
    source = copy.deepcopy(plain_model)._encoder
    source.cache.clear()
    thread_copy = source.copy()  # made before the source learns anything
    known, fresh = corpus[:100], corpus[100:200]
    source.plain_ids(known)  # learned "by another thread" after the copy
    encoded: list[int] = []
    encode_new = thread_copy.encode_new

    def counting(data, ends):
        encoded.append(len(ends))
        return encode_new(data, ends)

    thread_copy.encode_new = counting
    for texts in (known, fresh + known):  # all words known to the source; some of them
        ids, ends = thread_copy.plain_ids(texts)
        expected = [e.ids for e in plain_model.encode_batch(texts, workers=1)]
        assert [part.tolist() for part in np.split(ids, ends[:-1])] == expected
    unknown = {w for t in fresh for w in regex.findall(GPT2_PATTERN, t)}
    unknown -= {w for t in known for w in regex.findall(GPT2_PATTERN, t)}
    assert encoded == [len(unknown)]  # only the words the source lacked were merged


def test_the_parent_cache_learns_the_words_encoded_in_workers(
    corpus, plain_model, texts, pool_calls, tmp_path, monkeypatch
):
    encoded: list[int] = []  # how many words each call of the kernel was given
    for model in (_model(corpus, tmp_path)[0], copy.deepcopy(plain_model)):
        first = model.encode_batch(texts[:800], workers=2)  # cold: most batches go to the worker
        assert pool_calls
        encoded.clear()
        encode_new = model._encoder.encode_new
        monkeypatch.setattr(
            model._encoder,
            "encode_new",
            lambda data, ends, encode_new=encode_new: (
                encoded.append(len(ends)) or encode_new(data, ends)
            ),
        )
        assert model.encode_batch(texts[:800], workers=1) == first  # every word from the cache
        assert not any(encoded)


@pytest.mark.parametrize("cache_size", [60, 1_000_000])
def test_threads_adding_their_words_to_the_callers_cache_give_the_serial_ids(
    plain_model, texts, pool_calls, monkeypatch, cache_size
):
    """Three threads (four cores said) add the words they encoded to the caller's cache
    whenever it is free, the rest at the end, while the caller encodes with it; the same
    words and different ones, taking turns often, a cache emptied again and again or not."""
    monkeypatch.setattr(fork_pool, "usable_cores", lambda: 4)
    ours = copy.deepcopy(plain_model)
    ours.cache_size = cache_size
    ours._encoder.cache.clear()
    batch = [*texts[:600], *texts[:600], *texts[600:900]]  # each word met in several batches
    expected = [e.ids for e in plain_model.encode_batch(batch, workers=1)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        cold = [e.ids for e in ours.encode_batch(batch, workers=4)]
        warm = [e.ids for e in ours.encode_batch(batch, workers=4)]
    finally:
        sys.setswitchinterval(interval)
    assert cold == expected and warm == expected
    assert [call[1:] for call in pool_calls] == [(4, "threads")] * 2
    assert len(ours._encoder.cache) <= cache_size
    if ours._encoder.emptied == 0:  # every word the threads encoded reached the cache
        words = {w for t in batch for w in regex.findall(GPT2_PATTERN, t)}
        found = ours._encoder.cache.lookup(*utf8_of(sorted(words)))
        assert (found >= 0).all()
    else:
        assert cache_size == 60


def test_a_small_cache_gives_the_same_encodings(corpus, texts, pool_calls, tmp_path):
    ours, _ = _model(corpus, tmp_path)
    small, _ = _model(corpus, tmp_path, cache_size=40)  # emptied every few texts, in workers too
    assert small.encode_batch(texts, workers=2) == ours.encode_batch(texts, workers=1)
    assert len(small._encoder.cache) <= 40


def test_the_cache_sends_and_takes_back_its_words_as_arrays(plain_model, corpus):
    model = copy.deepcopy(plain_model)
    model._encoder.cache.clear()
    expected = [e.ids for e in model.encode_batch(corpus[:200], workers=1)]
    cache, twin = model._encoder.cache, WordCache()
    twin.add(cache.since(0))
    twin.add(cache.since(len(cache) // 2))  # words it knows are skipped
    model._encoder.cache = twin
    emptied = model._encoder.emptied
    assert [e.ids for e in model.encode_batch(corpus[:200], workers=1)] == expected
    assert len(twin) == len(cache) and model._encoder.emptied == emptied


def test_ignore_merges_on_the_plain_path_follows_tokenizers(plain_model, corpus, tmp_path):
    path = tmp_path / "tokenizer.json"
    plain_model.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    for word in ["xyz", "Ġxyz", "Ġquick"]:  # whole words no merge makes (or one already a token)
        vocab.setdefault(word, len(vocab))
    data["model"]["ignore_merges"] = True
    path.write_text(json.dumps(data), encoding="utf-8")
    ours, theirs = ByteLevelBPE.from_tokenizer_json(path), Tokenizer.from_file(str(path))
    assert ours._encoder.ignore_merges and ours._encoder.plain
    texts = [*corpus[:300], *SENTENCES, "xyz xyz, xyzzy quick"]
    got = [e.ids for e in ours.encode_batch(texts)]
    assert got == [e.ids for e in theirs.encode_batch(texts)] == [ours.encode(t).ids for t in texts]
    assert got[-1][:2] == [vocab["xyz"], vocab["Ġxyz"]]


def test_threads_sharing_one_model_get_the_serial_ids(plain_model, texts):
    shared = copy.deepcopy(plain_model)
    shared.cache_size = 200  # emptied again and again while other threads read it
    parts = [texts[i::4] for i in range(4)]
    expected = [[e.ids for e in plain_model.encode_batch(part, workers=1)] for part in parts]

    def encode(part):
        return [
            [e.ids for e in shared.encode_batch(part[i : i + 40], workers=1)]
            for i in range(0, len(part), 40)
        ] + [[shared.encode(t).ids for t in part]]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often (the kernels release the GIL too)
    try:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            got = list(pool.map(encode, parts))
    finally:
        sys.setswitchinterval(interval)
    for part_ids, batches in zip(expected, got, strict=True):
        assert [ids for batch in batches[:-1] for ids in batch] == part_ids == batches[-1]


def test_default_workers_use_the_pool_and_give_the_serial_result(
    corpus, texts, pool_calls, tmp_path
):
    ours, _ = _model(corpus, tmp_path)
    assert ours.encode_batch(texts) == ours.encode_batch(texts, workers=1)
    assert pool_calls[0][1] >= 1  # None: one worker per core the process may use


def test_dropout_draws_in_text_order_whatever_the_workers(corpus, texts, pool_calls, tmp_path):
    theirs = ByteLevelBPETokenizer()
    theirs.train_from_iterator(corpus, 600, show_progress=False)
    vocab, merges = theirs.save_model(str(tmp_path))
    parallel = ByteLevelBPE.from_files(vocab, merges, dropout=0.3, seed=5).encode_batch(
        texts, workers=2
    )
    again = ByteLevelBPE.from_files(vocab, merges, dropout=0.3, seed=5)
    assert parallel == [again.encode(t) for t in texts]
    assert not pool_calls  # dropout stays in the calling process


def _encode_in(model, texts, connection):
    connection.send([e.ids for e in model.encode_batch(texts)])


def test_a_daemonic_process_encodes_alone(corpus, texts, pool_calls, tmp_path):
    ours, _ = _model(corpus, tmp_path)
    here, there = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(
        target=_encode_in, args=(ours, texts, there), daemon=True
    )
    child.start()  # a data loader's worker is daemonic: it may not start a pool of its own
    there.close()  # so that recv fails, not waits, if the child dies
    assert here.recv() == [e.ids for e in ours.encode_batch(texts, workers=1)]
    child.join()
    assert child.exitcode == 0


def test_errors_name_the_text_in_the_parent_and_in_workers(
    corpus, plain_model, texts, pool_calls, tmp_path
):
    ours, _ = _model(corpus, tmp_path)
    for model in (ours, plain_model):  # in processes, in threads
        with pytest.raises(ValueError, match=r"lone surrogate '\\ud800' at character offset 3"):
            model.encode_batch([*texts, "ok \ud800"], workers=2)
    assert [call[2] for call in pool_calls] == ["processes", "threads"]
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        ours.encode_batch([*texts, b"bytes"], workers=2)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        ours.encode_batch(texts, workers=0)
    with pytest.raises(TypeError, match="for one text use encode"):
        ours.encode_batch("one text", workers=2)


ASCII_PIECES = st.sampled_from([*map(chr, range(128)), "'s", "'ll", "  ", " \n", "ab", "42"])
SPACES = st.sampled_from(
    [*" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", "a", "1", "'", ".", "'s"]
)  # where \s differs


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(ASCII_PIECES, max_size=40), st.lists(SPACES, max_size=12)).map("".join))
def test_the_ascii_twin_of_gpt2s_pattern_finds_the_same_pieces(text):
    assert re.findall(GPT2_ASCII_PATTERN, text) == regex.findall(GPT2_PATTERN, text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab .\u00e9\u65e5\U0001f600"), max_size=40)
        | st.text(alphabet="abcdefgh", min_size=7, max_size=25),
        min_size=2,
        max_size=12,
    )
)
def test_the_utf8_copy_ends_each_text_where_its_bytes_end(texts):
    """Where each text ends in the joined UTF-8 bytes: runs of eight ASCII bytes are passed
    at once, so the texts are drawn to end anywhere in such a run, after and before other
    characters, and empty."""
    data, ends = utf8_of(texts)
    assert data.tobytes() == "".join(texts).encode("utf-8")
    assert ends.tolist() == np.cumsum([len(t.encode("utf-8")) for t in texts]).tolist()


def test_ascii_and_other_texts_split_as_the_pattern_says(corpus):
    bpe = ByteLevelBPE()
    texts = [*corpus, "tab\there \x1c\x1f end", "naïve mix of ASCII and 日本語"]
    assert bpe._pretokenizer.words_of(texts) == [regex.findall(GPT2_PATTERN, t) for t in texts]


def test_the_cut_off_counts_work_not_characters(plain_model, corpus, pool_calls, monkeypatch):
    """The same number of characters stays on this thread as English text with a warm cache
    (about a byte of work a character: nothing merged) and goes to threads as Han text
    without spaces with a cold one (three bytes a character, each long word merged: about
    twelve); the ids are the serial ones. The cut-off is below the most the English text
    could take (:func:`never_pays`), so the probe's count decides."""
    monkeypatch.setattr(bpe_batch, "THREAD_BATCH_CHARS", 1_000)
    english = corpus[:300]
    chars = sum(map(len, english))
    rng = np.random.default_rng(0)
    han_chars = [chr(c) for c in 0x4E00 + rng.integers(0, 2_000, chars)]
    han = ["".join(han_chars[i : i + 60]) + "。" for i in range(0, chars, 61)]
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", 3 * chars)
    ends = bpe_batch.length_ends(english)
    assert not bpe_cutoff.never_pays(english, ends, len(english), 3 * chars, bpe_cutoff.THREADS)
    ours = copy.deepcopy(plain_model)
    serial = [e.ids for e in ours.encode_batch(english, workers=1)]  # now warm
    assert [e.ids for e in ours.encode_batch(english, workers=2)] == serial
    assert pool_calls == []
    ours._encoder.cache.clear()
    assert [e.ids for e in ours.encode_batch(han, workers=2)] == [
        plain_model.encode(t).ids for t in han
    ]
    assert [call[1:] for call in pool_calls] == [(2, "threads")]


def test_no_probe_when_the_characters_alone_reach_the_cut_off(
    plain_model, corpus, pool_calls, monkeypatch
):
    """The work is at least a byte a character: from the cut-off's worth of characters
    after the probe every batch goes to the threads at once (none encoded first here to
    measure), below it the first is the probe; the ids are the serial ones either way."""
    monkeypatch.setattr(bpe_batch, "THREAD_BATCH_CHARS", 1_000)
    monkeypatch.setattr(bpe_cutoff, "PROBE_CHARS", 1_000)
    lines = corpus[:300]
    chars = sum(map(len, lines))
    ends = np.cumsum([len(t) for t in lines])
    probe = int(np.searchsorted(ends, 1_000)) + 1
    half = int(np.searchsorted(ends, ends[probe - 1] // 2)) + 1  # the probe in two halves
    after = chars - sum(map(len, lines[:probe]))
    serial = [plain_model.encode(t).ids for t in lines]
    for cutoff, probed in [(after, False), (after + 1, True)]:
        monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", cutoff)
        if probed:  # the work must reach it: three bytes a character at least, as words merge
            monkeypatch.setattr(bpe_cutoff, "THREADS", bpe_cutoff.Weights(1, 3 * cutoff, 0, 0))
        ours = copy.deepcopy(plain_model)
        pool_calls.clear()
        assert [e.ids for e in ours.encode_batch(lines, workers=2)] == serial
        size = max(1_000, chars // (2 * bpe_batch.BATCHES_PER_THREAD))
        bounds = bpe_batch.batch_bounds(ends, size)
        if probed:
            bounds = [0, half, probe, *(b for b in bounds if b > probe)]
        assert pool_calls == [(len(bounds) - 1 - 2 * probed, 2, "threads")]


def test_the_thread_cut_off_leaves_out_the_callers_share(
    plain_model, corpus, pool_calls, monkeypatch
):
    """The same words as many short texts or as one long one make the same choice of
    threads (warm cache): each text's list and Encoding are made by the calling thread
    whatever the others do, so they do not count towards a second thread. Counted, the
    short texts went to threads at this cut-off, and two threads were slower than one on
    the tweets at 65k-1M characters, idle."""
    monkeypatch.setattr(bpe_batch, "THREAD_BATCH_CHARS", 1_000)
    lines = corpus[:300]
    joined = ["\n".join(lines)]
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", 3 * len(joined[0]))
    ours = copy.deepcopy(plain_model)
    ours.encode_batch(lines + joined, workers=1)  # now warm
    assert [e.ids for e in ours.encode_batch(joined, workers=2)] == [
        plain_model.encode(joined[0]).ids
    ]
    assert [e.ids for e in ours.encode_batch(lines, workers=2)] == [
        plain_model.encode(t).ids for t in lines
    ]
    assert pool_calls == []
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", len(joined[0]) // 4)  # the words' work pays
    assert [e.ids for e in ours.encode_batch(lines, workers=2)] == [
        plain_model.encode(t).ids for t in lines
    ]
    assert [call[1:] for call in pool_calls] == [(2, "threads")]


def _generation(obj: object) -> int | None:
    """The collector's generation holding ``obj`` (None: in none)."""
    import gc

    for generation in range(3):
        if any(o is obj for o in gc.get_objects(generation)):
            return generation
    return None


def test_objects_made_with_the_collector_paused_go_to_the_oldest_generation():
    """What ``gc_paused`` covers goes straight to the oldest generation (no young
    collection walks those lists), the collector on again after; a caller's frozen objects
    stay frozen (the lists made then are left to the young collection)."""
    import gc

    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], 1_000_000, 1_000_000)  # no collection of generation 1
    try:
        with bpe_batch.gc_paused():
            assert not gc.isenabled()
            made = [[i, i + 1] for i in range(2_000)]
        assert gc.isenabled()
        assert _generation(made[0]) == 2
        kept = [1, 2]
        gc.freeze()
        try:
            with bpe_batch.gc_paused():
                made = [[i, i + 1] for i in range(2_000)]
            assert _generation(kept) is None  # still frozen
            assert _generation(made[0]) in (0, 1)
        finally:
            gc.unfreeze()
        gc.disable()
        try:
            with bpe_batch.gc_paused():
                pass
            assert not gc.isenabled()
        finally:
            gc.enable()
    finally:
        gc.set_threshold(*thresholds)


def test_the_collector_stays_paused_until_the_last_thread_leaves():
    """Thread A enters, B enters, A leaves: still paused, and nothing moved to the oldest
    generation yet; B leaves: on again. Nested contexts in one thread count the same way."""
    import gc

    step = {name: threading.Event() for name in ("a_in", "b_in", "a_go", "a_out", "b_go")}
    made = []

    def a() -> None:
        with bpe_batch.gc_paused():
            made.append([1, 2])
            step["a_in"].set()
            step["a_go"].wait(30)
        step["a_out"].set()

    def b() -> None:
        with bpe_batch.gc_paused():
            step["b_in"].set()
            step["b_go"].wait(30)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    try:
        threads[0].start()
        assert step["a_in"].wait(30) and not gc.isenabled()
        threads[1].start()
        assert step["b_in"].wait(30)
        step["a_go"].set()
        assert step["a_out"].wait(30)
        assert not gc.isenabled() and _generation(made[0]) == 0
    finally:
        step["a_go"].set()
        step["b_go"].set()
        for thread in threads:
            thread.join(30)
    assert gc.isenabled() and _generation(made[0]) == 2
    with bpe_batch.gc_paused():
        with bpe_batch.gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_fork_while_another_thread_holds_the_pause_lock_can_pause():
    """The forked child has a lock of its own (the parent's holder does not exist there)."""
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with bpe_batch._paused_lock:
            held.set()
            done.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        child = multiprocessing.get_context("fork").Process(target=_pause_once)
        child.start()
        child.join(30)
        if child.is_alive():
            child.kill()
            child.join()
        assert child.exitcode == 0
    finally:
        done.set()
        holder.join(30)


def _pause_once() -> None:
    with bpe_batch.gc_paused():
        pass


def test_the_probe_counts_the_merges_of_the_rest_as_new_words_grow(plain_model):
    """Words come again, so a text's first characters merge more words a character than the
    rest: taken as the characters, the probe's merges overshoot the rest's (here 3.1x); from
    how much less the probe's second half merged than its first (Heaps' law) the estimate
    follows the true work of the rest, which a text of new words all along (every word
    unseen) keeps as the characters."""
    rng = np.random.default_rng(0)
    vocab = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), n))
        for n in rng.integers(3, 10, 20_000)
    ]
    zipf = 1 / np.arange(1, len(vocab) + 1) ** 1.1
    draws = rng.choice(len(vocab), (4_000, 10), p=zipf / zipf.sum())
    repeating = [" ".join(vocab[i] for i in row) for row in draws]
    unseen = [" ".join(vocab[i] for i in range(k, k + 5)) for k in range(0, 20_000, 5)]
    encoder = copy.deepcopy(plain_model)._encoder
    merges = bpe_cutoff.Weights(0, 1, 0, 0)  # the bytes merged alone
    for texts, want_low, want_high in [(repeating, 0.7, 1.5), (unseen, 0.9, 1.1)]:
        encoder.cache.clear()
        estimate, linear, true = bpe_cutoff.estimates(encoder, texts, 4_096, merges)
        assert want_low <= estimate / true <= want_high
        if texts is repeating:
            assert linear / true > 2  # the characters alone overshoot (3.1x)


def test_the_cache_counts_the_words_it_looks_up(plain_model, corpus):
    """Words looked up, each time one comes: by the compiled scan (GPT-2's words) and by
    words cut in Python."""
    cache = copy.deepcopy(plain_model)._encoder.cache
    before = cache.looked_up
    cache.scan(corpus[:100])
    assert cache.looked_up - before == sum(len(ws) for ws in presplit.split_words(corpus[:100]))
    cache.intern(["ab", "c", "ab"])
    assert cache.looked_up - before == sum(len(ws) for ws in presplit.split_words(corpus[:100])) + 3


def test_processes_count_the_words_and_texts_not_the_bytes(
    corpus, tmp_path, pool_calls, monkeypatch
):
    """The regex cuts words in Python, so the processes' work is its words and texts: many
    short words go to the processes, fewer long words of twice the bytes stay here."""
    ours, _ = _model(corpus, tmp_path, add_prefix_space=True)
    short = [" ".join("abcdefghij" * 10)] * 100  # 100 words in 199 characters
    long = [" ".join(["abcdefghijklmnopqrstuvwxyz" * 3] * 6)] * 100  # 6 words in 473

    def work(texts):  # words looked up and TEXT_WORK a text
        words = sum(len(ours._pretokenizer.split(t)) for t in texts)
        return words + bpe_cutoff.TEXT_WORK * len(texts)

    assert sum(map(len, long)) > 2 * sum(map(len, short)) and work(short) > 2 * work(long)
    monkeypatch.setattr(bpe_cutoff, "POOL_WORK", int((work(short) * work(long)) ** 0.5))
    serial = ours.encode_batch(short + long, workers=1)
    assert ours.encode_batch(short, workers=2) == serial[:100]
    assert [call[1:] for call in pool_calls] == [(2, "processes")]
    assert ours.encode_batch(long, workers=2) == serial[100:]
    assert len(pool_calls) == 1  # the long words stayed here


def test_a_warm_probe_stops_after_its_first_half_and_every_text_is_encoded(
    plain_model, corpus, tmp_path, pool_calls, monkeypatch
):
    """Processes: with a warm cache the first half of the probe shows the rest below the
    cut-off: the second half is not encoded apart, no worker runs, and the texts after the
    first half (the probe's second half among them) are encoded here in one call."""
    ours, _ = _model(corpus, tmp_path, add_prefix_space=True)
    serial = ours.encode_batch(corpus, workers=1)  # now warm
    chars = sum(map(len, corpus))  # the most words and texts: no less, or no probe at all
    monkeypatch.setattr(bpe_cutoff, "POOL_WORK", chars + (1 + bpe_cutoff.TEXT_WORK) * len(corpus))
    probes = []
    real = bpe_cutoff.probe_pays
    monkeypatch.setattr(bpe_cutoff, "probe_pays", lambda *a: probes.append(real(*a)) or probes[-1])
    assert ours.encode_batch(corpus, workers=2) == serial
    [(results, parts, pays)] = probes
    assert len(results) == len(parts) == 1 and not pays  # the first half alone
    assert pool_calls == []


def _encode_calls(monkeypatch, encoder) -> list[int]:
    """The number of texts of each ``plain_ids`` call ``encoder`` makes from now on."""
    calls, real = [], encoder.plain_ids
    monkeypatch.setattr(encoder, "plain_ids", lambda texts: calls.append(len(texts)) or real(texts))
    return calls


def test_a_warm_cache_on_threads_encodes_every_text_in_one_call(
    plain_model, corpus, pool_calls, monkeypatch
):
    """GPT-2's settings: the words of the probe's first half are looked up, not encoded;
    with a warm cache they show the rest below the cut-off, so no probe is encoded apart
    and every text is encoded here in one call, as with one worker. With an empty cache
    nothing is looked up and the probe is encoded as before."""
    ours = copy.deepcopy(plain_model)
    monkeypatch.setattr(bpe_cutoff, "PROBE_CHARS", 10**9)  # the probe every text
    chars = sum(map(len, corpus))  # a byte a character at least: no less, or no probe at all
    monkeypatch.setattr(
        bpe_cutoff, "THREAD_WORK", (1 + bpe_cutoff.MERGE_WORK) * (chars + len(corpus))
    )
    serial = ours.encode_batch(corpus, workers=1)  # now warm
    probes = []
    real = bpe_cutoff.probe_pays
    monkeypatch.setattr(bpe_cutoff, "probe_pays", lambda *a: probes.append(real(*a)) or probes[-1])
    calls = _encode_calls(monkeypatch, ours._encoder)
    assert ours.encode_batch(corpus, workers=2) == serial
    assert probes == [] and calls == [len(corpus)] and pool_calls == []
    ours._encoder.cache.clear()  # cold: below this cut-off only once merges count
    monkeypatch.setattr(bpe_cutoff, "THREAD_WORK", 2 * chars)
    calls.clear()
    looked_up, real_unknown = [], ours._encoder.cache.unknown
    monkeypatch.setattr(
        ours._encoder.cache, "unknown", lambda texts: looked_up.append(1) or real_unknown(texts)
    )
    assert ours.encode_batch(corpus, workers=2) == serial
    assert len(probes) == 1 and len(calls) == 2 and sum(calls) == len(corpus)
    assert looked_up == []  # an empty cache knows no word: nothing looked up
    assert ours.encode_batch(corpus[: len(corpus) // 2], workers=2)  # warm: looked up
    assert looked_up == [1]


def test_the_lookup_probe_counts_the_bytes_of_the_words_the_cache_lacks(plain_model, corpus):
    """Every word of the texts that the cache lacks, in bytes, each time it comes, and the
    cache left as it was: against the words split in Python and the cache's keys."""
    cache = copy.deepcopy(plain_model)._encoder.cache
    cache.clear()
    cache.scan(corpus[:50])
    known = set(cache.words.keys())
    before = len(cache), cache.read, cache.merged
    texts = corpus[:200]
    words = [w.encode("utf-8") for ws in presplit.split_words(texts) for w in ws]
    want = sum(len(w) for w in words if w.decode("utf-8") not in known)
    assert 0 < want < sum(map(len, words))
    assert cache.unknown(texts) == (len("".join(texts).encode("utf-8")), want)
    assert (len(cache), cache.read, cache.merged) == before


def test_the_lookup_probe_holds_below_the_cut_off_by_its_own_count(plain_model, corpus):
    """``known_below`` is the count's bound against the cut-off: just above it the rest stays
    here, at it the probe is encoded; a text whose first half holds no character (empty
    lines) is left to the encoded probe."""
    encoder = copy.deepcopy(plain_model)._encoder
    ends = bpe_batch.length_ends(corpus)
    probe = int(np.searchsorted(ends, 2_048)) + 1
    half = bpe_cutoff._half(ends, probe)
    encoder.cache.clear()
    encoder.plain_ids(corpus[: half // 2])  # the first half's words, some of them
    read, unknown = encoder.cache.unknown(corpus[:half])
    bound = (read + bpe_cutoff.THREADS.merged * unknown) * int(ends[-1]) / int(ends[half - 1])
    assert 0 < unknown < read  # the bound counts merges
    assert bpe_cutoff.known_below(encoder, corpus, ends, probe, int(bound) + 1)
    assert not bpe_cutoff.known_below(encoder, corpus, ends, probe, int(bound))
    empty = ["", "", *corpus]
    assert not bpe_cutoff.known_below(encoder, empty, bpe_batch.length_ends(empty), 2, 10**12)


def _most(texts: list[str], weights: bpe_cutoff.Weights) -> float:
    """The most work of ``texts`` as :func:`never_pays` bounds it, written out: every
    character a word, and a byte looked up and merged, four for a character of a text not
    ASCII (a text's added space one more of each)."""
    n, total = len(texts), sum(map(len, texts))
    other = sum(len(t) for t in texts if not t.isascii())
    per_byte = weights.byte + weights.merged
    return weights.word * (total + n) + weights.text * n + per_byte * (total + n + 3 * other)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab .,\n\u00e9\u0416\u65e5\U0001f600"), max_size=60),
        min_size=1,
        max_size=20,
    ),
    st.booleans(),
)
def test_no_text_takes_more_work_than_its_most(plain_model, texts, prefix_space):
    """The most work (:func:`never_pays`) bounds what encoding the texts with an empty cache
    counts: for threads every byte looked up and merged, for processes every word and text.
    A cut-off at the counted work is never above the bound, and the bound is the one
    written out (:func:`_most`), ASCII or not, when the probe is every text; a probe whose
    texts are less ASCII than the rest leaves the count to the probe."""
    encoder = copy.deepcopy(plain_model)._encoder
    encoder.cache.clear()
    if prefix_space:
        texts = [" " + t for t in texts]  # a text's added space, as the processes' settings add
    total, ends, n = sum(map(len, texts)), bpe_batch.length_ends(texts), len(texts)
    before = np.array(bpe_cutoff.counters(encoder.cache))
    encoder.plain_ids(texts)
    read, merged, words = np.array(bpe_cutoff.counters(encoder.cache)) - before
    for weights, work in [
        (bpe_cutoff.THREADS, read + bpe_cutoff.MERGE_WORK * merged),
        (bpe_cutoff.PROCESSES, words + bpe_cutoff.TEXT_WORK * len(texts)),
    ]:
        most = int(_most(texts, weights))
        assert work <= most and not bpe_cutoff.never_pays(texts, ends, n, int(work), weights)
        assert bpe_cutoff.never_pays(texts, ends, n, most + 1, weights)
        assert not bpe_cutoff.never_pays(texts, ends, n, most, weights)
        other = [len(t) for t in texts if not t.isascii()]
        if weights is bpe_cutoff.THREADS and other and sum(other) < total:  # both kinds
            by_ascii = sorted(texts, key=str.isascii)  # the texts not ASCII first
            head = bpe_batch.length_ends(by_ascii)
            assert not bpe_cutoff.never_pays(by_ascii, head, 1, most + 1, weights)


def test_no_probe_where_the_most_work_stays_below_the_cut_off(
    plain_model, corpus, tmp_path, pool_calls, monkeypatch
):
    """Cold, where even every byte merged stays below the cut-off, the texts are encoded here
    in one call (threads) or a batch at a time (processes), with neither a probe nor a
    lookup, and the ids are the serial ones; at the bound itself the probe counts."""
    spaced, _ = _model(corpus, tmp_path, add_prefix_space=True)
    probes, lookups, real = [], [], bpe_cutoff.probe_pays
    monkeypatch.setattr(bpe_cutoff, "probe_pays", lambda *a: probes.append(real(*a)) or probes[-1])
    for ours, name, weights in [
        (copy.deepcopy(plain_model), "THREAD_WORK", bpe_cutoff.THREADS),
        (spaced, "POOL_WORK", bpe_cutoff.PROCESSES),
    ]:
        serial = ours.encode_batch(corpus, workers=1)
        calls = _encode_calls(monkeypatch, ours._encoder) if name == "THREAD_WORK" else []
        real_unknown = ours._encoder.cache.unknown
        monkeypatch.setattr(
            ours._encoder.cache, "unknown", lambda t, r=real_unknown: lookups.append(1) or r(t)
        )
        most = int(_most(corpus, weights))
        for cutoff, probed in [(most + 1, False), (most, True)]:
            monkeypatch.setattr(bpe_cutoff, name, cutoff)
            ours._encoder.cache.clear()
            for record in (probes, calls, pool_calls, lookups):
                record.clear()
            assert ours.encode_batch(corpus, workers=2) == serial
            assert len(probes) == probed and lookups == [] and pool_calls == []
            if name == "THREAD_WORK" and not probed:
                assert calls == [len(corpus)]
