"""Shared fixtures of the text tests: a multilingual corpus and Hugging Face trainers."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import strategies as st

SENTENCES = [
    "The quick brown fox jumps over the lazy dog. It's 3.14 o'clock, isn't it?",
    "We'll meet at 10:30 -- don't be late!!! Email: someone@example.com, cost $1,234.56",
    "Der schnelle braune Fuchs springt über den faulen Hund. Größe, Straße, Äpfel.",
    "Le cœur a ses raisons que la raison ne connaît point. L'été à Noël ? Déjà vu !",
    "El niño comió piñas y jalapeños en la mañana. ¿Dónde está la biblioteca?",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "我能吞下玻璃而不伤身体。今天天气很好，我们去公园散步吧！",
    "私はガラスを食べられます。それは私を傷つけません。カタカナとひらがな。",
    "나는 유리를 먹을 수 있어요. 그래도 아프지 않아요. 한국어 문장입니다.",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني. مرحبا بالعالم",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती।",
    "Emoji: 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 🎉🎉🎉 — and symbols ∑ ∞ ≠ ≤ ½ ™ ©",
    "def f(x):\n    return x**2  # code, with\ttabs and   spaces\n\n",
    "Combining: e\u0301 a\u0308 n\u0303; fullwidth ＡＢＣ１２３; nbsp\u00a0here; zero\u200bwidth",
    "Numbers 1234567890 ١٢٣ ४५६ ⅫⅣ and dates 2024-01-31, versions v1.2.3-rc1.",
]


#: Strings every tokenizer must get right: accents, CJK, emoji sequences, combining marks,
#: runs of spaces, tabs and newlines, special tokens in the text, the empty string.
HARD_STRINGS = [
    "héllo wörld ✓ 日本語",
    "x<pad>y 日 <|endoftext|>",
    " ✓✓  spaced\tout\n",
    "Emoji 👍🏽 👨‍👩‍👧‍👦 and e\u0301",
    "",
    "the ☃ sat on<mask>héllo wörld",
    "<mask>",
]
#: Any text at all (controls, combining marks, unassigned code points), and text made of the
#: hard pieces: emoji sequences, CJK, marks, control and space characters, special tokens.
HARD_TEXT = st.one_of(
    st.text(),  # any code point but surrogates
    st.text(
        alphabet=st.sampled_from(
            "👍🏽👨‍👩‍👧‍👦🇫🇷❤️\u200d\ufe0f中文字日本語한국어e\u0301\u0308\x00\x1f\x7f\u0085 \n\t"
        )
    ),
    st.lists(st.sampled_from(["<pad>", "<|endoftext|>", "<pad", "|>", "a", " ", "é", "🎉"])).map(
        "".join
    ),
)


@pytest.fixture(scope="session")
def hard_strings() -> list[str]:
    return list(HARD_STRINGS)


@pytest.fixture(scope="session")
def hard_text():
    """The hypothesis strategy :data:`HARD_TEXT` (draw with ``data.draw(hard_text)``)."""
    return HARD_TEXT


def assert_same_encodings(ours, theirs, texts, *, decode: bool = False) -> None:
    """Every field of rowbook's encodings equal to ``tokenizers``' (and the decoded text)."""
    for text in texts:
        got, expected = ours.encode(text), theirs.encode(text)
        assert got.ids == expected.ids, text
        assert got.tokens == expected.tokens, text
        assert got.offsets == expected.offsets, text
        assert got.attention_mask == expected.attention_mask, text
        assert got.special_tokens_mask == expected.special_tokens_mask, text
        if decode:
            assert ours.decode(got.ids) == theirs.decode(expected.ids), text


@pytest.fixture(scope="session")
def same_encodings():
    """:func:`assert_same_encodings`."""
    return assert_same_encodings


def make_corpus(n_lines: int = 1500, seed: int = 0) -> list[str]:
    """Lines mixing shuffled words of the sentences above (deterministic)."""
    rng = random.Random(seed)
    words = [w for s in SENTENCES for w in s.split(" ")]
    lines = list(SENTENCES)
    for _ in range(n_lines):
        k = rng.randint(1, 14)
        sep = rng.choice([" ", " ", " ", "  ", "\n", "\t", ", "])
        lines.append(sep.join(rng.choice(words) for _ in range(k)))
    return lines


@pytest.fixture(scope="session")
def corpus() -> list[str]:
    return make_corpus()


def hf_train(texts, vocab_size, *, min_frequency=2, special_tokens=(), pre_tokenizer=None):
    """Train a Hugging Face byte-level BPE the way rowbook does; return the Tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer or pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def hf_model(tok) -> dict:
    """The ``model`` part of a Tokenizer's JSON, merges as tuples."""
    model = json.loads(tok.to_str())["model"]
    model["merges"] = [
        tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]
    ]
    return model


@pytest.fixture(scope="session")
def hf_trainer():
    return hf_train


@pytest.fixture(scope="session")
def hf_model_of():
    return hf_model
