"""Files of a :class:`~rowbook.text.ByteLevelBPE`: rowbook's own JSON, and ``tokenizer.json``.

One file over 400 lines on purpose: rowbook's JSON and ``tokenizer.json`` of a byte-level
BPE share the checks of every field, which two files would import back and forth.

rowbook's format (``save`` / ``load``) is one human-readable JSON object::

    {"format": "rowbook.ByteLevelBPE", "version": 1,
     "pattern": "...", "add_prefix_space": false, "ignore_merges": false,
     "special_tokens": ["<pad>"],
     "vocab": {"<pad>": 0, "!": 1, ...},
     "merges": [["Ġ", "t", 51234], ...],          # left, right, pair count or null
     "added_tokens": [["<mask>", true]],          # optional: added after training, special?
     "dropout": null, "seed": null,               # optional
     "tiktoken": true,                            # optional: encodes as tiktoken does
     "normalizer": {...}, "post_processor": {...}}  # optional: tokenizer.json's (Llama 3)

GPT-2's pair of files (``from_files``) is ``vocab.json`` (token -> id) and ``merges.txt``
(a ``#version`` line, then ``left right`` per line, in rank order).

The Hugging Face form (``to_tokenizer_json`` / ``from_tokenizer_json``) is a
``tokenizers`` ``Tokenizer`` with a ``BPE`` model, a ``ByteLevel`` pre-tokenizer (or a
regex ``Split`` followed by ``ByteLevel(use_regex=false)``, the GPT-4 / Llama-3 layout),
a ``ByteLevel`` decoder, and the special tokens as added tokens; a normalizer (Qwen 2's
``NFC``) and a template post-processor (Llama 3's ``Sequence`` of ``ByteLevel`` and the
``<|begin_of_text|>`` ``TemplateProcessing``) are read too. Anything that would make
``tokenizers`` produce other ids than rowbook (padding, truncation, affixes, byte fallback)
is refused with a ``ValueError``.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from rowbook.checks import InputTypeError
from rowbook.io import read_json, write_json
from rowbook.text import hf_files
from rowbook.text.bpe.bytelevel import BYTE_TO_UNICODE, GPT2_PATTERN, UNICODE_TO_BYTE
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.merge_kernels import pair_key
from rowbook.text.components import normalizer_from_json
from rowbook.text.postprocess import Template, template_from_json

__all__ = [
    "FORMAT",
    "VERSION",
    "check_model",
    "from_dict",
    "from_tokenizer_json",
    "load",
    "onig_pattern",
    "read_vocab_merges",
    "save",
    "to_dict",
    "to_tokenizer_json",
    "token_bytes",
]

FORMAT = "rowbook.ByteLevelBPE"
VERSION = 1
_WHOLE_TEXT = r"(?s).+"  # the pre-tokenizer of ByteLevel(use_regex=false) alone


def check_model(
    vocab: Any, merges: Any, specials: Any, rank_by_token: bool = False
) -> dict[str, Any]:
    """Validate a vocabulary and merge list; return the lookup tables of the encoder.

    A merge's rank is its place in ``merges`` (``tokenizers``' rule), or with
    ``rank_by_token`` the id of the token it makes (tiktoken's rule: every split of a token
    into two tokens merges at that token's rank; :mod:`rowbook.text.bpe.tiktoken_files`)."""
    if not isinstance(vocab, dict):
        raise InputTypeError(f"vocab must be a dict token -> id, got {type(vocab).__name__}")
    id_to_token: list[str | None] = [None] * len(vocab)
    for token, i in vocab.items():
        if not isinstance(token, str) or not _is_int(i) or not 0 <= i < len(vocab):
            raise ValueError(
                f"vocab entry {token!r}: {i!r} must map a str to an id in [0, {len(vocab)})"
            )
        if id_to_token[i] is not None:
            raise ValueError(f"vocab id {i} is used twice ({id_to_token[i]!r} and {token!r})")
        id_to_token[i] = token
    if not isinstance(specials, list) or not all(isinstance(t, str) and t for t in specials):
        raise ValueError(
            f"special tokens must be a list of non-empty strings, got {str(specials)[:80]}"
        )
    if not isinstance(merges, list) or not all(_is_pair(m) for m in merges):
        bad = (
            next((m for m in merges if not _is_pair(m)), None)
            if isinstance(merges, list)
            else merges
        )
        raise ValueError(f"merges must be a list of pairs of strings, got {str(bad)[:80]}")
    missing = [f"{c!r} (byte 0x{b:02x})" for b, c in enumerate(BYTE_TO_UNICODE) if c not in vocab]
    if missing:
        raise ValueError(
            f"vocab lacks {len(missing)} byte symbols, e.g. {missing[0]}; "
            "a byte-level BPE needs all 256"
        )
    for token in specials:
        if token not in vocab:
            raise ValueError(f"special token {token!r} is missing from the vocabulary")
    table: dict[int, tuple[int, int]] = {}
    for rank, pair in enumerate(merges):
        if not (
            isinstance(pair, tuple | list) and len(pair) == 2 and all(p in vocab for p in pair)
        ):
            raise ValueError(f"merge {rank} {pair!r} must be two tokens of the vocabulary")
        if pair[0] + pair[1] not in vocab:
            raise ValueError(
                f"merge {rank} {pair!r} makes {pair[0] + pair[1]!r}, which is not in the vocabulary"
            )
        made = vocab[pair[0] + pair[1]]
        table[pair_key(vocab[pair[0]], vocab[pair[1]])] = (
            made if rank_by_token else rank,
            made,
        )  # last wins
    keys = np.array(sorted(table), dtype=np.int64)  # (M,) sorted pair keys
    ranks = np.array([table[k][0] for k in keys.tolist()], dtype=np.int64)
    new_ids = np.array([table[k][1] for k in keys.tolist()], dtype=np.int64)
    special_set = set(specials)
    id_bytes = [t.encode("utf-8") if t in special_set else token_bytes(t) for t in id_to_token]
    return {
        "id_to_token": id_to_token,
        "byte_ids": np.array([vocab[c] for c in BYTE_TO_UNICODE], dtype=np.int64),
        "merge_table": (keys, ranks, new_ids),
        "id_bytes": id_bytes,
    }


# each byte character -> the latin-1 character of its byte; other latin-1 characters -> one
# that latin-1 cannot encode, so that a token holding one is not taken for bytes
_TO_LATIN1 = {ord(c): chr(b) for c, b in UNICODE_TO_BYTE.items()} | {
    o: "\uffff" for o in range(256) if chr(o) not in UNICODE_TO_BYTE
}


def token_bytes(token: str) -> bytes:
    """The bytes a token spells: its byte characters' bytes, or, when one of its characters
    is outside the byte alphabet (an added token), its own UTF-8.

    Examples
    --------
    >>> token_bytes("ĠcafÃ©"), token_bytes("☃"), token_bytes("a b")
    (b' caf\\xc3\\xa9', b'\\xe2\\x98\\x83', b'a b')
    """
    try:
        return token.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8")


def save(bpe, path: str | os.PathLike) -> None:
    """Write ``bpe`` in rowbook's format."""
    write_json(path, to_dict(bpe))


def to_dict(bpe) -> dict[str, Any]:
    """``bpe`` as rowbook's JSON document (also embedded in a TextPipeline file)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "pattern": bpe.pattern,
        "add_prefix_space": bpe.add_prefix_space,
        "ignore_merges": bpe._ignore_merges,
        "special_tokens": list(bpe._specials),
        "vocab": {t: i for i, t in enumerate(bpe._id_to_token)},
        "merges": [[s.left, s.right, s.count] for s in bpe._trace],
        "added_tokens": [[t, special] for t, special in bpe._added],
        "dropout": bpe.dropout,
        "seed": bpe.seed,
        **({"tiktoken": True} if bpe._tiktoken else {}),
        **({"normalizer": bpe.normalizer.to_json()} if bpe.normalizer is not None else {}),
        **({"post_processor": _post_processor(bpe)} if bpe.template is not None else {}),
    }


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_pair(m: Any) -> bool:
    return isinstance(m, tuple | list) and len(m) == 2 and all(isinstance(p, str) for p in m)


def _optional_bool(d: dict, key: str, where: str) -> bool:
    if not isinstance(d.get(key, False), bool):
        raise ValueError(f"{where} field {key!r} must be true or false, got {d[key]!r}")
    return d.get(key, False)


def _require(d: dict, key: str, kind: type | tuple, where: str) -> Any:
    if key not in d:
        raise ValueError(f"{where} has no {key!r} field")
    if not isinstance(d[key], kind):
        raise ValueError(f"{where} field {key!r} has the wrong type {type(d[key]).__name__}")
    return d[key]


def load(cls, path: str | os.PathLike):
    """Read rowbook's format."""
    return from_dict(cls, read_json(path, "ByteLevelBPE"), f"ByteLevelBPE file {path}")


def from_dict(cls, d: Any, where: str):
    """Rebuild a BPE from :func:`to_dict`'s document, checking every field; errors name ``where``."""
    hf_files.from_envelope(d, "ByteLevelBPE", where, version=VERSION)
    merges = _require(d, "merges", list, where)
    for i, m in enumerate(merges):
        if not (
            isinstance(m, list)
            and len(m) == 3
            and _is_pair(m[:2])
            and (m[2] is None or _is_int(m[2]))
        ):
            raise ValueError(
                f"{where}: merge {i} {str(m)[:80]} must be [left, right, count or null]"
            )
    added = d.get("added_tokens", [])
    if not isinstance(added, list) or not all(
        isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], bool)
        for a in added
    ):
        raise ValueError(f"{where}: added_tokens must be a list of [token, special] pairs")
    specials = _require(d, "special_tokens", list, where)
    if not all(isinstance(t, str) and t for t in specials):
        raise ValueError(
            f"{where}: special tokens must be a list of non-empty strings, got {str(specials)[:80]}"
        )
    try:
        bpe = cls(
            pattern=_require(d, "pattern", str, where),
            add_prefix_space=_require(d, "add_prefix_space", bool, where),
            dropout=d.get("dropout"),
            seed=d.get("seed"),
        )
        bpe._set_model(
            _require(d, "vocab", dict, where),
            [(m[0], m[1]) for m in merges],
            list(_require(d, "special_tokens", list, where)),
            [MergeStep(m[0], m[1], m[2]) for m in merges],
            _require(d, "ignore_merges", bool, where),
            [tuple(a) for a in added],
            _optional_bool(d, "tiktoken", where),
        )
        bpe.normalizer = normalizer_from_json(d.get("normalizer"), f"{where}: normalizer")
        bpe.template = _template_of(d.get("post_processor"), bpe._vocab, where)
    except (TypeError, ValueError) as err:
        message = str(err)
        raise ValueError(message if message.startswith(where) else f"{where}: {message}") from None
    return bpe


def read_vocab_merges(vocab_path: str | os.PathLike, merges_path: str | os.PathLike):
    """``(vocab, merges)`` from GPT-2's ``vocab.json`` and ``merges.txt``."""
    vocab = read_json(vocab_path, "vocab.json")
    if not isinstance(vocab, dict):
        raise ValueError(f"vocab.json file {vocab_path} must hold one object token -> id")
    merges = []
    with open(merges_path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line or (line_no == 1 and line.startswith("#version")):
                continue
            pair = line.split(" ")
            if len(pair) != 2:
                raise ValueError(
                    f"merges.txt file {merges_path}, line {line_no}: expected "
                    f"'left right', got {line[:60]!r}"
                )
            merges.append((pair[0], pair[1]))
    return vocab, merges


def _byte_level(add_prefix_space: bool, use_regex: bool) -> dict[str, Any]:
    return {
        "type": "ByteLevel",
        "add_prefix_space": add_prefix_space,
        "trim_offsets": True,
        "use_regex": use_regex,
    }


def onig_pattern(pattern: str) -> str:
    """``pattern`` for ``tokenizers``' Oniguruma, which reads a possessive bounded repeat
    (``\\p{N}{1,3}+``, cl100k_base's) as a repeat of the repeat: the same matches, greedy.

    Examples
    --------
    >>> onig_pattern(r"\\p{N}{1,3}+| ?\\p{L}++")
    '\\\\p{N}{1,3}| ?\\\\p{L}++'
    """
    return re.sub(r"(?<!\\)(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def to_tokenizer_json(bpe, path: str | os.PathLike) -> None:
    """Write ``bpe`` as a Hugging Face ``tokenizer.json``."""
    if bpe.pattern == GPT2_PATTERN:
        pre = _byte_level(bpe.add_prefix_space, True)
    elif not bpe.add_prefix_space:
        split = {
            "type": "Split",
            "pattern": {"Regex": onig_pattern(bpe.pattern)},
            "behavior": "Isolated",
            "invert": False,
        }
        pre = {"type": "Sequence", "pretokenizers": [split, _byte_level(False, False)]}
    else:
        raise ValueError(
            "add_prefix_space=True with a custom pattern has no tokenizer.json equivalent"
        )
    later = dict(bpe._added)  # added after training: not in the model's vocab
    flags = {**{s: True for s in bpe._specials}, **later}
    added = [
        hf_files.added_token_entry(bpe._vocab[t], t, special=special, normalized=not special)
        for t, special in sorted(flags.items(), key=lambda item: bpe._vocab[item[0]])
    ]
    model = {
        "type": "BPE",
        "dropout": bpe.dropout,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        "ignore_merges": bpe._ignore_merges,
        "vocab": {t: i for i, t in enumerate(bpe._id_to_token) if t not in later},
        "merges": [list(m) for m in bpe._merges],
    }
    write_json(
        path,
        {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": None if bpe.normalizer is None else bpe.normalizer.to_json(),
            "pre_tokenizer": pre,
            "post_processor": _post_processor(bpe),
            "decoder": _byte_level(True, True),
            "model": model,
        },
    )


def _pattern_of(pre: Any, where: str) -> tuple[str, bool]:
    """(pattern, add_prefix_space) of a supported pre-tokenizer."""
    if isinstance(pre, dict) and pre.get("type") == "ByteLevel":
        return (GPT2_PATTERN if pre.get("use_regex", True) else _WHOLE_TEXT), bool(
            pre.get("add_prefix_space")
        )
    steps = (
        pre.get("pretokenizers")
        if isinstance(pre, dict) and pre.get("type") == "Sequence"
        else None
    )
    if isinstance(steps, list) and len(steps) == 2 and isinstance(steps[0], dict):
        split, last = steps
        pattern = split.get("pattern")
        pattern = pattern if isinstance(pattern, dict) else {}
        if (
            split.get("type") == "Split"
            and split.get("behavior") == "Isolated"
            and not split.get("invert")
            and isinstance(last, dict)
            and last.get("type") == "ByteLevel"
            and not last.get("use_regex", True)
            and not last.get("add_prefix_space")
        ):
            if isinstance(pattern.get("Regex"), str):
                return pattern["Regex"], False
            if isinstance(pattern.get("String"), str):
                import regex

                return regex.escape(pattern["String"]), False
    raise ValueError(
        f"{where}: pre_tokenizer {str(pre)[:200]} is not supported; rowbook reads ByteLevel, "
        "or Sequence[Split(Isolated), ByteLevel(use_regex=false)]"
    )


def _check_hf_options(d: dict, model: dict, where: str) -> None:
    hf_files.check_options(d, where)
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):  # GPT-2's file writes "" for the two affixes
            raise ValueError(f"{where}: model.{key}={model[key]!r} is not supported (must be null)")
    if model.get("byte_fallback"):
        raise ValueError(
            f"{where}: model.byte_fallback=true is a character-level BPE (Llama 2, Mistral), "
            "not a byte-level one: read it with ByteFallbackBPE.from_tokenizer_json or "
            "rowbook.load_tokenizer"
        )


def _template_of(post: Any, vocab: dict[str, int], where: str) -> Template | None:
    """The template of a ``post_processor``: ``ByteLevel`` (offsets only: none),
    ``TemplateProcessing``, or a ``Sequence`` of them (Llama 3's)."""
    steps = post.get("processors") if isinstance(post, dict) else None
    steps = steps if isinstance(post, dict) and post.get("type") == "Sequence" else [post]
    if not isinstance(steps, list):
        raise ValueError(f"{where}: post_processor Sequence needs a list of 'processors'")
    found = None
    for step in steps:
        if step is None or (isinstance(step, dict) and step.get("type") == "ByteLevel"):
            continue
        if not isinstance(step, dict):
            raise ValueError(
                f"{where}: post_processor {type(step).__name__!r} is not supported; rowbook "
                "reads ByteLevel, TemplateProcessing, a Sequence of them, or null"
            )
        if found is not None:
            raise ValueError(f"{where}: post_processor has two templates; rowbook reads one")
        found = template_from_json(step, vocab, f"{where}: post_processor")
    return found


def _post_processor(bpe) -> dict[str, Any] | None:
    """Llama 3's post-processor: the byte-level step, then the template."""
    if bpe.template is None:
        return None
    byte_level = _byte_level(True, True) | {"trim_offsets": False}
    return {"type": "Sequence", "processors": [byte_level, bpe.template.to_json()]}


def from_tokenizer_json(cls, path: str | os.PathLike):
    """Read a Hugging Face byte-level BPE ``tokenizer.json``."""
    where = f"tokenizer.json file {path}"
    d = read_json(path, "tokenizer.json")
    model = d.get("model") if isinstance(d, dict) else None
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE":
        kind = model.get("type") if isinstance(model, dict) else None
        raise ValueError(f"{where} does not hold a BPE model (model type {kind!r})")
    _check_hf_options(d, model, where)
    pattern, add_prefix_space = _pattern_of(d.get("pre_tokenizer"), where)
    vocab = dict(_require(model, "vocab", dict, where))
    specials, added = _added_tokens(d.get("added_tokens"), vocab, where)
    merges = []
    for i, m in enumerate(_require(model, "merges", list, where)):
        pair = m.split(" ") if isinstance(m, str) else m
        if not _is_pair(pair):
            raise ValueError(
                f"{where}: merge {i} {str(m)[:80]} is not 'left right' or [left, right]"
            )
        merges.append((pair[0], pair[1]))
    dropout = model.get("dropout")
    if dropout is not None and (isinstance(dropout, bool) or not isinstance(dropout, int | float)):
        raise ValueError(f"{where}: model.dropout={dropout!r} must be null or a number")
    try:
        bpe = cls(pattern=pattern, add_prefix_space=add_prefix_space, dropout=dropout)
        bpe._set_model(
            vocab, merges, specials, None, bool(model.get("ignore_merges", False)), added
        )
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    bpe.normalizer = normalizer_from_json(d.get("normalizer"), f"{where}: normalizer")
    bpe.template = _template_of(d.get("post_processor"), bpe._vocab, where)
    return bpe


def _added_tokens(
    entries: Any, vocab: dict[str, Any], where: str
) -> tuple[list[str], list[tuple[str, bool]]]:
    """The ``added_tokens`` of a tokenizer.json, checked and put into ``vocab``: the special
    tokens, and the ``(token, special)`` pairs added after training (outside the model's
    vocab, or not special)."""
    if entries is None:
        return [], []
    if not isinstance(entries, list):
        raise ValueError(
            f"{where}: field 'added_tokens' must be a list of objects, got {type(entries).__name__}"
        )
    in_model = set(vocab)
    specials, added = [], []
    for n, tok in enumerate(entries):
        if not (
            isinstance(tok, dict) and isinstance(tok.get("content"), str) and _is_int(tok.get("id"))
        ):
            raise ValueError(
                f"{where}: added_tokens[{n}] must be an object with a string 'content' "
                f"and an integer 'id', got {str(tok)[:80]}"
            )
        content, i = tok["content"], tok["id"]
        if any(tok.get(k) for k in ("lstrip", "rstrip", "single_word")):
            raise ValueError(
                f"{where}: added token {content!r} uses lstrip/rstrip/single_word, not supported"
            )
        if vocab.setdefault(content, i) != i:
            raise ValueError(
                f"{where}: added token {content!r} has id {i} but the vocab gives {vocab[content]}"
            )
        special = tok.get("special", True) is not False
        specials += [content] if special else []
        if content not in in_model or not special:
            added.append((content, special))
    return specials, added
