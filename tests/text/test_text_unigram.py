"""Unigram against Hugging Face ``tokenizers``: encodings, decoding, training, files; the lattice
kernels against brute force."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from rowbook.text import Unigram
from rowbook.text.trie import codepoints
from rowbook.text.unigram import lattice
from rowbook.text.unigram.seeds import seed_pieces, substring_nodes, substring_nodes_reference

SPECIALS = ["<pad>", "<unk>"]
MORE_HARD = [
    "İstanbul ΣΑΣ ǅ ﬁ",
    "ctrl\x00\x07\x1b[0m\u2028end\ufffd",
    "a" + " " * 40 + "b",
    " lead",
    "x<pad>y<unk>z",
    "naïve café 中文字 한국어 ١٢٣",
]


def _hf_train(corpus, vocab_size=600):
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=SPECIALS, unk_token="<unk>", show_progress=False
    )
    tok.train_from_iterator(corpus, trainer)
    return tok


@pytest.fixture(scope="module")
def hf(corpus):
    return _hf_train(corpus)


@pytest.fixture(scope="module")
def ours(hf, tmp_path_factory):
    path = tmp_path_factory.mktemp("uni") / "tokenizer.json"
    hf.save(str(path))
    return Unigram.from_tokenizer_json(path)


def test_encodings_and_decoding_match_tokenizers(ours, hf, corpus, hard_strings, same_encodings):
    same_encodings(ours, hf, [*hard_strings, *MORE_HARD, *corpus[:300]], decode=True)
    texts = corpus[:200]
    assert [e.ids for e in ours.encode_batch(texts)] == [e.ids for e in hf.encode_batch(texts)]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_text_encodes_as_tokenizers(ours, hf, data, hard_text, same_encodings):
    same_encodings(ours, hf, [data.draw(hard_text)], decode=True)


def test_byte_fallback_matches_tokenizers(ours, corpus, hard_strings, tmp_path, same_encodings):
    pieces = [p for p in ours.pieces if len(p[0]) > 1 or p[0] in "abcdefghij▁ "] + [
        (f"<0x{b:02X}>", -20.0) for b in range(256)
    ]
    theirs = Tokenizer(models.Unigram(pieces, 1, True))
    theirs.pre_tokenizer = pre_tokenizers.Metaspace()
    theirs.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    theirs.save(str(tmp_path / "t.json"))
    mine = Unigram.from_tokenizer_json(tmp_path / "t.json")
    assert mine.byte_fallback
    same_encodings(mine, theirs, [*hard_strings, *MORE_HARD, *corpus[:100]], decode=True)


def test_decode_of_encode_is_the_text_where_metaspace_is_lossless(ours, corpus):
    known = set("".join(p for p, _ in ours.pieces))
    for text in corpus[:300]:
        if text[:1] != " " and set(text) <= known | {" "}:
            assert ours.decode(ours.encode(text).ids) == text


@pytest.mark.parametrize("vocab_size", [300, 600, 1000])
def test_training_learns_the_pieces_of_tokenizers(corpus, vocab_size):
    theirs = dict(json.loads(_hf_train(corpus, vocab_size).to_str())["model"]["vocab"])
    ours = dict(Unigram().fit(corpus, vocab_size, special_tokens=SPECIALS, workers=1).pieces)
    common = set(ours) & set(theirs)
    assert len(common) / len(theirs) >= 0.99  # measured: 1.0 at each size
    for piece in common:
        # characters missing from the model get min + 0.0001 per character added before them,
        # in tokenizers' hash order: up to 0.0001 * characters apart
        bound = 1e-9 if len(piece) > 1 else 1e-4 * len(set("".join(corpus)))
        assert abs(ours[piece] - theirs[piece]) <= bound, piece


def test_seeds_match_tokenizers_unit_test_and_brute_force():
    seeds = seed_pieces({"This is a": 1, "こんにちは友達": 1})
    assert seeds.pieces == [
        "s",
        "i",
        " ",
        "達",
        "友",
        "ん",
        "は",
        "に",
        "ち",
        "こ",
        "h",
        "a",
        "T",
        "is ",
        "s ",
    ]
    text = "This is aこんにちは友達"  # the words one after another: where each seed occurs
    assert [text[a : a + n] for a, n in zip(seeds.at, seeds.span, strict=True)] == seeds.pieces
    assert [round(s, 9) for s in seeds.scores[:4].tolist()] == [
        -2.564949357,
        -2.564949357,
        -2.564949357,
        -3.258096538,
    ]
    rng = np.random.default_rng(5)
    for _ in range(25):
        words = list(
            dict.fromkeys(
                "".join(rng.choice(list("abcé"), size=rng.integers(1, 9)))
                for _ in range(rng.integers(1, 40))
            )
        )
        text = codepoints("".join(w + "\0" for w in words))
        start, length, count = substring_nodes(text, 6)
        got = {
            "".join(map(chr, text[s : s + n])): int(c)
            for s, n, c in zip(start, length, count, strict=True)
        }
        assert got == substring_nodes_reference(words, 6)


def _small_model(rng):
    alphabet = list("abc")
    pieces = ["<unk>", *alphabet[: rng.integers(1, 4)]]
    pieces += list(
        dict.fromkeys("".join(rng.choice(alphabet, size=rng.integers(2, 4))) for _ in range(6))
    )
    scores = [0.0, *(-rng.uniform(0.5, 5.0) for _ in pieces[1:])]
    return Unigram.from_pieces(list(zip(pieces, scores, strict=True)), pre_tokenizer=None)


def test_viterbi_equals_brute_force_and_nbest_lists_the_best_paths():
    rng = np.random.default_rng(7)
    for _ in range(40):
        uni = _small_model(rng)
        table = dict(uni.pieces)
        del table["<unk>"]
        for word in ("".join(rng.choice(list("abcd"), size=rng.integers(1, 7))) for _ in range(10)):
            unk = min(table.values()) - 10.0
            score, _ = lattice.viterbi_reference(word, table, unk)
            data, starts = codepoints(word), np.array([0, len(word)])
            ids, pos, _ = lattice.viterbi(data, starts, uni._model)
            path = [
                (word[a:b], i)
                for i, a, b in zip(
                    ids.tolist(), pos.tolist(), [*pos.tolist()[1:], len(word)], strict=True
                )
            ]
            assert math.isclose(
                sum(table[p] if i >= 0 else unk for p, i in path), score, abs_tol=1e-9
            )
            best = uni.nbest(word, 4)
            assert math.isclose(best[0][1], score, abs_tol=1e-9)
            assert all(a[1] >= b[1] for a, b in itertools.pairwise(best))
            assert all("".join(tokens) == word for tokens, _ in best)


def test_sampling_is_seeded_and_follows_the_path_probabilities():
    pieces = [("<unk>", 0.0), ("a", -1.0), ("b", -1.2), ("ab", -1.5), ("ba", -2.0), ("aba", -3.0)]
    draws = [Unigram.from_pieces(pieces, pre_tokenizer=None, alpha=0.5, seed=s) for s in (3, 3, 4)]
    runs = [[tuple(u.encode("aba").tokens) for _ in range(3000)] for u in draws]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    paths = {("a", "b", "a"): -3.2, ("ab", "a"): -2.5, ("a", "ba"): -3.0, ("aba",): -3.0}
    z = sum(math.exp(0.5 * s) for s in paths.values())
    for path, score in paths.items():
        assert abs(runs[0].count(path) / 3000 - math.exp(0.5 * score) / z) < 0.03, path
    two = Unigram.from_pieces(pieces, pre_tokenizer=None, alpha=1.0, nbest_size=2, seed=0)
    assert {tuple(two.encode("aba").tokens) for _ in range(200)} <= {
        ("ab", "a"),
        ("a", "ba"),
        ("aba",),
    }


def test_files_round_trip_and_bad_files(ours, hf, corpus, tmp_path, same_encodings):
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    same_encodings(
        ours, Tokenizer.from_file(str(tmp_path / "tokenizer.json")), corpus[:60], decode=True
    )
    ours.save(tmp_path / "uni.json")
    same_encodings(Unigram.load(tmp_path / "uni.json"), hf, corpus[:60], decode=True)
    d = json.loads((tmp_path / "tokenizer.json").read_text())
    d["model"]["vocab"][3][1] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"nan.json: model.vocab\[3\] .* has the score nan"):
        Unigram.from_tokenizer_json(tmp_path / "nan.json")
    d["model"]["vocab"][3] = list(d["model"]["vocab"][4])
    (tmp_path / "twice.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"twice\.json: the vocabulary holds .* twice"):
        Unigram.from_tokenizer_json(tmp_path / "twice.json")
