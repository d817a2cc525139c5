"""ByteLevelBPE on its own: round trips, kernels against references, specials, files, errors."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rowbook.text import ByteLevelBPE, learn_bpe, segment
from rowbook.text.bpe.bytelevel import BYTE_TO_UNICODE, GPT2_PATTERN, byte_alphabet, to_byte_level
from rowbook.text.bpe.classic import learn_merges_recount
from rowbook.text.bpe.merge_kernels import SHORT, encode_word_reference, encode_words
from rowbook.text.bpe.train import train_merges

SPECIALS = ["<pad>", "<|endoftext|>"]


@pytest.fixture(scope="module")
def bpe(corpus):
    return ByteLevelBPE().fit(corpus, 800, special_tokens=SPECIALS)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_decode_encode_round_trip(bpe, data, hard_text):
    text = data.draw(hard_text)
    ids = bpe.encode(text).ids
    assert bpe.decode(ids, skip_special_tokens=False) == text
    assert bpe.detokenize(bpe.tokenize(text)) == text
    assert all(0 <= i < len(bpe) for i in ids)


def test_round_trip_of_empty_string_and_batches(bpe, corpus):
    assert bpe.encode("").ids == [] and bpe.decode([]) == ""
    assert bpe.encode_batch(corpus[:50]) == [bpe.encode(t) for t in corpus[:50]]  # Encodings


def test_special_tokens_are_never_split(bpe):
    pad, eot = bpe.special_tokens["<pad>"], bpe.special_tokens["<|endoftext|>"]
    assert (pad, eot) == (0, 1)  # specials take the first ids
    ids = bpe.encode("x<pad><|endoftext|>y<pad").ids
    assert ids.count(pad) == 1 and ids.count(eot) == 1
    assert ids == [*bpe.encode("x").ids, pad, eot, *bpe.encode("y<pad").ids]
    assert bpe.decode(ids, skip_special_tokens=True) == "xy<pad"


def test_cache_gives_the_same_ids_as_a_cold_encoder(corpus):
    small = ByteLevelBPE(cache_size=5).fit(corpus, 600)
    big = ByteLevelBPE().fit(corpus, 600)
    longest = max(len(set(regex.findall(GPT2_PATTERN, t))) for t in corpus[:100])
    for text in corpus[:100]:
        assert small.encode(text).ids == big.encode(text).ids
        assert len(small._encoder.cache) <= max(
            5, longest
        )  # emptied when full, refilled by one text


def random_word_counts(rng: random.Random) -> dict[bytes, int]:
    alphabet = rng.choice([b"ab", b"abc", b"abcde", bytes(range(97, 123))])
    words: dict[bytes, int] = {}
    for _ in range(rng.randint(1, 40)):
        word = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        words[word] = words.get(word, 0) + rng.randint(1, 7)
    return words


@pytest.mark.parametrize("seed", range(25))
def test_incremental_trainer_equals_recount_reference(seed):
    rng = random.Random(seed)
    words = random_word_counts(rng)
    tokens = [bytes([b]) for b in range(256)]
    vocab_size, min_count = 256 + rng.randint(1, 60), rng.randint(0, 3)
    fast = train_merges(
        np.frombuffer(b"".join(words), dtype=np.uint8),
        np.cumsum([len(w) for w in words]),
        np.array(list(words.values())),
        np.arange(256),
        tokens,
        vocab_size,
        min_count,
    )
    reference = learn_merges_recount(
        {tuple(w): c for w, c in words.items()}, tokens, vocab_size, min_count=min_count
    )
    assert [tuple(row) for row in fast.tolist()] == reference


@pytest.mark.parametrize("seed", range(10))
def test_encode_kernel_equals_reference(seed, corpus):
    rng = random.Random(seed)
    bpe = ByteLevelBPE().fit(corpus, rng.randint(300, 900), min_count=rng.randint(0, 3))
    ranks = {
        (bpe.vocab[a], bpe.vocab[b]): (r, bpe.vocab[a + b]) for r, (a, b) in enumerate(bpe.merges)
    }
    words = [w.encode() for t in rng.sample(corpus, 40) for w in re.findall(r"\S+|\s+", t)]
    words += [b"a" * 300, b"ab" * 150, "é".encode() * 50]
    # either side of the length where the scan of a short word gives way to the heap
    words += [w * k for w in (b"a", b"ab", b"ba") for k in range(SHORT // len(w) - 2, SHORT + 3)]
    got = encode_words(words, bpe._encoder.byte_ids, bpe._encoder.pairs)
    assert got == [
        encode_word_reference(bpe._encoder.byte_ids[list(w)].tolist(), ranks) for w in words
    ]


def paper_algorithm_1(vocab: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Sennrich et al. (2016), Algorithm 1, restated: space-separated symbols, regex merges."""
    learned = []
    for _ in range(num_merges):
        pairs: dict[tuple[str, str], int] = {}
        for word, freq in vocab.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] = (
                    pairs.get((symbols[i], symbols[i + 1]), 0) + freq
                )
        best = max(pairs, key=pairs.get)
        bigram = re.compile(r"(?<!\S)" + re.escape(" ".join(best)) + r"(?!\S)")
        vocab = {bigram.sub("".join(best), word): freq for word, freq in vocab.items()}
        learned.append(best)
    return learned


def test_classic_bpe_reproduces_the_paper_toy_corpus():
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    paper = paper_algorithm_1({" ".join(w) + " </w>": c for w, c in counts.items()}, 10)
    steps = learn_bpe(counts, 10)
    assert [(s.left, s.right) for s in steps] == paper
    assert paper[:3] == [("e", "s"), ("es", "t"), ("est", "</w>")]  # the paper's first merges
    assert {"low", "est</w>"} <= {s.token for s in steps}  # the paper: "low", "est" absorbed
    assert segment("lowest", steps) == ["low", "est</w>"]


def test_save_load_round_trip_and_readable_format(bpe, corpus, tmp_path):
    path = tmp_path / "bpe.json"
    bpe.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "rowbook.ByteLevelBPE" and data["version"] == 1
    assert (
        data["merges"][0][:2] == list(bpe.merges[0])
        and data["merges"][0][2] == bpe.merge_trace[0].count
    )
    again = ByteLevelBPE.load(path)
    assert again.vocab == bpe.vocab and again.merges == bpe.merges
    assert again.merge_trace == bpe.merge_trace
    assert [again.encode(t) for t in corpus[:50]] == [bpe.encode(t) for t in corpus[:50]]
    assert not list(tmp_path.glob("*.tmp"))  # the atomic write left no temporary file


def test_byte_alphabet_ids_follow_code_point_order(bpe):
    assert [bpe.vocab[c] for c in byte_alphabet()] == list(range(2, 258))
    assert sorted(byte_alphabet()) == byte_alphabet() == sorted(BYTE_TO_UNICODE)
    assert to_byte_level("é ") == "".join(BYTE_TO_UNICODE[b] for b in "é ".encode())


# ----------------------------------------------------------------- bad input
def test_bad_inputs_raise_clear_errors(bpe):
    with pytest.raises(TypeError, match="text must be a str"):
        bpe.encode(b"bytes")
    with pytest.raises(TypeError, match="text must be a str"):
        ByteLevelBPE().fit(["ok", 3], 300)
    with pytest.raises(TypeError, match="sequence of str"):
        bpe.encode_batch("one text")
    with pytest.raises(ValueError, match="lone surrogate '\\\\ud800' at character offset 2"):
        bpe.encode("ab\ud800")
    with pytest.raises(IndexError, match="out of range"):
        bpe.decode([0, len(bpe)])
    with pytest.raises(ValueError, match="not fitted"):
        ByteLevelBPE().encode("x")
    with pytest.raises(KeyError, match="not in the vocabulary"):
        bpe.token_to_id("no such token")


@pytest.mark.parametrize("vocab_size", [0, 255, 256, 257, 2.5])
def test_vocab_size_below_byte_alphabet_plus_specials(vocab_size):
    with pytest.raises(
        ValueError, match=r"vocab_size must be an int >= 258 \(256 byte symbols \+ 2"
    ):
        ByteLevelBPE().fit(["text"], vocab_size, special_tokens=SPECIALS)


def test_fit_arguments_are_checked_before_reading_the_corpus():
    def corpus():
        raise AssertionError("the corpus was read")
        yield "never"

    with pytest.raises(ValueError, match="vocab_size must be an int >= 256"):
        ByteLevelBPE().fit(corpus(), 100)
    with pytest.raises(ValueError, match="min_count must be an int >= 0, got -1"):
        ByteLevelBPE().fit(corpus(), 300, min_count=-1)
    with pytest.raises(TypeError, match="word_counts must map str to int"):
        ByteLevelBPE().fit_word_counts({b"bytes": 3}, 300)


def test_bad_special_tokens():
    with pytest.raises(ValueError, match="duplicates"):
        ByteLevelBPE().fit(["x"], 300, special_tokens=["<a>", "<a>"])
    with pytest.raises(TypeError, match="got the str"):
        ByteLevelBPE().fit(["x"], 300, special_tokens="<a>")
    with pytest.raises(ValueError, match="non-empty"):
        ByteLevelBPE().fit(["x"], 300, special_tokens=[""])


def edited(bpe, tmp_path, edit) -> str:
    bpe.save(tmp_path / "bpe.json")
    data = json.loads((tmp_path / "bpe.json").read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path / "bad.json"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(version=2), "version 2; this rowbook reads version 1"),
        (lambda d: d.update(format="other"), "not a rowbook ByteLevelBPE file"),
        (
            lambda d: d["special_tokens"].append("<mask>"),
            "special token '<mask>' is missing from the vocabulary",
        ),
        (lambda d: d["vocab"].update(renamed=d["vocab"].pop("Ġ")), "lacks 1 byte symbols"),
        (lambda d: d["vocab"].update(Ġ=5), "vocab id 5 is used twice"),
        (
            lambda d: d["merges"].append(["zz", "q", 1]),
            "merge .* must be two tokens of the vocabulary",
        ),
        (lambda d: d.pop("vocab"), "has no 'vocab' field"),
        (lambda d: d["merges"].append(["a", "b"]), r"must be \[left, right, count or null\]"),
    ],
)
def test_corrupt_or_wrong_version_files(bpe, tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        ByteLevelBPE.load(edited(bpe, tmp_path, edit))


def test_truncated_json_reports_line_and_column(bpe, tmp_path):
    bpe.save(tmp_path / "bpe.json")
    text = (tmp_path / "bpe.json").read_text(encoding="utf-8")
    (tmp_path / "cut.json").write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match=r"not valid JSON: .* at line \d+, column \d+"):
        ByteLevelBPE.load(tmp_path / "cut.json")
    with pytest.raises(ValueError, match="does not hold a BPE model"):
        ByteLevelBPE.from_tokenizer_json(tmp_path / "bpe.json")


def test_unsupported_tokenizer_json_options_are_refused(bpe, tmp_path):
    bpe.to_tokenizer_json(tmp_path / "t.json")
    base = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    cases = [
        ("normalizer", {"type": "Nmt"}, "normalizer 'Nmt' is not supported"),
        ("version", "2.0", "version '2.0'"),
        ("post_processor", {"type": "TemplateProcessing"}, "'single' must be a list"),
        ("post_processor", {"type": "RobertaProcessing"}, "not supported"),
    ]
    for key, value, message in cases:
        (tmp_path / "x.json").write_text(json.dumps({**base, key: value}), encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            ByteLevelBPE.from_tokenizer_json(tmp_path / "x.json")
    model = {**base["model"], "dropout": "often"}  # a number is read (BPE-dropout)
    (tmp_path / "x.json").write_text(json.dumps({**base, "model": model}), encoding="utf-8")
    with pytest.raises(ValueError, match="dropout"):
        ByteLevelBPE.from_tokenizer_json(tmp_path / "x.json")
