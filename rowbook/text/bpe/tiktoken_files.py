"""tiktoken's ``.tiktoken`` rank files, read into a :class:`~rowbook.text.ByteLevelBPE` with tiktoken's ids.

A ``.tiktoken`` file holds one line per token: the base64 of the token's bytes, a space,
its rank, which is also its id (tiktoken's ``load_tiktoken_bpe`` / ``dump_tiktoken_bpe``).
It holds no pattern and no special tokens: tiktoken states them in its code, and
:data:`ENCODINGS` holds them for ``r50k_base``, ``p50k_base``, ``cl100k_base`` and
``o200k_base`` (the rank files themselves come from the user; nothing is downloaded).

How tiktoken merges (its ``_educational.py``, and ``_byte_pair_merge`` in Rust): a word that
is a token is that token; else, from the word's bytes, the adjacent pair whose concatenation
is the token of lowest rank is merged (the leftmost on ties), until no adjacent pair makes a
token. There is no list of merges: every split of a token into two tokens merges at that
token's rank, as GPT-2's merges became ranks (``data_gym_to_mergeable_bpe_ranks``: merge
``i`` makes the token of rank ``256 + i``). A merge list ranks each pair on its own
(``tokenizers``' rule), and that gives other ids in general. With the ranks ``b c -> bc``,
``a b -> ab``, ``ab c -> abc``, tiktoken turns the word ``abcx`` into ``a bc x`` and then,
``a`` + ``bc`` spelling the token ``abc``, into ``abc x``; the merge list stops at
``a bc x``, having no merge ``(a, bc)``. So :func:`from_ranks` builds a BPE whose merges are
every split of every token, each ranked by the token it makes (``rank_by_token`` in
:func:`rowbook.text.bpe.files.check_model`), a word that is a token taken whole
(``ignore_merges``), the pattern matched with the ``regex`` package, and special tokens
handled as tiktoken's ``encode`` does (``allowed_special``, ``disallowed_special``, by default
a ``ValueError`` for text that holds one).

Examples
--------
>>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
>>> bpe = from_ranks(ranks, pattern=r"\\S+|\\s+", special_tokens={"<|end|>": 259})
>>> bpe.encode("abcx").ids
[258, 120]
>>> bpe.encode("abc<|end|>", allowed_special="all").ids
[258, 259]
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rowbook.corpus_files import open_binary
from rowbook.io import atomic_write
from rowbook.text.bpe.bytelevel import BYTE_TO_UNICODE, GPT2_PATTERN, UNICODE_TO_BYTE

__all__ = [
    "ENCODINGS",
    "MAX_UNUSED_IDS",
    "TiktokenEncoding",
    "cache_name",
    "from_ranks",
    "is_tiktoken_file",
    "load_tiktoken",
    "read_ranks",
    "save_tiktoken",
    "to_ranks",
    "write_ranks",
]

ENDOFTEXT, ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
FIM = {"<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260}
_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2} [0-9]+\r?$")
MAX_UNUSED_IDS = 300_000  # ids that may hold no token: o200k_harmony's run to 201,087
_SPELL = dict(enumerate(BYTE_TO_UNICODE))  # a byte (a latin-1 character) -> its stand-in
_GAP = "<|no token {}|>"  # the id of no token (a space: no byte-level word spells it)


@dataclass(frozen=True)
class TiktokenEncoding:
    """One of tiktoken's encodings: its name, pre-split ``pattern``, ``special_tokens``
    (token -> id) and the number of ranks its ``.tiktoken`` file holds."""

    name: str
    pattern: str
    special_tokens: Mapping[str, int]
    n_ranks: int


# tiktoken_ext/openai_public.py. r50k's pattern there is GPT-2's, rewritten to run faster
# ("equivalent", says tiktoken); GPT-2's own runs here through the compiled pre-split.
_CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
#: tiktoken's encodings by name.
ENCODINGS: dict[str, TiktokenEncoding] = {
    e.name: e
    for e in (
        TiktokenEncoding("r50k_base", GPT2_PATTERN, {ENDOFTEXT: 50256}, 50256),
        TiktokenEncoding("p50k_base", GPT2_PATTERN, {ENDOFTEXT: 50256}, 50280),
        TiktokenEncoding(
            "cl100k_base", _CL100K, {ENDOFTEXT: 100257, **FIM, ENDOFPROMPT: 100276}, 100256
        ),
        TiktokenEncoding("o200k_base", _O200K, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, 199998),
    )
}


def is_tiktoken_file(head: bytes) -> bool:
    """Whether the first bytes of a file look like a ``.tiktoken`` file: its first lines (up
    to 8) are each base64 (a multiple of 4 characters), a space and a rank, the ranks rising
    (a file of word counts, ``that 12``, falls).

    Examples
    --------
    >>> is_tiktoken_file(b"IQ== 0\\nIg== 1\\n"), is_tiktoken_file(b"that 12\\nwith 9\\n")
    (True, False)
    """
    lines = head.split(b"\n")
    lines = (lines[:-1] if len(lines) > 1 else lines)[:8]  # the last may be cut short
    if not lines or not all(
        _LINE.match(line) and len(line.split(b" ")[0]) % 4 == 0 for line in lines
    ):
        return False
    ranks = [int(line.split(b" ")[1]) for line in lines]
    return all(a < b for a, b in itertools.pairwise(ranks))


def read_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file (token bytes -> rank), as tiktoken's
    ``load_tiktoken_bpe`` reads them; a bad line is a ``ValueError`` naming its number."""
    ranks: dict[bytes, int] = {}
    token_line: dict[bytes, int] = {}  # where each token, and each rank, was first given
    rank_line: dict[int, int] = {}
    with open_binary(path, ".tiktoken file") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            fields = line.split(b" ")
            try:
                if len(fields) != 2 or not fields[1].isdigit():
                    raise ValueError
                token, rank = base64.b64decode(fields[0], validate=True), int(fields[1])
            except (ValueError, binascii.Error):
                raise ValueError(
                    f".tiktoken file {path}, line {number}: expected 'base64 rank', got "
                    f"{line[:60]!r}"
                ) from None
            if token in token_line or rank in rank_line:
                what, first = (
                    (f"token {token!r}", token_line[token])
                    if token in token_line
                    else (f"rank {rank}", rank_line[rank])
                )
                raise ValueError(
                    f".tiktoken file {path}, line {number}: {what} was given on line {first}; "
                    "each token and each rank appears once"
                )
            ranks[token], token_line[token], rank_line[rank] = rank, number, number
    if not ranks:
        raise ValueError(f".tiktoken file {path} holds no ranks")
    return ranks


def write_ranks(path: str | os.PathLike, ranks: Mapping[bytes, int]) -> None:
    """Write ranks as a ``.tiktoken`` file (atomic), in rank order as tiktoken writes them."""
    with atomic_write(path, "wb") as f:
        for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
            f.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")


def _all_splits(ranks: Mapping[bytes, int], spelled: Mapping[bytes, str]) -> list[tuple[str, str]]:
    """Every split of every token into two tokens, ordered as the token they make (then the
    ranks of the two halves, as ``tokenizers``' converter of tiktoken files orders them)."""
    found = []
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            left, right = token[:i], token[i:]
            if left in ranks and right in ranks:
                found.append((rank, ranks[left], ranks[right], spelled[left], spelled[right]))
    found.sort()
    return [(left, right) for *_, left, right in found]


def from_ranks(
    ranks: Mapping[bytes, int], *, pattern: str, special_tokens: Mapping[str, int]
) -> Any:
    """A :class:`~rowbook.text.ByteLevelBPE` that encodes as tiktoken's
    ``Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special_tokens)``:
    the same ids. Ids that are neither a rank nor a special token (cl100k_base has such
    gaps) hold a placeholder token that nothing encodes to."""
    from rowbook.text.bpe.model import ByteLevelBPE

    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(
            f"the ranks lack {len(missing)} of the 256 single bytes (e.g. {missing[0]:#04x}); "
            "a byte-level BPE needs every byte as a token"
        )
    spelled = {token: token.decode("latin-1").translate(_SPELL) for token in ranks}
    vocab = {spelled[token]: rank for token, rank in ranks.items()}
    taken = set(ranks.values())
    for token, i in special_tokens.items():
        if i in taken:
            raise ValueError(f"special token {token!r} has the id {i}, which is also a rank")
        vocab[token] = i
    top = max(vocab.values()) + 1
    if top > max(2 * len(vocab), MAX_UNUSED_IDS):  # cl100k_base leaves 20 ids unused
        raise ValueError(
            f"the ids run up to {top - 1} for {len(vocab)} tokens; ranks and special tokens "
            "must number the tokens with few ids unused (a rank or id is wrong)"
        )
    if len(vocab) < top:
        used = set(vocab.values())
        vocab |= {_GAP.format(i): i for i in range(top) if i not in used}
    bpe = ByteLevelBPE(pattern=pattern)
    bpe._set_model(
        vocab,
        _all_splits(ranks, spelled),
        list(special_tokens),
        ignore_merges=True,
        tiktoken=True,
    )
    return bpe


def to_ranks(bpe: Any) -> dict[bytes, int]:
    """The ranks of a byte-level BPE as a ``.tiktoken`` file holds them: every token but the
    special ones (and the placeholders of :func:`from_ranks`), its bytes -> its id.

    tiktoken merges by rank (see the module): a BPE trained by rowbook written as ranks
    encodes by that rule, which agrees with its merges on most words but not all.
    """
    bpe._check_fitted()
    added = [t for t, special in bpe._added if not special]
    if added:
        raise ValueError(
            f"this BPE has tokens added after training ({added[0]!r}, ...), which a .tiktoken "
            "file cannot hold as tokens that are never split; add them as special tokens"
        )
    specials, gap = set(bpe._special_ids), re.compile(r"<\|no token \d+\|>")
    ranks = {}
    for i, token in enumerate(bpe._id_to_token):
        if token in specials or gap.fullmatch(token):
            continue
        if any(c not in UNICODE_TO_BYTE for c in token):
            raise ValueError(f"token {i} {token!r} is not spelled in bytes; it cannot be a rank")
        ranks[bpe._id_bytes[i]] = i
    return ranks


def cache_name(encoding: str) -> str:
    """The name tiktoken gives its cached copy of an encoding's rank file (in
    ``TIKTOKEN_CACHE_DIR``, or ``data-gym-cache`` in the temporary folder): the SHA-1 of the
    address it downloads it from. rowbook only names it; it never downloads.

    Examples
    --------
    >>> cache_name("cl100k_base")
    '9b5ad71b2ce5302211f9c61530b329a4922fc6a4'
    """
    address = f"https://openaipublic.blob.core.windows.net/encodings/{encoding}.tiktoken"
    return hashlib.sha1(address.encode()).hexdigest()


def _encoding_of(path: Path, ranks: Mapping[bytes, int]) -> TiktokenEncoding:
    """The encoding a rank file belongs to: by its name (``cl100k_base.tiktoken``, or the
    name of tiktoken's cached copy), else by its number of ranks."""
    stem = path.name.split(".")[0]
    cached = {cache_name(name): name for name in ENCODINGS}
    if stem in ENCODINGS or path.name in cached:
        return ENCODINGS[cached.get(path.name, stem)]
    by_size = [e for e in ENCODINGS.values() if e.n_ranks == len(ranks)]
    if len(by_size) == 1:
        return by_size[0]
    raise ValueError(
        f".tiktoken file {path} holds {len(ranks)} ranks, a number that tells none of "
        f"tiktoken's encodings {sorted(ENCODINGS)}; name its encoding (encoding='cl100k_base') or give its "
        "pattern= and special_tokens="
    )


def load_tiktoken(
    path: str | os.PathLike,
    encoding: str | None = None,
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Any:
    """The :class:`~rowbook.text.ByteLevelBPE` of a ``.tiktoken`` file (see the module).

    ``encoding`` names one of :data:`ENCODINGS` (by default the file's name, as tiktoken's
    download or its cached copy (:func:`cache_name`) is named, else the one with its number
    of ranks); ``pattern`` and ``special_tokens`` replace the encoding's.
    """
    path = Path(path)
    ranks = read_ranks(path)
    if encoding is not None and encoding not in ENCODINGS:
        raise ValueError(f"encoding {encoding!r} is not one of {sorted(ENCODINGS)}")
    if encoding is None and pattern is not None and special_tokens is not None:
        spec = TiktokenEncoding("custom", pattern, special_tokens, len(ranks))
    else:
        spec = ENCODINGS[encoding] if encoding is not None else _encoding_of(path, ranks)
    try:
        return from_ranks(
            ranks,
            pattern=spec.pattern if pattern is None else pattern,
            special_tokens=spec.special_tokens if special_tokens is None else special_tokens,
        )
    except ValueError as err:
        raise ValueError(f".tiktoken file {path} ({spec.name}): {err}") from None


def save_tiktoken(bpe: Any, path: str | os.PathLike) -> None:
    """Write ``bpe``'s ranks (:func:`to_ranks`) as a ``.tiktoken`` file; its pattern and
    special tokens are not part of the file (:attr:`ByteLevelBPE.pattern`,
    :attr:`ByteLevelBPE.special_tokens` give them back to :func:`load_tiktoken`)."""
    write_ranks(path, to_ranks(bpe))
