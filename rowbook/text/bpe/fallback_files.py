"""Files of a :class:`~rowbook.text.bpe.fallback.ByteFallbackBPE`: ``tokenizer.json`` and rowbook's JSON.

The ``tokenizer.json`` model of Llama 2 and Mistral::

    {"type": "BPE", "dropout": null, "unk_token": "<unk>", "continuing_subword_prefix": null,
     "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true,
     "ignore_merges": false, "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x00>": 3, ...},
     "merges": ["▁ t", "e r", ...]}

around it a ``Sequence`` of ``Prepend("▁")`` and ``Replace(" ", "▁")`` normalizers and no
pre-tokenizer (the files ``transformers`` converted first), or a ``Metaspace``
pre-tokenizer (``prepend_scheme: "first"``, ``split: false``; the later ones), the template
``<s> $A`` and the decoders that undo them (:mod:`rowbook.text.hf_files` reads and checks
those parts). Dropout and the two affixes are refused: they would give other ids.
rowbook's own file is ``{"format": "rowbook.ByteFallbackBPE", "version": 1, "tokenizer":
{...the tokenizer.json...}}``.
"""

from __future__ import annotations

from typing import Any

from rowbook.text import hf_files

__all__ = ["FILES", "from_document"]


def _model(bpe: Any) -> dict[str, Any]:
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": bpe.unk_token,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": bpe.fuse_unk,
        "byte_fallback": bpe.byte_fallback,
        "ignore_merges": bpe.ignore_merges,
        "vocab": {t: i for i, t in enumerate(bpe._id_to_token[: bpe._model_size])},
        "merges": [[a, b] for a, b in bpe._merges],
    }


def _flag(model: dict, key: str, default: bool, where: str) -> bool:
    value = model.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{where}: model.{key} must be true or false, got {value!r}")
    return value


def _merges(model: dict, where: str) -> list[tuple[str, str]]:
    merges = hf_files.model_field(model, "merges", list, where, "a list")
    out = []
    for i, m in enumerate(merges):
        pair = m.split(" ") if isinstance(m, str) else m
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise ValueError(
                f"{where}: model.merges[{i}] {str(m)[:60]} is not 'left right' or [left, right]"
            )
        out.append((pair[0], pair[1]))
    return out


def from_document(cls: Any, d: Any, where: str) -> Any:
    """A :class:`ByteFallbackBPE` from a parsed ``tokenizer.json`` document."""
    d, model = hf_files.check_document(d, "BPE", where)
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"{where}: model.dropout={model['dropout']!r} is not supported (null)")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ValueError(f"{where}: model.{key}={model[key]!r} is not supported (null)")
    unk = model.get("unk_token")
    if unk is not None and not isinstance(unk, str):
        raise ValueError(f"{where}: model.unk_token must be a string or null, got {unk!r}")
    model_tokens = hf_files.model_tokens(model, where)
    added = hf_files.added_tokens(d, where, normalized_ok=d.get("normalizer") is None)
    tokens = hf_files.merge_vocab(model_tokens, added, where)
    normalizer, pre, template, decoder = hf_files.pipeline_parts(
        d, {t: i for i, t in enumerate(tokens)}, where
    )
    try:
        bpe = cls(
            unk_token=unk,
            byte_fallback=_flag(model, "byte_fallback", False, where),
            fuse_unk=_flag(model, "fuse_unk", False, where),
            ignore_merges=_flag(model, "ignore_merges", False, where),
        )
        bpe.normalizer, bpe.pre_tokenizer = normalizer, pre
        bpe.set_model(
            tokens, _merges(model, where), [(t, s) for t, _, s in added], len(model_tokens)
        )
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    bpe.template, bpe.decoder = template, decoder
    return bpe


#: ``tokenizer.json`` and rowbook's file.
FILES = hf_files.TokenizerFiles("ByteFallbackBPE", _model, from_document)
