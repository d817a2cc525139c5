"""Byte-level BPE: Sennrich et al.'s merges, learned on UTF-8 bytes after a GPT-2 pre-split.

One file over 400 lines on purpose: it is the public class, each method a short call into
the modules beside it (train_kernel, encoder, batch, files, tiktoken_files), so the whole
API reads in one place.

:class:`ByteLevelBPE` splits text into words with :data:`~rowbook.text.bpe.bytelevel.GPT2_PATTERN`,
spells each word with its UTF-8 bytes (256 base symbols, so no input is ever unknown),
and learns merges of adjacent symbols, most frequent pair first (ties: the smaller pair of
ids). Encoding replays the merges inside each word, lowest rank first. Special tokens are
cut out of the text before anything else and never split.

It learns the same merges as Hugging Face ``tokenizers``' ``BpeTrainer`` given the same
words (ids: special tokens, then the 256 byte symbols in code point order, then one per
merge) and reads and writes its ``tokenizer.json`` form; see :mod:`rowbook.text.bpe.files`.

On the BPE paper's toy corpus (no end-of-word symbol here; see
:mod:`rowbook.text.bpe.classic` for the paper's exact character-level run):

Examples
--------
>>> bpe = ByteLevelBPE().fit_word_counts(
...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=263, min_count=2)
>>> [(step.token, step.count) for step in bpe.merge_trace]
[('es', 9), ('est', 9), ('lo', 7), ('low', 7), ('ew', 6), ('new', 6), ('newest', 6)]
>>> bpe.tokenize("lowest"), bpe.tokenize("newer")
(['low', 'est'], ['new', 'e', 'r'])
>>> encoding = bpe.encode("lowest ✓")
>>> encoding.tokens, encoding.offsets
(['low', 'est', 'Ġ', 'â', 'ľ', 'ĵ'], [(0, 3), (3, 6), (6, 7), (7, 8), (7, 8), (7, 8)])
>>> bpe.decode(encoding.ids)
'lowest ✓'

``encode`` returns an :class:`~rowbook.text.bpe.result.Encoding` (``ids``, ``tokens``,
character ``offsets``, masks), as ``tokenizers`` does. Tokens added after training
(:meth:`ByteLevelBPE.add_tokens`, :meth:`ByteLevelBPE.add_special_tokens`) get the next
ids and are never split.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from rowbook._threads import resolve_workers
from rowbook.checks import InputTypeError, check_int
from rowbook.text.bpe import files as bpe_files
from rowbook.text.bpe import tiktoken_files
from rowbook.text.bpe.batch import encode_batch, encode_texts
from rowbook.text.bpe.bytelevel import GPT2_PATTERN, decode_tokens
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.count import count_words_parallel
from rowbook.text.bpe.encoder import Encoder
from rowbook.text.bpe.options import (
    Specials,
    check_cache_size,
    check_disallowed,
    check_dropout,
    check_fit_args,
    check_trainer_options,
    special_sets,
)
from rowbook.text.bpe.pretokenize import PreTokenizer, check_str, check_texts
from rowbook.text.bpe.result import Encoding, build_encodings, templated
from rowbook.text.bpe.train import check_merge_memory, learn
from rowbook.text.hf_files import TokenizerJsonFiles
from rowbook.text.postprocess import Template
from rowbook.text.token_table import TokenTable
from rowbook.text.word_counts import as_counted, budget_bytes

__all__ = ["ByteLevelBPE"]


class ByteLevelBPE(TokenTable, TokenizerJsonFiles):
    """A byte-level byte-pair-encoding tokenizer (GPT-2 style), learned with :meth:`fit`.

    Parameters
    ----------
    pattern : str, default :data:`~rowbook.text.bpe.bytelevel.GPT2_PATTERN`
        Pre-tokenizer regex (``regex`` package syntax). Merges never cross the pieces it
        cuts; text between matches forms pieces of its own.
    add_prefix_space : bool, default False
        Put a space before each piece of text that does not start with one (as
        ``tokenizers`` does). It breaks ``decode(encode(s)) == s``, so it is off by default.
    cache_size : int, default 100_000
        Number of words whose encoding is kept; the cache is emptied when it is full.
    dropout : float, optional
        BPE-dropout (Provilkov et al. 2020) at encode time, for training-time
        regularisation: each merge is skipped with this probability (``tokenizers``'
        ``BPE(dropout=...)``). Encodings then vary from call to call; the cache is unused.
    seed : int, optional
        Seed of the dropout's random numbers (``tokenizers`` cannot be seeded).
    """

    def __init__(
        self,
        *,
        pattern: str = GPT2_PATTERN,
        add_prefix_space: bool = False,
        cache_size: int = 100_000,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> None:
        self._pretokenizer = PreTokenizer(pattern, add_prefix_space)
        self.template: Template | None = None  # a tokenizer.json's post-processor (Llama 3)
        self._encoder = Encoder(
            self._pretokenizer,
            cache_size=check_cache_size(cache_size),
            dropout=check_dropout(dropout),
            seed=seed,
        )
        self.pattern, self.seed = pattern, seed
        self._views: dict[frozenset[str], Encoder] = {}  # encoders cutting out fewer specials
        self._fitted = False

    # The settings that encoding reads at each call live in the encoder.
    @property
    def add_prefix_space(self) -> bool:
        """Whether a space is put before each piece of text that does not start with one."""
        return self._pretokenizer.add_prefix_space

    @add_prefix_space.setter
    def add_prefix_space(self, value: bool) -> None:
        self._pretokenizer.add_prefix_space = bool(value)

    @property
    def normalizer(self) -> Any:
        """A ``tokenizer.json`` normalizer (``NFC`` in Qwen 2's) run on the text between
        special tokens before the pre-split; ``None``: none."""
        return self._pretokenizer.normalizer

    @normalizer.setter
    def normalizer(self, value: Any) -> None:
        if value is not None and not callable(value):
            raise InputTypeError(f"normalizer must be a callable str -> str or None, got {value!r}")
        self._pretokenizer.normalizer = value
        self._encoder.cache.clear()

    @property
    def cache_size(self) -> int:
        """Number of words whose encoding is kept."""
        return self._encoder.cache_size

    @cache_size.setter
    def cache_size(self, value: int) -> None:
        self._encoder.cache_size = check_cache_size(value)
        self._views.clear()  # made with the old setting

    @property
    def dropout(self) -> float | None:
        """BPE-dropout's probability of skipping a merge at encode time (None: none)."""
        return self._encoder.dropout

    @dropout.setter
    def dropout(self, value: float | None) -> None:
        self._encoder.dropout = check_dropout(value)
        self._views.clear()

    # ----------------------------------------------------------------- training
    def fit(
        self,
        texts: Iterable[str],
        vocab_size: int,
        *,
        min_count: int = 2,
        special_tokens: Sequence[str] = (),
        show_progress: bool = False,
        limit_alphabet: int | None = None,
        initial_alphabet: Sequence[str] = (),
        max_token_length: int | None = None,
        workers: int | None = None,
        memory: float | str | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> ByteLevelBPE:
        """Learn merges from ``texts`` until the vocabulary has ``vocab_size`` entries.

        Parameters
        ----------
        texts : Iterable[str]
            The training corpus, read once (a generator is fine).
        vocab_size : int
            Final size: special tokens + 256 byte symbols + merges. Fewer if the pairs
            run out or drop below ``min_count``.
        min_count : int, default 2
            Stop when the most frequent pair occurs fewer times than this: ``tokenizers``'
            ``min_frequency`` (that name is still accepted, with a ``DeprecationWarning``).
        special_tokens : Sequence[str], default ()
            Tokens given the first ids, never split, and cut out of the training text.
        show_progress : bool, default False
            Show a progress bar while counting words.
        limit_alphabet, initial_alphabet, max_token_length
            ``tokenizers``' ``BpeTrainer`` options; see :mod:`rowbook.text.bpe.options`.
        workers : int, optional
            Processes counting the words (``None``: one per core the process may use).
        memory : float or str, optional
            Budget of the training: gigabytes, or a size such as ``"1GB"``. Past a quarter
            of it the word counts held in RAM go to temporary files (in ``spill_dir``) and
            are merged back, 64-bit counts in first-sighting order: the same merges as
            counting in RAM (:mod:`rowbook.text.word_counts`). The merge step then holds
            every distinct word (:func:`~rowbook.text.bpe.train.merge_floor`: 8 bytes a
            byte of them plus 36 a word, and the pairs the merges make); a budget below
            that floor is refused once the words are counted.
        spill_dir : path, optional
            Where ``memory`` spills (default: the system's temporary folder).
        """
        check_fit_args(vocab_size, min_count, special_tokens)
        budget_bytes(memory)  # checked before the long count
        options = {
            "limit_alphabet": limit_alphabet,
            "initial_alphabet": initial_alphabet,
            "max_token_length": max_token_length,
        }
        check_trainer_options(**options)
        counts = self.count_words(
            texts,
            special_tokens=special_tokens,
            show_progress=show_progress,
            workers=workers,
            memory=memory,
            spill_dir=spill_dir,
        )
        return self.fit_word_counts(
            counts,
            vocab_size,
            min_count=min_count,
            special_tokens=list(special_tokens),
            memory=memory,
            **options,
        )

    def count_words(
        self,
        texts: Iterable[str],
        *,
        special_tokens: Sequence[str] = (),
        show_progress: bool = False,
        workers: int | None = 1,
        memory: float | str | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> Mapping[str, int]:
        """The pre-tokenized words of ``texts`` and their counts: the first pass of :meth:`fit`,
        which :meth:`fit_word_counts` finishes (counts of shards can be added in between).

        ``workers`` processes count batches of texts (``None``: one per core the process may
        use); the result is the serial count, same counts in the same order
        (:mod:`rowbook.text.bpe.count`): a ``Counter``, or within ``memory`` (as in :meth:`fit`) a compact
        :class:`~rowbook.text.word_counts.CountedWords`.

        Examples
        --------
        >>> ByteLevelBPE().count_words(["the cat", "the hat"])
        Counter({'the': 2, ' cat': 1, ' hat': 1})
        """
        specials = list(special_tokens)
        workers = resolve_workers(workers)
        texts = tqdm(texts, desc="count words", unit="text", disable=not show_progress)
        budget = budget_bytes(memory)
        if workers > 1 or budget is not None:
            return count_words_parallel(
                self._pretokenizer, texts, specials, workers, budget, spill_dir
            )
        return self._pretokenizer.count_words(texts, specials)

    def fit_word_counts(
        self,
        word_counts: Mapping[str, int],
        vocab_size: int,
        *,
        min_count: int = 2,
        special_tokens: Sequence[str] = (),
        limit_alphabet: int | None = None,
        initial_alphabet: Sequence[str] = (),
        max_token_length: int | None = None,
        memory: float | str | None = None,
    ) -> ByteLevelBPE:
        """Learn merges from already pre-tokenized words and their frequencies (the
        parameters as in :meth:`fit`; within ``memory`` the merge step must be able to hold
        the distinct words, :func:`~rowbook.text.bpe.train.merge_floor`, or it is refused
        before it starts)."""
        specials = check_fit_args(vocab_size, min_count, special_tokens)
        alphabet = check_trainer_options(limit_alphabet, initial_alphabet, max_token_length)
        budget = budget_bytes(memory)
        words = as_counted(word_counts)  # checks each count of a mapping
        if budget is not None:
            n_ids = max(vocab_size, len(specials) + 256 + len(alphabet))
            check_merge_memory(words, n_ids, memory, budget)
        vocab, merges, trace = learn(
            words,
            vocab_size,
            min_count,
            specials,
            initial_alphabet=alphabet,
            max_token_length=max_token_length,
        )
        self._set_model(vocab, merges, specials, trace)
        return self

    # ------------------------------------------------------------ learned state
    def _set_model(
        self,
        vocab: dict[str, int],
        merges: list[tuple[str, str]],
        specials: list[str],
        trace: list[MergeStep] | None = None,
        ignore_merges: bool = False,
        added: Sequence[tuple[str, bool]] = (),
        tiktoken: bool = False,
    ) -> None:
        """Install a model; ``added`` lists the ``(token, special)`` added after training;
        ``tiktoken``: encode as tiktoken does (:mod:`rowbook.text.bpe.tiktoken_files`)."""
        unsplit = list(dict.fromkeys([*specials, *(t for t, _ in added)]))  # cut out, never split
        tables = bpe_files.check_model(vocab, merges, unsplit, rank_by_token=tiktoken)
        self._vocab, self._merges, self._specials = dict(vocab), list(merges), list(specials)
        self._added = list(added)
        self._id_to_token = tables["id_to_token"]
        self._id_bytes = tables["id_bytes"]
        self._special_ids = {s: vocab[s] for s in specials}
        self._unsplit_ids = {s: vocab[s] for s in unsplit}
        self._trace = trace or [MergeStep(a, b, None) for a, b in merges]
        self._ignore_merges, self._tiktoken = ignore_merges, tiktoken
        self._views.clear()
        id_len = np.array([len(b) for b in self._id_bytes], dtype=np.int64)  # (V,)
        # tiktoken looks a whole word up among its ranks only, never among its special tokens
        whole = (
            {t: i for t, i in vocab.items() if t not in self._special_ids} if tiktoken else vocab
        )
        self._encoder.set_model(whole, tables, self._unsplit_ids, id_len, ignore_merges)
        self._fitted = True

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise ValueError(
                "this ByteLevelBPE is not fitted yet: call fit(...), "
                "ByteLevelBPE.load(...) or ByteLevelBPE.from_tokenizer_json(...) first"
            )

    @property
    def vocab(self) -> dict[str, int]:
        """Token (byte-level spelling, or special token) -> id."""
        self._check_fitted()
        return dict(self._vocab)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in rank order, as pairs of byte-level spellings."""
        self._check_fitted()
        return list(self._merges)

    @property
    def merge_trace(self) -> list[MergeStep]:
        """The merges with the pair count each had when it was learned (``None`` if loaded
        from a file that does not record it)."""
        self._check_fitted()
        return list(self._trace)

    # ----------------------------------------------------------------- encoding
    def encode(
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        allowed_special: Specials | None = None,
        disallowed_special: Specials | None = None,
    ) -> Encoding:
        """The :class:`~rowbook.text.bpe.result.Encoding` of ``text``: ids, tokens, offsets, masks.

        Added tokens and the special tokens ``allowed_special`` allows become their ids,
        unsplit; a special token ``disallowed_special`` names is a ``ValueError`` when the
        text holds it; any other is encoded as text. Both take ``"all"`` or a set of special
        tokens, as tiktoken's ``encode``; by default (``None``) a BPE read from a
        ``.tiktoken`` file takes tiktoken's defaults (none allowed, all disallowed), any
        other ``tokenizers``' behaviour (all allowed). ``add_special_tokens`` puts the
        template's tokens around the ids (``<|begin_of_text|>`` of a Llama 3
        ``tokenizer.json``; a BPE trained by rowbook has no template).
        """
        self._check_fitted()
        encoder = self._encoder_for([check_str(text)], allowed_special, disallowed_special)
        ids_of, prefixed = encode_texts(encoder, [text])
        encodings = build_encodings(
            [text], ids_of, prefixed, self._id_to_token, encoder.id_len, encoder.align
        )
        return self._templated(encodings, add_special_tokens)[0]

    def _templated(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if not add_special_tokens or self.template is None:
            return encodings
        return [templated(e, self.template) for e in encodings]

    def _encoder_for(
        self, texts: Sequence[str], allowed: Specials | None, disallowed: Specials | None
    ) -> Encoder:
        """The encoder that cuts out the added tokens and the ``allowed`` special tokens,
        after checking that no text holds a ``disallowed`` one (tiktoken's rules)."""
        allowed_set, refused = special_sets(self._special_ids, allowed, disallowed, self._tiktoken)
        if refused is not None:
            check_disallowed(texts, refused)
        if len(allowed_set) == len(self._special_ids):
            return self._encoder
        if allowed_set not in self._views:
            kept = {t: i for t, i in self._unsplit_ids.items() if t not in self._special_ids}
            kept |= {t: self._special_ids[t] for t in allowed_set}
            self._views[allowed_set] = self._encoder.with_unsplit(kept)
        return self._views[allowed_set]

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        workers: int | None = None,
        add_special_tokens: bool = True,
        allowed_special: Specials | None = None,
        disallowed_special: Specials | None = None,
    ) -> list[Encoding]:
        """:meth:`encode` for each text, each distinct word encoded once, on every core.

        Parameters
        ----------
        texts : Sequence[str]
        workers : int, optional
            Threads or processes that share the work (``None``: one per core the process may
            use), when the work of the texts, counted on a probe of the first 2K characters
            in two halves and carried to the rest, is large enough
            (:mod:`rowbook.text.bpe.cutoff`). GPT-2's settings share it with ``workers - 1``
            threads (the compiled pre-split releases the GIL), counting bytes looked up and
            three times the bytes of the words merged, the merges carried to the rest as
            new words grow: English lines from about 330K characters cold and 650K warm, Han
            text from about 60K cold. With special or added tokens, a prefix
            space or another pattern, ``workers - 1`` forked processes share it, counting
            the words the regex cuts in Python and ten a text (each process merges its own
            words): from about 1M characters of tweets and 1.4M of news lines. The
            encodings are the same for every ``workers``; with ``dropout`` all texts are
            encoded here, in order (:mod:`rowbook.text.bpe.batch`).
        add_special_tokens, allowed_special, disallowed_special
            As in :meth:`encode`.
        """
        self._check_fitted()
        texts = check_texts(texts)
        workers = resolve_workers(workers)
        encoder = self._encoder_for(texts, allowed_special, disallowed_special)
        return self._templated(encode_batch(encoder, texts, workers), add_special_tokens)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` as byte-level spellings (``"Ġworld"``; special tokens as
        :meth:`encode` treats them by default)."""
        self._check_fitted()
        encoder = self._encoder_for([check_str(text)], None, None)
        return [self._id_to_token[i] for i in encode_texts(encoder, [text])[0][0]]

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Text of tokens, as ``tokenizers``' ``ByteLevel`` decoder gives it (no vocabulary lookup).

        A token with a character outside the byte alphabet stands for itself.
        """
        return decode_tokens(tokens)

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids``: bytes concatenated, then UTF-8 decoded (invalid sequences, which
        only a cut through a character produces, become U+FFFD). Special tokens are left
        out unless ``skip_special_tokens=False``, as ``tokenizers``' default."""
        self._check_fitted()
        ids = self._checked_ids(ids)
        skip = set(self._special_ids.values()) if skip_special_tokens else ()
        table = self._id_bytes
        data = b"".join([table[i] for i in ids.tolist() if i not in skip])
        return data.decode("utf-8", errors="replace")

    # ----------------------------------------------------------- added tokens
    def _add(self, tokens: Sequence[str], special: bool) -> int:
        self._check_fitted()
        if isinstance(tokens, str) or any(not isinstance(t, str) or not t for t in tokens):
            raise InputTypeError(f"tokens must be a sequence of non-empty str, got {tokens!r}")
        vocab, specials, added = dict(self._vocab), list(self._specials), list(self._added)
        new = 0
        for token in tokens:
            if token in self._unsplit_ids or token in specials or any(t == token for t, _ in added):
                continue
            if token not in vocab:
                vocab[token], new = len(vocab), new + 1
            added.append((token, special))
            specials += [token] if special else []
        self._set_model(
            vocab, self._merges, specials, self._trace, self._ignore_merges, added, self._tiktoken
        )
        return new

    def truncated(self, vocab_size: int) -> ByteLevelBPE:
        """The model a training run stopped at ``vocab_size`` entries learns: this one's first
        merges, up to the one that made token ``vocab_size - 1``.

        Training takes the most frequent pair first whatever the target size, so a smaller
        vocabulary's merges are a prefix of a larger one's (the tests train both and compare):
        one run serves every size up to its own. Tokens added after training are refused.

        Examples
        --------
        >>> texts = ["the cat sat on the mat", "the dog sat on the log"] * 3
        >>> big = ByteLevelBPE().fit(texts, 270)
        >>> big.truncated(260).merges == ByteLevelBPE().fit(texts, 260).merges
        True
        """
        self._check_fitted()
        check_int("vocab_size", vocab_size, len(self._specials) + 256)
        if self._added:
            raise ValueError(
                "truncated: this BPE has tokens added after training, which a "
                "shorter run would number differently"
            )
        if vocab_size >= len(self):
            return bpe_files.from_dict(type(self), bpe_files.to_dict(self), "this BPE")
        document = bpe_files.to_dict(self)
        kept = []
        for left, right, count in document["merges"]:
            if document["vocab"][left + right] >= vocab_size:
                break
            kept.append([left, right, count])
        vocab = {t: i for t, i in document["vocab"].items() if i < vocab_size}
        document |= {"vocab": vocab, "merges": kept}
        return bpe_files.from_dict(type(self), document, "the truncated BPE")

    # ----------------------------------------------------------------- files
    _files = bpe_files  # where its files are read and written (TokenizerJsonFiles)

    @classmethod
    def from_tiktoken(
        cls,
        path: str | os.PathLike,
        encoding: str | None = None,
        *,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> ByteLevelBPE:
        """Read a tiktoken ``.tiktoken`` rank file: the ids of tiktoken's encoding
        (:mod:`rowbook.text.bpe.tiktoken_files`).

        ``encoding`` is ``"r50k_base"``, ``"p50k_base"``, ``"cl100k_base"`` or
        ``"o200k_base"`` (by default the file's name, else its number of ranks, tells it);
        ``pattern`` and ``special_tokens`` (token -> id) replace the encoding's. Special
        tokens are then handled as tiktoken does: see :meth:`encode`.
        """
        return tiktoken_files.load_tiktoken(
            cls, path, encoding, pattern=pattern, special_tokens=special_tokens
        )

    @classmethod
    def from_ranks(
        cls, ranks: Mapping[bytes, int], *, pattern: str, special_tokens: Mapping[str, int]
    ) -> ByteLevelBPE:
        """The BPE of tiktoken's ``Encoding(name, pat_str=pattern, mergeable_ranks=ranks,
        special_tokens=special_tokens)``: the same ids (:mod:`rowbook.text.bpe.tiktoken_files`)."""
        return tiktoken_files.from_ranks(cls, ranks, pattern=pattern, special_tokens=special_tokens)

    def to_tiktoken(self, path: str | os.PathLike) -> None:
        """Write the ranks as a ``.tiktoken`` file: every token but the special ones, by id.

        The file keeps neither the pattern nor the special tokens (give them to
        :meth:`from_tiktoken`), and tiktoken merges by rank, not by merge list: see
        :mod:`rowbook.text.bpe.tiktoken_files`.
        """
        tiktoken_files.save_tiktoken(self, path)

    @classmethod
    def from_files(
        cls,
        vocab: str | os.PathLike,
        merges: str | os.PathLike,
        *,
        add_prefix_space: bool = False,
        dropout: float | None = None,
        seed: int | None = None,
    ) -> ByteLevelBPE:
        """Read a GPT-2-style ``vocab.json`` + ``merges.txt`` pair (``save_model``'s files).

        The same model as ``tokenizers.ByteLevelBPETokenizer(vocab, merges)``: GPT-2's
        pre-split, no special tokens (the pair does not record them; add them with
        :meth:`add_special_tokens`).
        """
        bpe = cls(add_prefix_space=add_prefix_space, dropout=dropout, seed=seed)
        token_ids, pairs = bpe_files.read_vocab_merges(vocab, merges)
        bpe._set_model(token_ids, pairs, [])
        return bpe

    def __repr__(self) -> str:
        size = f"{len(self)} tokens" if self._fitted else "not fitted"
        return f"ByteLevelBPE({size})"

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {
            "pattern": self.pattern,
            "add_prefix_space": self.add_prefix_space,
            "cache_size": self.cache_size,
            "dropout": self.dropout,
            "seed": self.seed,
        }
