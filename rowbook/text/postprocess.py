"""After the model: the tokens a template adds (``[CLS] ... [SEP]``), and decoders back to text.

Both follow ``tokenizers`` and read and write its ``tokenizer.json`` entries:

* :class:`Template` is ``TemplateProcessing`` for one sequence (``single``), and
  ``BertProcessing`` (``[CLS] $A [SEP]``) read as the template it stands for. Tokens it adds
  have offsets ``(0, 0)`` and a 1 in ``special_tokens_mask``. Pairs of sequences are not
  encoded by rowbook, so a file's ``pair`` template is kept only to be written back.
* decoders turn tokens into text, each a step of a chain as in ``tokenizers``
  (``decode_chain``): :class:`WordPieceDecoder` (``"##"`` glued, a space elsewhere, then
  BERT's clean-up of spaces before punctuation), :class:`MetaspaceDecoder` (``"▁"`` back to
  a space), and the steps SentencePiece-converted files chain: ``Replace``, ``ByteFallback``
  (``<0x41>`` pieces back to bytes), ``Fuse`` and ``Strip``.

Examples
--------
>>> WordPieceDecoder()(["hel", "##lo", "world", "!", "do", "n't"])
"hello world! don't"
>>> decoder = decoder_from_json({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
...     {"type": "ByteFallback"}, {"type": "Fuse"},
...     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})
>>> decoder(["▁caf", "<0xC3>", "<0xA9>", "▁ok"])
'café ok'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowbook.text.components import MetaspaceSettings

__all__ = [
    "MetaspaceDecoder",
    "Template",
    "WordPieceDecoder",
    "decoder_from_json",
    "template_from_json",
]

Decoder = Callable[[list[str]], str]


@dataclass(frozen=True)
class Template:
    """Special tokens around one sequence: ``before + tokens + after``.

    ``ids`` maps each special token to its id; ``pair`` is a file's pair template, kept as read.
    """

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    ids: Mapping[str, int] = field(default_factory=dict)
    pair: Any = None

    def apply(self, ids: list[int]) -> tuple[list[int], int, int]:
        """``ids`` with the template's ids around them; and how many were put before, after."""
        before = [self.ids[t] for t in self.before]
        return before + ids + [self.ids[t] for t in self.after], len(self.before), len(self.after)

    def to_json(self) -> dict[str, Any]:
        """The ``TemplateProcessing`` entry of a ``tokenizer.json``."""

        def special(t: str) -> dict[str, Any]:
            return {"SpecialToken": {"id": t, "type_id": 0}}

        single = [
            *map(special, self.before),
            {"Sequence": {"id": "A", "type_id": 0}},
            *map(special, self.after),
        ]
        pair = (
            self.pair
            if self.pair is not None
            else [
                *single,
                *map(special, self.before[1:]),
                {"Sequence": {"id": "B", "type_id": 1}},
                *({"SpecialToken": {"id": t, "type_id": 1}} for t in self.after),
            ]
        )
        tokens = {
            t: {"id": t, "ids": [self.ids[t]], "tokens": [t]} for t in (*self.before, *self.after)
        }
        return {
            "type": "TemplateProcessing",
            "single": single,
            "pair": pair,
            "special_tokens": tokens,
        }


def template_from_json(d: Any, vocab: Mapping[str, int], where: str) -> Template | None:
    """The :class:`Template` of a ``post_processor`` entry (``None`` for null)."""
    if d is None:
        return None
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "BertProcessing":
        cls, sep = d.get("cls"), d.get("sep")
        if not all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) for x in (cls, sep)
        ):
            raise ValueError(
                f"{where}: post_processor BertProcessing needs 'cls' and 'sep' as [token, id]"
            )
        return Template((cls[0],), (sep[0],), _ids([cls[0], sep[0]], vocab, where))
    if kind != "TemplateProcessing":
        raise ValueError(
            f"{where}: post_processor {str(kind or d)[:60]!r} is not supported; rowbook reads "
            "TemplateProcessing, BertProcessing or null"
        )
    single = d.get("single")
    if not isinstance(single, list) or not all(isinstance(p, dict) and len(p) == 1 for p in single):
        raise ValueError(f"{where}: post_processor 'single' must be a list of one-key objects")
    names = [next(iter(p)) for p in single]
    if names.count("Sequence") != 1 or any(n not in ("Sequence", "SpecialToken") for n in names):
        raise ValueError(
            f"{where}: post_processor 'single' must hold one Sequence and SpecialTokens"
        )
    tokens = [
        p["SpecialToken"].get("id") if isinstance(p["SpecialToken"], dict) else None
        for p in single
        if "SpecialToken" in p
    ]
    if not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"{where}: post_processor SpecialToken entries need a string 'id'")
    cut = names.index("Sequence")
    return Template(
        tuple(tokens[:cut]), tuple(tokens[cut:]), _ids(tokens, vocab, where), d.get("pair")
    )


def _ids(tokens: Sequence[str], vocab: Mapping[str, int], where: str) -> dict[str, int]:
    missing = [t for t in tokens if t not in vocab]
    if missing:
        raise ValueError(
            f"{where}: the post_processor adds {missing[0]!r}, which is not in the vocabulary"
        )
    return {t: vocab[t] for t in tokens}


# -- decoders ----------------------------------------------------------------------------------

_CLEANUP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


def _cleanup(token: str) -> str:
    for old, new in _CLEANUP:
        token = token.replace(old, new)
    return token


@dataclass(frozen=True)
class WordPieceDecoder:
    """``tokenizers``' ``WordPiece`` decoder: strip ``prefix`` from continuations, put a space
    before other tokens, clean up spaces before punctuation (per token, as there)."""

    prefix: str = "##"
    cleanup: bool = True

    def chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token[len(self.prefix) :] if token.startswith(self.prefix) else " " + token
            out.append(_cleanup(token) if self.cleanup else token)
        return out

    def __call__(self, tokens: list[str]) -> str:
        return "".join(self.chain(tokens))

    def to_json(self) -> dict[str, Any]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


@dataclass(frozen=True)
class MetaspaceDecoder(MetaspaceSettings):
    """``tokenizers``' ``Metaspace`` decoder: ``replacement`` becomes a space, except in the
    first token when a space was prepended (``prepend_scheme`` other than ``"never"``)."""

    def chain(self, tokens: list[str]) -> list[str]:
        drop_first = self.prepend_scheme != "never"
        return [
            t.replace(self.replacement, "" if i == 0 and drop_first else " ")
            for i, t in enumerate(tokens)
        ]

    def __call__(self, tokens: list[str]) -> str:
        return "".join(self.chain(tokens))


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    pending = bytearray()

    def flush() -> None:
        try:
            out.append(pending.decode("utf-8"))
        except UnicodeDecodeError:
            out.extend("\ufffd" * len(pending))
        pending.clear()

    for token in tokens:
        is_byte = len(token) == 6 and token.startswith("<0x") and token.endswith(">")
        value = (
            int(token[3:5], 16)
            if is_byte and all(c in "0123456789abcdefABCDEF" for c in token[3:5])
            else None
        )
        if value is not None:
            pending.append(value)
            continue
        if pending:
            flush()
        out.append(token)
    if pending:
        flush()
    return out


def _strip(content: str, start: int, stop: int) -> Callable[[list[str]], list[str]]:
    def chain(tokens: list[str]) -> list[str]:
        out = []
        for token in tokens:
            i = 0
            while i < min(start, len(token)) and token[i] == content:
                i += 1
            j = len(token)
            while j > i and len(token) - j < stop and token[j - 1] == content:
                j -= 1
            out.append(token[i:j])
        return out

    return chain


@dataclass(frozen=True)
class DecoderChain:
    """Steps applied in order, each ``list[str] -> list[str]``; the result is joined."""

    steps: tuple[Callable[[list[str]], list[str]], ...]
    json: Any

    def chain(self, tokens: list[str]) -> list[str]:
        for step in self.steps:
            tokens = step(tokens)
        return tokens

    def __call__(self, tokens: list[str]) -> str:
        return "".join(self.chain(tokens))

    def to_json(self) -> Any:
        return self.json


def _step(d: Any, where: str) -> Callable[[list[str]], list[str]]:
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "WordPiece":
        return WordPieceDecoder(_str(d, "prefix", where), bool(d.get("cleanup", True))).chain
    if kind == "Metaspace":
        scheme = d.get("prepend_scheme", "always" if d.get("add_prefix_space", True) else "never")
        return MetaspaceDecoder(_str(d, "replacement", where), scheme).chain
    if kind == "ByteFallback":
        return _byte_fallback
    if kind == "Fuse":
        return lambda tokens: ["".join(tokens)]
    if kind == "Replace":
        pattern = d.get("pattern")
        old = pattern.get("String") if isinstance(pattern, dict) else None
        if not isinstance(old, str) or not isinstance(d.get("content"), str):
            raise ValueError(
                f"{where}: decoder Replace needs a String pattern and a 'content' string"
            )
        return lambda tokens: [t.replace(old, d["content"]) for t in tokens]
    if kind == "Strip":
        counts = (d.get("start"), d.get("stop"))
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
            raise ValueError(f"{where}: decoder Strip needs integer 'start' and 'stop' >= 0")
        return _strip(_str(d, "content", where), *counts)
    if kind == "Sequence" and isinstance(d.get("decoders"), list):
        steps = [_step(s, where) for s in d["decoders"]]
        return lambda tokens: DecoderChain(tuple(steps), None).chain(tokens)
    raise ValueError(
        f"{where}: decoder {str(kind or d)[:60]!r} is not supported; rowbook reads WordPiece, "
        "Metaspace, ByteFallback, Fuse, Replace, Strip and Sequence"
    )


def _str(d: dict, key: str, where: str) -> str:
    if not isinstance(d.get(key), str):
        raise ValueError(
            f"{where}: decoder {d.get('type')} needs a string {key!r}, got {d.get(key)!r}"
        )
    return d[key]


def decoder_from_json(d: Any, where: str = "decoder") -> Decoder | None:
    """The decoder of a ``tokenizer.json`` ``decoder`` entry (``None`` for null)."""
    if d is None:
        return None
    return DecoderChain((_step(d, where),), d)
