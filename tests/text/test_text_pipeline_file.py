"""TextPipeline.save / load: the loaded pipeline encodes new text as the saved one; every
field of the file is checked, and errors name the file and the field."""

from __future__ import annotations

import copy
import json

import pytest

from rowbook.text import ByteLevelBPE, CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer

NEW_TEXTS = ["The CAT sat on THE Mat!", "Grüße aus Köln, naïve café", "unseen words ÆØÅ 🙂", ""]


def _pipelines(corpus):
    lower = Normalizer(case="lower", strip_accents=True, collapse_whitespace=True)
    yield TextPipeline(lower, ByteLevelBPE(), Vocab(min_count=2)).fit(
        corpus, vocab_size=400, special_tokens=["<pad>"]
    )
    yield TextPipeline(lower, ByteLevelBPE()).fit(corpus, vocab_size=400, special_tokens=["<pad>"])
    yield TextPipeline(None, WordTokenizer(pattern=r"[a-z]+"), Vocab(eos_token="<eos>")).fit(corpus)
    yield TextPipeline(Normalizer(case="casefold"), WordTokenizer(pattern=None)).fit(corpus)
    yield TextPipeline(None, CharTokenizer(graphemes=True), Vocab(max_vocab=50)).fit(corpus)


def test_saved_pipelines_encode_new_text_identically(corpus, tmp_path):
    for k, pipe in enumerate(_pipelines(corpus)):
        path = tmp_path / f"pipe{k}.json"
        pipe.save(path)
        again = TextPipeline.load(path)
        for text in [*NEW_TEXTS, *corpus[:20]]:
            assert again.encode(text).tolist() == pipe.encode(text).tolist()
            assert again.tokenize(text) == pipe.tokenize(text)
        ids, mask = pipe.encode_batch(NEW_TEXTS)
        ids2, mask2 = again.encode_batch(NEW_TEXTS)
        assert (ids == ids2).all() and (mask == mask2).all()
        if not (isinstance(pipe.tokenizer_, ByteLevelBPE) and pipe.vocab_ is not None):
            assert again.decode_batch(ids2, mask2) == pipe.decode_batch(ids, mask)
        assert again.vocab_size == pipe.vocab_size and again.pad_id == pipe.pad_id
        assert again.normalizer == pipe.normalizer
        again.save(tmp_path / "again.json")  # saving the loaded pipeline writes the same file
        assert json.loads((tmp_path / "again.json").read_text()) == json.loads(path.read_text())


def test_lowercasing_and_bpe_survive_the_file(tmp_path):
    texts = ["the lower newest widest", "low lower lowest"] * 10
    pipe = TextPipeline(Normalizer(case="lower"), ByteLevelBPE()).fit(texts, vocab_size=280)
    pipe.save(tmp_path / "p.json")
    loaded = TextPipeline.load(tmp_path / "p.json")
    assert loaded.encode("The LOWEST").tolist() == pipe.encode("the lowest").tolist()
    assert loaded.tokenizer_.merges == pipe.tokenizer_.merges


@pytest.fixture
def saved(tmp_path):
    pipe = TextPipeline(Normalizer(case="lower"), ByteLevelBPE(), Vocab()).fit(
        ["the cat sat on the mat"] * 3, vocab_size=270, special_tokens=["<pad>"]
    )
    pipe.save(tmp_path / "p.json")
    return json.loads((tmp_path / "p.json").read_text())


def _set(d, dotted, value):
    *parents, last = dotted.split(".")
    for key in parents:
        d = d[key]
    if value is _DELETE:
        del d[last]
    else:
        d[last] = value


_DELETE = object()
CORRUPTIONS = [  # (field, new value, what the message must say)
    ("kind", "vectors", "is not a rowbook text pipeline"),
    ("version", 3, "newer rowbook"),
    ("version", "1", "field 'version'"),
    ("normalizer", _DELETE, "lacks the fields ['normalizer']"),
    ("surplus", 1, "unknown fields ['surplus']"),
    ("normalizer", [1], "field 'normalizer' must be null or an object"),
    ("normalizer.case", "upper", "field 'normalizer': case must be one of"),
    ("normalizer.strip", "yes", "field 'normalizer': strip must be a bool"),
    ("normalizer.extra", True, "field 'normalizer' has unknown fields ['extra']"),
    ("tokenizer", None, "field 'tokenizer' must be an object whose 'type'"),
    ("tokenizer.type", "wordlevel", "'wordlevel'"),
    ("tokenizer.model.merges", {"a": 1}, "field 'tokenizer.model'"),
    ("tokenizer.model.special_tokens", [["<pad>"]], "field 'tokenizer.model'"),
    ("tokenizer.model.vocab", {"a": 0}, "field 'tokenizer.model'"),
    ("tokenizer.model.pattern", "(", "field 'tokenizer.model'"),
    ("vocab.tokens", [["<pad>", 0]], "field 'vocab'"),
    ("vocab.min_count", 0, "field 'vocab': min_count must be an integer >= 1"),
    ("vocab.extra_specials", None, "field 'vocab'"),
]


@pytest.mark.parametrize("field, value, message", CORRUPTIONS)
def test_every_field_is_checked_and_named(saved, tmp_path, field, value, message):
    d = copy.deepcopy(saved)
    _set(d, field, value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"text pipeline file .*bad\.json") as err:
        TextPipeline.load(path)
    assert message in str(err.value)


def test_other_files_and_unsaveable_pipelines_are_refused(tmp_path):
    Vocab().fit([["a"]]).save(tmp_path / "vocab.json")
    with pytest.raises(ValueError, match="not a rowbook text pipeline"):
        TextPipeline.load(tmp_path / "vocab.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="holds a JSON list"):
        TextPipeline.load(tmp_path / "list.json")
    with pytest.raises(ValueError, match="not fitted"):
        TextPipeline().save(tmp_path / "x.json")
    with pytest.raises(ValueError, match="only a Normalizer can be saved"):
        TextPipeline(str.lower).fit(["a"]).save(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def _unfitted_pipelines():
    yield TextPipeline()  # the defaults: WordTokenizer and Vocab
    yield TextPipeline(
        Normalizer(case="lower"), CharTokenizer(), Vocab(min_count=2, bos_token="<s>")
    )
    yield TextPipeline(None, ByteLevelBPE(add_prefix_space=True, cache_size=7), None)
    yield TextPipeline(None, WordTokenizer(pattern=r"\w+"), None)


def test_an_unfitted_pipeline_keeps_its_settings_and_fits_as_the_original(corpus):
    for pipe in _unfitted_pipelines():
        d = pipe.to_dict()
        assert d["fitted"] is False
        again = TextPipeline.from_dict(json.loads(json.dumps(d)))
        assert again.to_dict() == d
        fit = {"vocab_size": 300} if isinstance(pipe.tokenizer, ByteLevelBPE) else {}
        ours, theirs = copy.deepcopy(pipe).fit(corpus, **fit), again.fit(corpus, **fit)
        for text in NEW_TEXTS:
            assert theirs.encode(text).tolist() == ours.encode(text).tolist()
        assert theirs.to_dict() == ours.to_dict()  # fitted now: the fitted form
    bpe = TextPipeline.from_dict(TextPipeline(None, ByteLevelBPE(cache_size=7)).to_dict())
    assert bpe.tokenizer.cache_size == 7


def test_a_fitted_bpe_in_an_unfitted_pipeline_is_kept_whole(corpus):
    bpe = ByteLevelBPE().fit(corpus, vocab_size=300)
    pipe = TextPipeline(None, bpe, Vocab(min_count=2))
    again = TextPipeline.from_dict(pipe.to_dict())
    assert again.tokenizer.merges == bpe.merges and again.vocab._itos is None
    assert (
        again.fit(corpus).encode(NEW_TEXTS[0]).tolist()
        == pipe.fit(corpus).encode(NEW_TEXTS[0]).tolist()
    )


def test_a_version_1_file_still_loads(saved, tmp_path):
    """rowbook 0.1 wrote version 1: the fitted form, without 'fitted' or the BPE's cache size."""
    old = copy.deepcopy(saved)
    old["version"] = 1
    del old["fitted"], old["tokenizer"]["cache_size"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    pipe = TextPipeline.load(tmp_path / "old.json")
    assert (
        pipe.encode("the cat sat").tolist()
        == TextPipeline.from_dict(saved).encode("the cat sat").tolist()
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(fitted="yes"), "field 'fitted' must be true or false"),
        (lambda d: d.update(vocab={"settings": {"min_count": 0}}), "needs the vocabulary's tokens"),
        (lambda d: d.update(fitted=False, vocab={"settings": {"min_count": 0}}), "min_count"),
        (lambda d: d.update(fitted=False, vocab={"settings": []}), "'settings' must be an object"),
        (
            lambda d: d.update(tokenizer={"type": "byte_level_bpe", "settings": {}}),
            "not its settings",
        ),
        (lambda d: d["tokenizer"].update(cache_size=-1), "cache_size' must be an integer >= 0"),
        (lambda d: d.update(tokenizer=None), "'type' is one of"),
    ],
)
def test_the_unfitted_form_is_checked_too(saved, tmp_path, edit, message):
    d = copy.deepcopy(saved)
    edit(d)
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=message):
        TextPipeline.load(tmp_path / "bad.json")
