"""SentencePiece ``.model`` files against the ``sentencepiece`` package: models trained in the test,
Unigram and BPE, with and without byte fallback, ``nmt_nfkc`` and identity rules, and with the
whitespace flags turned the other way; the compiled batch pass held to the text-at-a-time path."""

from __future__ import annotations

import functools
import io
import itertools
import struct

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rowbook.text import SentencePieceBPE, Unigram, load_model, subword_pipeline, trie
from rowbook.text.aligned import Aligned
from rowbook.text.sentencepiece import save_model
from rowbook.text.sentencepiece.bpe import encode_reference
from rowbook.text.sentencepiece.normalizer import SentencePieceNormalizer, normalize_into
from rowbook.text.sentencepiece.proto import read_model, write_model
from rowbook.text.trie import codepoints, compiled_codepoints

MORE_HARD = [
    "İstanbul ΣΑΣ ǅ ﬁ",
    "ctrl\x00\x07\x1b[0m\u2028end\ufffd",
    "a" + " " * 40 + "b",
    " lead",
    "x<sep>y<unk>z<s>",
    "ＡＢＣ１２３ ① ㍿",
    "\u1100\u1161\u11a8 각",
    "spaces\n\n\nThe end  ",
    "naïve café 中文字 한국어 ١٢٣",
    "x" * 3000,
    "antidisestablishmentarianism" * 40,
    "word\u2581",
    "\u2581",
    "\u2581\u2581a\u2581 b",
    "   ",
    "\t\t\n",
    "☃☃☃ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁 ☃",
    "<sep><sep> a<sep>b <sep>",
    "e\u0301\u0301 ﬁﬁ ＡＡ",
    "a" + "\u3000" * 5 + "b\u00a0\u00a0c",
]
CONFIGS = [
    (t, b, r) for t in ("unigram", "bpe") for b in (False, True) for r in ("nmt_nfkc", "identity")
]
#: The whitespace flags the other way: spaces kept, no dummy prefix, "▁" after a word (a BPE
#: then merges whole sentences, not word by word).
FLAGS = {
    "remove_extra_whitespaces": False,
    "add_dummy_prefix": False,
    "treat_whitespace_as_suffix": True,
}


@pytest.fixture(scope="module")
def models_dir(corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm")
    for kind, byte_fallback, rule in CONFIGS:
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(corpus),
            model_writer=out,
            vocab_size=600,
            model_type=kind,
            byte_fallback=byte_fallback,
            minloglevel=2,
            user_defined_symbols=["<sep>"],
            hard_vocab_limit=False,
            normalization_rule_name=rule,
        )
        (folder / f"{kind}-{byte_fallback}-{rule}.model").write_bytes(out.getvalue())
    for kind in ("unigram", "bpe"):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(corpus),
            model_writer=out,
            vocab_size=600,
            model_type=kind,
            byte_fallback=True,
            minloglevel=2,
            hard_vocab_limit=False,
            **FLAGS,
        )
        (folder / f"{kind}-flags.model").write_bytes(out.getvalue())
    return folder


def _model_paths(models_dir):
    return [
        *(models_dir / f"{k}-{b}-{r}.model" for k, b, r in CONFIGS),
        models_dir / "unigram-flags.model",
        models_dir / "bpe-flags.model",
    ]


@functools.cache
def _loaded(path):
    """One tokenizer a model file for the hypothesis test (loading is most of an example's time)."""
    return load_model(path)


def _text_at_a_time(tok, texts, monkeypatch):
    """Ids of each text by the Python path (no compiled batch job)."""
    with monkeypatch.context() as patch:
        patch.setattr(type(tok), "_batch_job", lambda self: None)
        return [e.ids for e in tok.encode_batch(texts, workers=1)]


@pytest.mark.parametrize("kind, byte_fallback, rule", CONFIGS)
def test_ids_and_decoding_equal_sentencepiece(
    models_dir, corpus, hard_strings, kind, byte_fallback, rule
):
    path = models_dir / f"{kind}-{byte_fallback}-{rule}.model"
    theirs = spm.SentencePieceProcessor(model_file=str(path))
    ours = load_model(path)
    assert isinstance(ours, Unigram if kind == "unigram" else SentencePieceBPE)
    assert [ours.id_to_token(i) for i in range(len(ours))] == [
        theirs.id_to_piece(i) for i in range(theirs.get_piece_size())
    ]
    texts = [*hard_strings, *MORE_HARD, *corpus]
    assert [e.ids for e in ours.encode_batch(texts)] == theirs.encode(texts)
    for text in texts[:200]:
        ids = ours.encode(text).ids
        assert ours.decode(ids) == theirs.decode(ids), text
        assert ours.tokenize(text) == theirs.encode(text, out_type=str) or "<0x" in str(
            ours.tokenize(text)
        )


@pytest.mark.parametrize("flags", [False, True])
@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_flags_models_encode_as_sentencepiece(
    models_dir, corpus, hard_strings, kind, flags, monkeypatch
):
    path = models_dir / (f"{kind}-flags.model" if flags else f"{kind}-False-identity.model")
    theirs = spm.SentencePieceProcessor(model_file=str(path))
    texts = [*hard_strings, *MORE_HARD, *corpus[:300]]
    ours = load_model(path)
    assert [e.ids for e in ours.encode_batch(texts, workers=2)] == theirs.encode(texts)
    monkeypatch.setattr(subword_pipeline, "POOL_CHARS", 1_000)  # batches on threads
    monkeypatch.setattr(subword_pipeline, "BATCH_CHARS", 500)
    encodings = ours.encode_batch(texts, workers=2)
    assert [e.ids for e in encodings] == theirs.encode(texts)
    assert [e.tokens for e in encodings[:20]] == [ours.encode(t).tokens for t in texts[:20]]


def test_the_batch_pass_equals_the_text_at_a_time_path(
    models_dir, corpus, hard_strings, monkeypatch
):
    texts = [*hard_strings, *MORE_HARD, *corpus[:300], "\ud800 lone surrogate"]
    for path in _model_paths(models_dir):
        tok = load_model(path)
        assert tok._batch_job() is not None, path
        expected = _text_at_a_time(tok, texts, monkeypatch)
        assert [e.ids for e in tok.encode_batch(texts, workers=1)] == expected, path
        assert [tok.encode(t).ids for t in texts[:40]] == expected[:40], path


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_text_takes_the_same_ids_both_ways(models_dir, hard_text, data, monkeypatch):
    texts = data.draw(st.lists(hard_text, min_size=1, max_size=4))
    for path in _model_paths(models_dir)[::3]:
        tok = _loaded(path)
        expected = _text_at_a_time(tok, texts, monkeypatch)
        assert [e.ids for e in tok.encode_batch(texts)] == expected, (path, texts)


def test_normalizer_fast_path_equals_the_walk(models_dir, corpus, hard_strings):
    for rule in ("nmt_nfkc", "identity"):
        norm = load_model(models_dir / f"unigram-False-{rule}.model").normalizer
        norm_ud = norm.__class__(norm.charsmap, user_defined=("<sep>",))
        fast = norm.__class__(norm.charsmap)
        for text in [*hard_strings, *MORE_HARD, *corpus[:300]]:
            walked = fast.aligned(Aligned.of(text))
            assert fast(text) == walked.text
            assert norm_ud(text) == norm_ud.aligned(Aligned.of(text)).text
            assert all(
                0 <= a < b <= len(text) for a, b in zip(walked.starts, walked.ends, strict=True)
            )


@settings(max_examples=100, deadline=None)
@given(text=st.text(st.characters(codec=None, min_codepoint=0)))  # surrogates included
def test_compiled_codepoints_equal_the_encoded_ones(text):
    """The batch kernels read a str's code points in compiled code: the same as
    :func:`codepoints` for strings held one, two or four bytes a character."""
    assert compiled_codepoints(text).tolist() == codepoints(text).tolist()


@pytest.mark.parametrize(
    "text", ["", "ascii", "caf\xe9", "\u201cquoted\u201d", "\U0001f600 \ud800x"]
)
def test_compiled_codepoints_of_each_kind_of_str(text, hard_strings):
    """Both readers: numba's by storage kind (private, used when numba has it) and the
    public ``ord`` of each character (the fallback when a numba release moves it)."""
    for t in [text, *hard_strings]:
        assert compiled_codepoints(t).tolist() == [ord(c) for c in t]
        assert trie._codepoints_by_ord(t).tolist() == [ord(c) for c in t]


def _compiled_walk(norm, text):
    user, rules, flags = norm.tables
    data = codepoints(text)
    out = np.empty(data.size * int(flags[6]) + 2, np.int32)
    m = normalize_into(data, 0, data.size, user, rules, flags, out)
    return out[:m].astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


@pytest.mark.parametrize("rule", ["nmt_nfkc", "identity"])
def test_the_compiled_walk_equals_the_walk(models_dir, corpus, hard_strings, rule):
    charsmap = load_model(models_dir / f"unigram-False-{rule}.model").normalizer.charsmap
    texts = [*hard_strings, *MORE_HARD, *corpus[:100], "\ud800 x", " \u2581 "]
    for user in ((), ("<sep>", "ab", "a")):
        for flags in itertools.product([False, True], repeat=4):
            norm = SentencePieceNormalizer(
                charsmap,
                add_dummy_prefix=flags[0],
                remove_extra_whitespaces=flags[1],
                escape_whitespaces=flags[2],
                treat_whitespace_as_suffix=flags[3],
                user_defined=user,
            )
            for text in texts:
                assert _compiled_walk(norm, text) == norm.aligned(Aligned.of(text)).text, (
                    flags,
                    user,
                    text,
                )


def test_bpe_kernel_equals_the_reference_loop(models_dir, corpus):
    bpe = load_model(models_dir / "bpe-False-nmt_nfkc.model")
    pieces = {t: i for i, t in enumerate(bpe._id_to_token) if bpe._kinds[i] in (0, 1, 2)}
    for text in corpus[:300]:
        normalized = bpe.normalizer(text)
        _, frozen, symbols = bpe._initial(normalized)
        expected = encode_reference(symbols, frozen, pieces, bpe._scores.tolist(), set())
        assert [t for _, t in bpe._paths([normalized])[0]] == expected


def test_model_files_round_trip_to_the_same_bytes(models_dir, tmp_path):
    for path in sorted(models_dir.glob("*.model"))[:3]:
        save_model(load_model(path), tmp_path / "again.model")
        assert (tmp_path / "again.model").read_bytes() == path.read_bytes()


def test_a_trained_unigram_written_as_a_model_encodes_the_same_in_sentencepiece(corpus, tmp_path):
    ours = Unigram().fit(corpus, 700, special_tokens=["<unk>"], workers=1)
    save_model(ours, tmp_path / "ours.model")
    theirs = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    texts = [
        t for t in corpus if t == " ".join(t.split())
    ]  # single spaces: Metaspace = dummy prefix
    agree = sum(ours.encode(t).ids == theirs.encode(t) for t in texts) / len(texts)
    assert agree >= 0.99  # 32-bit path scores in sentencepiece may break a near tie otherwise


def _model_bytes(pieces, byte_fallback=False):
    return write_model(
        pieces, {"model_type": 1, "byte_fallback": byte_fallback}, {"name": "identity"}
    )


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x0a\x7f", "claims 127 bytes"),
        (b"\x0a\x02\x0a", "field 1 claims 2 bytes, 1 are left"),
        (b"\x0a\x01\x0a", "a varint runs past the end"),
        (b"\x0b\x00", "wire type 3"),
        (b"\x08" + b"\xff" * 11, "longer than 10 bytes"),
        (
            _model_bytes([("<unk>", 0.0, 2), ("a", 0.0, 1), ("a", -1.0, 1)]),
            "piece 'a' is given twice",
        ),
        (_model_bytes([("<unk>", 0.0, 2), ("a", float("nan"), 1)]), "has the score nan"),
        (_model_bytes([("a", -1.0, 1)]), "0 pieces have the UNKNOWN type"),
        (
            _model_bytes([("<unk>", 0.0, 2), ("<0x41>", 0.0, 6)]),
            "byte piece '<0x41>' is found although byte_fallback",
        ),
        (_model_bytes([("<unk>", 0.0, 2)], byte_fallback=True), "256 byte pieces are missing"),
        (_model_bytes([("<unk>", 0.0, 2), ("", 0.0, 1)]), "empty piece"),
        (b"\x0a\x05\x0a\x03\xff\xfe\xfd", "not UTF-8"),
        (b"\x12\x02\x18\x03" + _model_bytes([("<unk>", 0.0, 2)])[:0], "holds no pieces"),
    ],
)
def test_malformed_model_files_are_refused_naming_the_file(tmp_path, data, message):
    path = tmp_path / "bad.model"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as err:
        load_model(path)
    assert str(path) in str(err.value)


def test_word_and_char_models_are_refused(tmp_path):
    data = write_model([("<unk>", 0.0, 2), ("a", -1.0, 1)], {"model_type": 3}, {"name": "identity"})
    (tmp_path / "word.model").write_bytes(data)
    with pytest.raises(ValueError, match="is a SentencePiece WORD model"):
        load_model(tmp_path / "word.model")


def test_scores_are_read_as_32_bit_floats():
    data = _model_bytes([("<unk>", 0.0, 2), ("ab", -1.1, 1)])
    assert read_model(data, "x").pieces[1][1] == struct.unpack("<f", struct.pack("<f", -1.1))[0]
    assert np.float32(read_model(data, "x").pieces[1][1]) == np.float32(-1.1)
