"""What WordPiece, Unigram and SentencePiece's BPE share: ``tokenizers``' pipeline around a model.

A Hugging Face ``Tokenizer`` runs, for each text::

    added tokens cut out of the raw text (never split)
      -> normalizer -> pre-tokenizer (words) -> model (ids of each word) -> template

and :class:`SubwordTokenizer` runs the same steps with the same parts
(:mod:`rowbook.text.components`, :mod:`rowbook.text.postprocess`). A subclass is the model:
it gives the ids of a batch of words (``_encode_words``, a numba kernel) and, for tokens and
offsets, the pieces of one word (``_segment_word``). Everything else is here, once:
``encode`` / ``encode_batch`` (an :class:`~rowbook.text.bpe.result.Encoding`: ids, tokens,
offsets, masks), ``tokenize``, ``decode``, ``token_to_id``, added tokens, and the word cache.

Ids first, the rest when read: :meth:`SubwordTokenizer.encode` normalizes with plain ``str``
operations, looks each distinct word up once in the word cache (the kernel encodes the words
it lacks, all in one call) and joins the ids. Tokens and offsets are computed when an
encoding's ``tokens`` or ``offsets`` is first read, by running the text again through the
aligned normalizer (:mod:`rowbook.text.aligned`). A model without a pre-tokenizer (a
SentencePiece model, which sees whole sentences) skips the cache.

:meth:`SubwordTokenizer.encode_batch` with ``workers > 1`` shares batches of texts between
this process and forked ones, as :meth:`ByteLevelBPE.encode_batch
<rowbook.text.ByteLevelBPE.encode_batch>` does (:func:`rowbook.fork_pool.map_in_order`).
A model with a compiled job for whole texts (``_batch_job``: a SentencePiece ``.model``'s,
:mod:`rowbook.text.sentencepiece.batch`) encodes every batch in it, ids first, and shares
the batches out to threads instead (:func:`rowbook.fork_pool.map_in_threads`: the job
releases the GIL).
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from types import MethodType
from typing import Any

import numpy as np

from rowbook._threads import resolve_workers
from rowbook.checks import InputTypeError
from rowbook.fork_pool import map_in_order, map_in_threads
from rowbook.text.aligned import Aligned
from rowbook.text.batches import list_batches, text_batches
from rowbook.text.bpe.batch import gc_paused
from rowbook.text.bpe.options import special_regex
from rowbook.text.bpe.pretokenize import check_str, check_texts
from rowbook.text.bpe.result import Encoding
from rowbook.text.token_table import TokenTable
from rowbook.text.trie import joined

__all__ = ["SubwordTokenizer"]

POOL_CHARS = 1 << 20  # fewer characters are encoded in this process: forking costs more
BATCH_CHARS = 1 << 17


class SubwordTokenizer(TokenTable):
    """The shared half of :class:`~rowbook.text.WordPiece`, :class:`~rowbook.text.Unigram` and
    :class:`~rowbook.text.SentencePieceBPE`; see the module docstring."""

    normalizer: Any = None
    pre_tokenizer: Any = None
    template: Any = None
    decoder: Any = None
    cache_size: int = 100_000
    _fitted = False

    # --------------------------------------------------------------- the model's half
    def _encode_words(self, words: list[str]) -> list[tuple[int, ...]]:
        raise NotImplementedError

    def _segment_word(self, word: str) -> list[tuple[int, str, int, int]]:
        """``(id, token, start, end)`` of each piece of ``word`` (character positions)."""
        raise NotImplementedError

    def _batch_job(self) -> Any:
        """A compiled job from texts to all their ids ``(N,)`` and each text's count ``(B,)``
        that releases the GIL, when the model has one for its current settings (a
        ``.model`` file's: :class:`rowbook.text.sentencepiece.batch.Job`); ``None`` else."""
        return None

    # --------------------------------------------------------------- learned state
    def _install(self, id_to_token: Sequence[str], added: Sequence[tuple[str, bool]]) -> None:
        """Set the vocabulary and the added tokens ``(token, special)`` (cut out, never split)."""
        self._id_to_token = list(id_to_token)
        self._vocab = {t: i for i, t in enumerate(self._id_to_token)}
        if len(self._vocab) != len(self._id_to_token):
            seen: set[str] = set()
            twice = next(t for t in self._id_to_token if t in seen or seen.add(t))
            raise ValueError(f"the vocabulary holds {twice!r} twice; every token needs one id")
        self._added = list(dict.fromkeys((t, bool(s)) for t, s in added))
        for token, _ in self._added:
            if token not in self._vocab:
                raise ValueError(f"added token {token!r} is not in the vocabulary")
        self._added_ids = {t: self._vocab[t] for t, _ in self._added}
        self._special_ids = {t: self._vocab[t] for t, s in self._added if s}
        self._cutter = special_regex(list(self._added_ids))
        self._cache: dict[str, tuple[int, ...]] = {}
        self._id_ints = np.arange(len(self._id_to_token)).astype(object)  # (V,) see _unpacked
        self._fitted = True
        self._on_install()

    def _on_install(self) -> None:
        """Build the model's tables for the vocabulary just installed (a subclass does)."""

    def _check_fitted(self) -> None:
        if not self._fitted:
            name = type(self).__name__
            raise ValueError(
                f"this {name} is not fitted yet: call fit(...), {name}.load(...) or "
                f"{name}.from_tokenizer_json(...) first"
            )

    # --------------------------------------------------------------- encoding
    def _parts(self, text: str) -> list[tuple[str, int | None, int]]:
        """``(piece, added token id or None, start)``: the text cut at added tokens."""
        if self._cutter is None:
            return [(text, None, 0)] if text else []
        parts, start = [], 0
        for piece in self._cutter.split(text):
            if piece:
                parts.append((piece, self._added_ids.get(piece), start))
            start += len(piece)
        return parts

    def _words(self, piece: str, first: bool) -> list[str]:
        normalized = self.normalizer(piece) if self.normalizer is not None else piece
        if self.pre_tokenizer is None:
            return [normalized] if normalized else []
        return self.pre_tokenizer.words(normalized, first)

    def _training_words(self, text: str) -> list[str]:
        """The words a trainer counts in ``text``: normalized and pre-tokenized, added tokens
        not cut out (``tokenizers`` trains a fresh tokenizer the same way)."""
        return self._words(text, True)

    def _lookup(self, words: list[str]) -> dict[str, tuple[int, ...]] | None:
        """Ids of each of ``words``: the cache, filled with the words it lacked."""
        if self.pre_tokenizer is None:  # whole sentences: a cache would only grow
            unique = list(dict.fromkeys(words))
            return dict(zip(unique, self._encode_words(unique), strict=True))
        cache = self._cache
        missing = [w for w in dict.fromkeys(words) if w not in cache]
        if not missing:
            return cache
        new = dict(zip(missing, self._encode_words(missing), strict=True))
        if len(cache) + len(new) <= self.cache_size:
            cache.update(new)
            return cache
        table = {w: cache[w] for w in dict.fromkeys(words) if w in cache}
        table.update(new)
        cache.clear()
        if len(table) <= self.cache_size:
            cache.update(table)
        return table

    def _ids_of(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of each text (no template), each distinct word encoded once."""
        chain = itertools.chain.from_iterable
        job = self._batch_job() if self._cutter is None else None
        if job is not None:
            return self._job_ids(job, texts)
        if self._cutter is None:
            words_of = [self._words(t, True) for t in texts]
            table = self._lookup(list(chain(words_of)))
            get = table.__getitem__
            return [list(chain(map(get, words))) for words in words_of]
        parts_of = [self._parts(t) for t in texts]
        segments = [[(i, self._words(p, s == 0)) for p, i, s in parts] for parts in parts_of]
        table = self._lookup([w for text in segments for i, ws in text if i is None for w in ws])
        get, out = table.__getitem__, []
        for text in segments:
            ids: list[int] = []
            for i, ws in text:
                if i is None:
                    ids.extend(chain(map(get, ws)))
                else:
                    ids.append(i)
            out.append(ids)
        return out

    def _job_ids(self, job: Any, texts: Sequence[str], cache: Any = None) -> list[list[int]]:
        """Ids of each text by the compiled ``job``, in batches of :data:`BATCH_CHARS` with
        one word cache (``cache``, or one made for ``texts``): a single call over 10 MB made
        120 MB of arrays (code points, ids, their lists), whose first touch cost more than
        the batches' loop."""
        batches = list_batches(texts, BATCH_CHARS) if len(texts) > 1 else [texts]
        if len(batches) == 1:
            return _unpacked(job(texts, cache), self._id_ints)
        cache = job.word_cache(sum(map(len, texts))) if cache is None else cache
        ids_of: list[list[int]] = []
        for batch in batches:
            ids_of += _unpacked(job(batch, cache), self._id_ints)
        return ids_of

    def _encodings(
        self, texts: Sequence[str], ids_of: list[list[int]], add_special_tokens: bool
    ) -> list[Encoding]:
        """The :class:`Encoding` of each text from its ids (a template's tokens added)."""
        lazy, tokens_offsets = functools.partial, self._tokens_offsets
        if not add_special_tokens or self.template is None:  # most texts: nothing to add
            # each text's source is a method bound to the text: 150 ns where a partial took
            # 350 (14 ms of the GIL's time on 10 MB of news lines)
            method = functools.partial(tokens_offsets, before=0, after=0)
            return [
                Encoding(ids, source=MethodType(method, text))
                for text, ids in zip(texts, ids_of, strict=True)
            ]
        out = []
        for text, ids in zip(texts, ids_of, strict=True):
            ids, before, after = self.template.apply(ids)
            mask = (
                [1] * before + [0] * (len(ids) - before - after) + [1] * after
                if before + after
                else None
            )
            source = lazy(tokens_offsets, text, before, after)
            out.append(Encoding(ids, source=source, special_tokens_mask=mask))
        return out

    def _tokens_offsets(
        self, text: str, before: int, after: int
    ) -> tuple[list[str], list[tuple[int, int]]]:
        """Tokens and character offsets of ``text``, the slow way (aligned normalization)."""
        tokens, offsets = [], []
        for piece, added, start in self._parts(text):
            if added is not None:
                tokens.append(piece)
                offsets.append((start, start + len(piece)))
                continue
            aligned = Aligned.of(piece, start)
            aligned = self.normalizer.aligned(aligned) if self.normalizer is not None else aligned
            if self.pre_tokenizer is None:
                words = [aligned] if aligned.text else []
            else:
                words = self.pre_tokenizer.aligned_words(aligned, start == 0)
            for word in words:
                for _, token, a, b in self._segment_word(word.text):
                    tokens.append(token)
                    offsets.append(word.span(a, b))
        edge = self.template
        if before or after:
            tokens = [*edge.before, *tokens, *edge.after]
            offsets = [(0, 0)] * before + offsets + [(0, 0)] * after
        return tokens, offsets

    def encode(self, text: str, *, add_special_tokens: bool = True) -> Encoding:
        """The :class:`~rowbook.text.bpe.result.Encoding` of ``text``: ids, tokens, offsets,
        masks. ``add_special_tokens`` adds the template's tokens (``[CLS] ... [SEP]``)."""
        self._check_fitted()
        return self._encodings([text], self._ids_of([check_str(text)]), add_special_tokens)[0]

    def encode_batch(
        self, texts: Sequence[str], *, add_special_tokens: bool = True, workers: int | None = None
    ) -> list[Encoding]:
        """:meth:`encode` for each text, each distinct word encoded once, on ``workers``
        processes (``None``: one per core the process may use; batches of over a million
        characters in all are shared with forked processes, or with threads where the model
        has a compiled job for whole texts). The result does not depend on ``workers``."""
        self._check_fitted()
        texts = check_texts(texts)
        workers = resolve_workers(workers)
        with gc_paused():
            chars = sum(map(len, texts))
            if workers == 1 or chars < POOL_CHARS:
                ids_of = self._ids_of(texts)
            else:
                self._ids_of(texts[:1])  # compile the kernels before the fork
                job = self._batch_job() if self._cutter is None else None
                if job is not None:
                    batches = list_batches(texts, max(BATCH_CHARS, chars // (8 * workers)))
                    return self._threaded(job, batches, workers, add_special_tokens)
                batches = text_batches(texts, max(BATCH_CHARS, chars // (8 * workers)))
                ids_of = []
                for part in map_in_order(self._packed_ids, batches, workers, here=self._ids_of):
                    ids_of += _unpacked(part, self._id_ints)
            return self._encodings(texts, ids_of, add_special_tokens)

    def _threaded(
        self, job: Callable, batches: Iterable[list[str]], workers: int, add_special_tokens: bool
    ) -> list[Encoding]:
        """The encodings of ``batches`` by the compiled ``job`` on ``workers`` threads.

        The other threads run only the job, compiled code without the GIL from a batch's
        joined text to its ids. This thread does all the Python: it joins each batch's
        texts, makes the lists and ``Encoding`` objects of each result as it comes, in
        order, and runs a job itself only when the next result is not ready
        (:func:`~rowbook.fork_pool.map_in_threads`), so the GIL's work overlaps the other
        threads' jobs and is never handed back and forth between two threads that both want
        it (each thread making its own batch's lists did that: 10 MB of news lines, the
        second core added 1.21x). Made after all the jobs instead, the lists left the second
        core idle for a third of the time. Each thread keeps one word cache for all its
        batches: none but its first starts cold. Batches are about an eighth of a worker's
        share, each one kernel call (10 MB of news lines at load 12-15: 16 batches 1.01 s,
        78 batches of ``BATCH_CHARS`` 1.09 s)."""

        local = threading.local()  # each thread's word cache, kept for all its batches

        def ids(task: tuple[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            if not hasattr(local, "cache"):
                local.cache = job.word_cache()
            return job.run(task, local.cache)

        batches = list(batches)
        tasks = map(joined, batches)
        out: list[Encoding] = []
        for batch, part in zip(batches, map_in_threads(ids, tasks, workers), strict=True):
            out += self._encodings(batch, _unpacked(part, self._id_ints), add_special_tokens)
        return out

    def _packed_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """A worker's batch: all ids ``(N,)`` int32 and the count per text ``(B,)``."""
        with gc_paused():
            ids_of = self._ids_of(texts)
            lengths = np.fromiter(map(len, ids_of), dtype=np.int64, count=len(ids_of))
            flat = np.fromiter(
                itertools.chain.from_iterable(ids_of), dtype=np.int32, count=int(lengths.sum())
            )
        return flat, lengths

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (no template tokens)."""
        return self.encode(text, add_special_tokens=False).tokens

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids`` through the decoder (special tokens left out unless
        ``skip_special_tokens=False``, as ``tokenizers``' default)."""
        self._check_fitted()
        ids = self._checked_ids(ids)
        skip = set(self._special_ids.values()) if skip_special_tokens else set()
        kept = [i for i in ids.tolist() if i not in skip]
        return self._decode_tokens(kept, [self._id_to_token[i] for i in kept])

    def _decode_tokens(self, ids: list[int], tokens: list[str]) -> str:
        """Text of the tokens (and their ids) through the decoder; ``tokenizers`` joins them
        with spaces when there is none."""
        return self.decoder(tokens) if self.decoder is not None else " ".join(tokens)

    # --------------------------------------------------------------- added tokens
    def _add(self, tokens: Sequence[str], special: bool) -> int:
        self._check_fitted()
        if isinstance(tokens, str) or any(not isinstance(t, str) or not t for t in tokens):
            raise InputTypeError(f"tokens must be a sequence of non-empty str, got {tokens!r}")
        new = [t for t in dict.fromkeys(tokens) if t not in self._vocab]
        added = [*self._added, *((t, special) for t in tokens if t not in self._added_ids)]
        self._install([*self._id_to_token, *new], added)
        return len(new)


def _unpacked(part: Any, id_ints: np.ndarray) -> list[list[int]]:
    """Each text's ids from a batch's ``(all ids, count per text)``, the ints taken from
    ``id_ints`` (the int of every id, made once: copying references to them costs less than
    making 2.4 million ints, 19 ms against 47 ms on 10 MB of NewsArticles)."""
    if isinstance(part, list):
        return part
    flat, lengths = part
    ids, ends = id_ints[flat].tolist(), np.cumsum(lengths).tolist()
    return [ids[end - n : end] for end, n in zip(ends, lengths.tolist(), strict=True)]
