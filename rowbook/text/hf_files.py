"""``tokenizer.json`` around a model, for WordPiece and Unigram: reading, checking, writing.

A Hugging Face ``tokenizer.json`` is one JSON object::

    {"version": "1.0", "truncation": null, "padding": null,
     "added_tokens": [{"id": 0, "content": "[PAD]", "special": true, "normalized": false,
                       "lstrip": false, "rstrip": false, "single_word": false}, ...],
     "normalizer": {...} | null, "pre_tokenizer": {...} | null,
     "post_processor": {...} | null, "decoder": {...} | null,
     "model": {"type": "WordPiece" | "Unigram" | ..., ...}}

The model part is read by each model's ``files`` module; this one reads the rest
(:func:`read_document`, :func:`added_tokens`, :func:`pipeline_parts`) and writes it back
(:func:`document`). Everything is checked with errors that name the file and the field; a
setting that would make ``tokenizers`` give other ids than rowbook (truncation, padding,
added tokens with ``lstrip``/``rstrip``/``single_word``, or matched after normalization when
there is a normalizer) is refused.

rowbook's own files for these tokenizers wrap the document in a versioned envelope
(:func:`envelope`, :func:`from_envelope`): ``{"format": "rowbook.WordPiece", "version": 1,
"tokenizer": {...the tokenizer.json...}, ...}``. :class:`TokenizerFiles` writes and reads
both files of a tokenizer kind, given how its model entry is written and read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from rowbook.io import read_json, write_json
from rowbook.text.components import normalizer_from_json, pre_tokenizer_from_json
from rowbook.text.postprocess import decoder_from_json, template_from_json

__all__ = [
    "TokenizerFiles",
    "TokenizerJsonFiles",
    "added_token_entry",
    "added_tokens",
    "check_document",
    "check_options",
    "document",
    "envelope",
    "from_envelope",
    "model_field",
    "model_tokens",
    "pipeline_parts",
    "read_document",
]

VERSION = 1


def read_document(path: str | os.PathLike, model_type: str) -> tuple[dict, dict, str]:
    """``(document, model, where)`` of a ``tokenizer.json`` holding a ``model_type`` model."""
    where = f"tokenizer.json file {path}"
    d = read_json(path, "tokenizer.json")
    return (*check_document(d, model_type, where), where)


def check_document(d: Any, model_type: str, where: str) -> tuple[dict, dict]:
    """The document and its model, after the checks of the fields around the model."""
    model = d.get("model") if isinstance(d, dict) else None
    if not isinstance(model, dict) or model.get("type") != model_type:
        kind = model.get("type") if isinstance(model, dict) else None
        raise ValueError(f"{where} does not hold a {model_type} model (model type {kind!r})")
    check_options(d, where)
    return d, model


def check_options(d: dict, where: str) -> None:
    """Refuse a ``tokenizer.json`` of another version, or one that truncates or pads."""
    if d.get("version", "1.0") != "1.0":
        raise ValueError(
            f"{where} has tokenizer.json version {d.get('version')!r}; rowbook reads '1.0'"
        )
    for key in ("truncation", "padding"):
        if d.get(key) is not None:
            raise ValueError(
                f"{where}: {key} {str(d[key])[:60]} is not supported; set it to null "
                "(TextPipeline.encode_batch pads and truncates)"
            )


def model_field(model: dict, key: str, kind: type, where: str, what: str) -> Any:
    """``model[key]`` checked to be a ``kind`` (``list``, ``dict``); ``what`` says what it holds."""
    value = model.get(key)
    if not isinstance(value, kind):
        raise ValueError(f"{where}: model.{key} must be {what}")
    return value


def model_tokens(model: dict, where: str) -> list[str]:
    """The tokens of ``model.vocab`` (token -> id) in id order; the ids must be 0 to n - 1."""
    vocab = model_field(model, "vocab", dict, where, "an object token -> id")
    tokens: list[str | None] = [None] * len(vocab)
    for token, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(vocab):
            raise ValueError(
                f"{where}: model.vocab gives {token!r} the id {i!r}; ids run from 0 to "
                f"{len(vocab) - 1}"
            )
        if tokens[i] is not None:
            raise ValueError(f"{where}: model.vocab gives id {i} to {tokens[i]!r} and {token!r}")
        tokens[i] = token
    return tokens  # type: ignore[return-value]


def added_tokens(d: dict, where: str, normalized_ok: bool) -> list[tuple[str, int, bool]]:
    """``(content, id, special)`` of each added token, checked."""
    entries = d.get("added_tokens") or []
    if not isinstance(entries, list):
        raise ValueError(
            f"{where}: field 'added_tokens' must be a list of objects, got {type(entries).__name__}"
        )
    out = []
    for n, tok in enumerate(entries):
        ok = isinstance(tok, dict) and isinstance(tok.get("content"), str) and tok["content"]
        if (
            not ok
            or not isinstance(tok.get("id"), int)
            or isinstance(tok.get("id"), bool)
            or tok["id"] < 0
        ):
            raise ValueError(
                f"{where}: added_tokens[{n}] must be an object with a non-empty string "
                f"'content' and an integer 'id' >= 0, got {str(tok)[:80]}"
            )
        if any(tok.get(k) for k in ("lstrip", "rstrip", "single_word")):
            raise ValueError(
                f"{where}: added token {tok['content']!r} uses lstrip/rstrip/single_word, "
                "which rowbook does not support"
            )
        special = tok.get("special", True) is not False
        if tok.get("normalized", not special) and not normalized_ok:
            raise ValueError(
                f"{where}: added token {tok['content']!r} is matched after normalization "
                "('normalized': true), which rowbook does not support with a normalizer; "
                "set it to false"
            )
        out.append((tok["content"], tok["id"], special))
    return out


def merge_vocab(
    model_tokens: list[str], added: list[tuple[str, int, bool]], where: str
) -> list[str]:
    """The full id -> token list: the model's tokens, then added tokens beyond them."""
    tokens = list(model_tokens)
    index = {t: i for i, t in enumerate(tokens)}
    for content, i, _ in sorted(added, key=lambda a: a[1]):
        if content in index:
            if index[content] != i:
                raise ValueError(
                    f"{where}: added token {content!r} has id {i} but the model gives {index[content]}"
                )
            continue
        if i != len(tokens):
            raise ValueError(
                f"{where}: added token {content!r} has id {i}; the next free id is {len(tokens)}"
            )
        tokens.append(content)
        index[content] = i
    return tokens


def pipeline_parts(d: dict, vocab: dict[str, int], where: str) -> tuple[Any, Any, Any, Any]:
    """``(normalizer, pre_tokenizer, template, decoder)`` of a document."""
    return (
        normalizer_from_json(d.get("normalizer"), f"{where}: normalizer"),
        pre_tokenizer_from_json(d.get("pre_tokenizer"), f"{where}: pre_tokenizer"),
        template_from_json(d.get("post_processor"), vocab, where),
        decoder_from_json(d.get("decoder"), f"{where}: decoder"),
    )


def added_token_entry(token_id: int, content: str, *, special: bool, normalized: bool) -> dict:
    """One entry of a ``tokenizer.json``'s ``added_tokens`` as rowbook writes it (no
    lstrip, rstrip or single_word: :func:`added_tokens` refuses them)."""
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": normalized,
        "special": special,
    }


def document(tok: Any, model: dict[str, Any]) -> dict[str, Any]:
    """The ``tokenizer.json`` document of a fitted tokenizer with the given ``model`` entry."""

    def as_json(part: Any) -> Any:
        return None if part is None else part.to_json()

    added = [
        added_token_entry(tok._vocab[t], t, special=special, normalized=False)
        for t, special in sorted(tok._added, key=lambda a: tok._vocab[a[0]])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": as_json(tok.normalizer),
        "pre_tokenizer": as_json(tok.pre_tokenizer),
        "post_processor": as_json(tok.template),
        "decoder": as_json(tok.decoder),
        "model": model,
    }


def envelope(kind: str, doc: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """rowbook's versioned file around a ``tokenizer.json`` document."""
    return {"format": f"rowbook.{kind}", "version": VERSION, "tokenizer": doc, **extra}


def from_envelope(d: Any, kind: str, where: str, *, version: int = VERSION) -> dict[str, Any]:
    """The envelope ``d`` after checking its format (``rowbook.<kind>``) and ``version``."""
    if not isinstance(d, dict) or d.get("format") != f"rowbook.{kind}":
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise ValueError(
            f"{where} is not a rowbook {kind} file (format {found!r}, expected "
            f"'rowbook.{kind}'); for a Hugging Face file use from_tokenizer_json"
        )
    if d.get("version") != version:
        raise ValueError(
            f"{where} has version {d.get('version')!r}; this rowbook reads version {version}"
        )
    return d


def write(path: str | os.PathLike, d: dict[str, Any]) -> None:
    """Write a document atomically."""
    write_json(path, d)


@dataclass(frozen=True)
class TokenizerFiles:
    """The two files of one tokenizer kind: the ``tokenizer.json`` and rowbook's envelope.

    ``kind`` names rowbook's format (``"rowbook.<kind>"``); ``model`` gives a fitted
    tokenizer's model entry; ``from_document(cls, document, where, **settings)`` reads a
    parsed ``tokenizer.json``; ``settings`` are the tokenizer's attributes that the
    envelope keeps beside the document (Unigram's sampling), passed back to
    ``from_document``.
    """

    kind: str
    model: Callable[[Any], dict[str, Any]]
    from_document: Callable[..., Any]
    settings: tuple[str, ...] = ()

    def to_tokenizer_json(self, tok: Any, path: str | os.PathLike) -> None:
        """Write ``tok`` as a Hugging Face ``tokenizer.json``."""
        write(path, document(tok, self.model(tok)))

    def from_tokenizer_json(self, cls: Any, path: str | os.PathLike) -> Any:
        """Read a Hugging Face ``tokenizer.json`` holding this kind's model."""
        where = f"tokenizer.json file {path}"
        return self.from_document(cls, read_json(path, "tokenizer.json"), where)

    def to_dict(self, tok: Any) -> dict[str, Any]:
        """rowbook's versioned document (also embedded in a TextPipeline file)."""
        doc = document(tok, self.model(tok))
        return envelope(self.kind, doc, **{k: getattr(tok, k) for k in self.settings})

    def from_dict(self, cls: Any, d: Any, where: str) -> Any:
        """The tokenizer of :meth:`to_dict`'s document."""
        d = from_envelope(d, self.kind, where)
        settings = {k: d.get(k) for k in self.settings}
        try:
            return self.from_document(cls, d.get("tokenizer"), where, **settings)
        except ValueError as err:
            message = str(err)
            raise ValueError(
                message if message.startswith(where) else f"{where}: {message}"
            ) from None

    def save(self, tok: Any, path: str | os.PathLike) -> None:
        """Write rowbook's versioned file (atomic)."""
        write(path, self.to_dict(tok))

    def load(self, cls: Any, path: str | os.PathLike) -> Any:
        """Read a file written by :meth:`save`."""
        return self.from_dict(cls, read_json(path, self.kind), f"{self.kind} file {path}")


class TokenizerJsonFiles:
    """The four file methods of a tokenizer, written once: rowbook's versioned file
    (:meth:`save` / :meth:`load`) and Hugging Face's ``tokenizer.json``
    (:meth:`to_tokenizer_json` / :meth:`from_tokenizer_json`). A tokenizer class adds this
    beside its base and says where its files are read and written: ``_files``, its
    :class:`TokenizerFiles` (or a module with the same four functions)."""

    _files: Any  # set by each tokenizer class
    _check_fitted: Any  # the tokenizer's own "not fitted" check

    def save(self, path: str | os.PathLike) -> None:
        """Write rowbook's versioned file (the ``tokenizer.json`` in an envelope, atomic)."""
        self._check_fitted()
        self._files.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Self:
        """Read a file written by :meth:`save`."""
        return cls._files.load(cls, path)

    def to_tokenizer_json(self, path: str | os.PathLike) -> None:
        """Write a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file``
        loads (the same ids)."""
        self._check_fitted()
        self._files.to_tokenizer_json(self, path)

    @classmethod
    def from_tokenizer_json(cls, path: str | os.PathLike) -> Self:
        """Read a Hugging Face ``tokenizer.json`` holding this tokenizer's model."""
        return cls._files.from_tokenizer_json(cls, path)
