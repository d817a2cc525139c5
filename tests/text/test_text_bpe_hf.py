"""ByteLevelBPE against Hugging Face ``tokenizers``: same merges, same ids, files both ways."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, pre_tokenizers

from rowbook.text import ByteLevelBPE

SPECIALS = ["<pad>", "<|endoftext|>"]

# Characters assigned in Unicode 14 (Python 3.11's database), so the `regex` package and
# the Oniguruma engine inside `tokenizers` classify them the same way.
STABLE_TEXT = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cn")).filter(
        lambda c: unicodedata.category(c) != "Cn"
    ),
    max_size=60,
)


@pytest.fixture(scope="module")
def trained(corpus, hf_trainer):
    """(rowbook BPE, HF tokenizer) trained on the same corpus with the same settings."""
    ours = ByteLevelBPE().fit(corpus, 700, min_count=2, special_tokens=SPECIALS)
    theirs = hf_trainer(corpus, 700, min_frequency=2, special_tokens=SPECIALS)
    return ours, theirs


@pytest.mark.parametrize("vocab_size, min_frequency", [(300, 2), (700, 2), (1200, 0), (900, 5)])
def test_same_merges_and_vocab_as_hf_trainer(
    corpus, hf_trainer, hf_model_of, vocab_size, min_frequency
):
    ours = ByteLevelBPE().fit(corpus, vocab_size, min_count=min_frequency, special_tokens=SPECIALS)
    theirs = hf_model_of(
        hf_trainer(corpus, vocab_size, min_frequency=min_frequency, special_tokens=SPECIALS)
    )
    assert ours.merges == theirs["merges"]
    assert ours.vocab == theirs["vocab"]


def test_bpe_paper_corpus_matches_hf(hf_trainer, hf_model_of):
    texts = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3
    ours = ByteLevelBPE().fit(texts, 270, min_count=1)
    theirs = hf_model_of(hf_trainer(texts, 270, min_frequency=1))
    assert ours.merges == theirs["merges"]
    assert [s.count for s in ours.merge_trace][:2] == [9, 9]  # "es" and "est": 6 + 3 each


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.dictionaries(
        st.text(alphabet="abcd", min_size=1, max_size=9), st.integers(1, 6), min_size=1, max_size=25
    ),
    extra=st.integers(1, 40),
)
def test_same_merges_as_hf_on_small_word_counts(words, extra, hf_trainer, hf_model_of):
    # Tiny alphabets produce many ties and repeated spellings ("ab"+"c" and "a"+"bc").
    texts = [w for w, c in words.items() for _ in range(c)]
    whole = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    theirs = hf_model_of(hf_trainer(texts, 256 + extra, min_frequency=0, pre_tokenizer=whole))
    ours = ByteLevelBPE().fit_word_counts(words, 256 + extra, min_count=0)
    assert ours.merges == theirs["merges"]
    assert ours.vocab == theirs["vocab"]


def test_hf_trained_tokenizer_json_gives_same_ids(trained, corpus, tmp_path):
    _, theirs = trained
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = ByteLevelBPE.from_tokenizer_json(tmp_path / "tokenizer.json")
    texts = [
        *corpus[:200],
        "unseen: Ωμέγα ЖЖЖ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \x00\x1f\x7f",
        "<pad>x<|endoftext|><pad>",
        "",
    ]
    for text in texts:
        assert ours.encode(text).ids == theirs.encode(text).ids, text
    assert [e.ids for e in ours.encode_batch(texts)] == [e.ids for e in theirs.encode_batch(texts)]


def test_rowbook_trained_exports_to_hf_with_same_ids(trained, corpus, tmp_path):
    ours, _ = trained
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    theirs = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in [*corpus[:200], "mixed <|endoftext|>tail and <pad><pad>"]:
        ids = ours.encode(text).ids
        assert ids == theirs.encode(text).ids, text
        assert ours.decode(ids) == theirs.decode(ids)  # both skip special tokens by default
        assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(
            ids, skip_special_tokens=False
        )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=STABLE_TEXT)
def test_ids_match_hf_on_generated_text(trained, text):
    ours, theirs = trained
    assert ours.encode(text).ids == theirs.encode(text).ids


def test_custom_split_pattern_exports_as_split_plus_bytelevel(corpus, tmp_path):
    pattern = (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )  # GPT-4's cl100k split
    ours = ByteLevelBPE(pattern=pattern).fit(corpus, 500)
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    theirs = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in corpus[:300]:
        assert ours.encode(text).ids == theirs.encode(text).ids, text
    again = ByteLevelBPE.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert again.pattern == pattern and again.encode(corpus[5]) == ours.encode(
        corpus[5]
    )  # the whole Encoding


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_ignore_merges_and_add_prefix_space_follow_hf(trained, corpus, tmp_path, ignore_merges):
    _, theirs = trained
    data = json.loads(theirs.to_str())
    data["model"]["ignore_merges"] = ignore_merges
    data["pre_tokenizer"]["add_prefix_space"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf, ours = Tokenizer.from_file(str(path)), ByteLevelBPE.from_tokenizer_json(path)
    for text in [*corpus[:100], "a<pad>b", " leading", "<pad>"]:
        assert ours.encode(text).ids == hf.encode(text).ids, text


def test_gpt2_style_file_layout_loads(trained, corpus, tmp_path):
    """Merges as "a b" strings, empty affixes, a ByteLevel post-processor: GPT-2's layout."""
    _, theirs = trained
    data = json.loads(theirs.to_str())
    data["model"].update(continuing_subword_prefix="", end_of_word_suffix="")
    data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
    data["post_processor"] = {
        "type": "ByteLevel",
        "add_prefix_space": True,
        "trim_offsets": False,
        "use_regex": True,
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf, ours = Tokenizer.from_file(str(path)), ByteLevelBPE.from_tokenizer_json(path)
    for text in corpus[:100]:
        assert ours.encode(text).ids == hf.encode(text).ids
