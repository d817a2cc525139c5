"""tiktoken's ``.tiktoken`` rank files against tiktoken itself.

tiktoken's encodings are built in the tests from ranks a rowbook BPE learned (no rank file is
downloaded), with the pattern and special tokens of each of ``r50k_base``, ``p50k_base``,
``cl100k_base`` and ``o200k_base``; rowbook reads the same ranks and must give tiktoken's ids.
"""

from __future__ import annotations

import base64
import json

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext import openai_public

from rowbook import load, load_tokenizer
from rowbook.file_kinds import detect
from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import tiktoken_files
from rowbook.text.bpe.tiktoken_files import ENCODINGS, read_ranks, to_ranks

from .conftest import HARD_TEXT

SPECIALS = ["<|endoftext|>", "<pad>"]


def _tiktoken_pattern(name: str) -> str:
    """The pattern tiktoken's constructor for ``name`` uses: r50k's is tiktoken's faster
    rewrite of GPT-2's, which rowbook runs (its constructors download the ranks, so the
    others are checked against its source by :func:`test_patterns_are_tiktokens`)."""
    if name in ("r50k_base", "p50k_base"):
        return openai_public.r50k_pat_str
    return ENCODINGS[name].pattern


def test_patterns_and_special_tokens_are_tiktokens(monkeypatch):
    """tiktoken's own constructors, their rank files stubbed out (nothing is downloaded)."""
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    for name, encoding in ENCODINGS.items():
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
        assert spec["special_tokens"] == dict(encoding.special_tokens), name
        assert spec["pat_str"] == _tiktoken_pattern(name), name
        expected = spec.get("explicit_n_vocab")
        if expected is not None:
            assert encoding.n_ranks + len(encoding.special_tokens) == expected, name


@pytest.fixture(scope="module")
def trained(corpus):
    return ByteLevelBPE().fit(corpus, 900, min_count=2, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def ranks(trained):
    return to_ranks(trained)


@pytest.fixture(scope="module", params=sorted(ENCODINGS))
def pair(request, trained, ranks):
    """rowbook's BPE and tiktoken's Encoding of the same ranks, with one encoding's pattern."""
    name = request.param
    specials = trained.special_tokens
    theirs = tiktoken.Encoding(
        name, pat_str=_tiktoken_pattern(name), mergeable_ranks=ranks, special_tokens=specials
    )
    ours = ByteLevelBPE.from_ranks(ranks, pattern=ENCODINGS[name].pattern, special_tokens=specials)
    return ours, theirs


def test_ranks_are_the_ids_of_the_tokens(trained, ranks):
    assert sorted(ranks.values()) == list(range(len(SPECIALS), len(trained)))
    for token, i in ranks.items():
        assert trained._id_bytes[i] == token


def test_ids_equal_tiktoken_on_hard_strings(pair, corpus, hard_strings):
    ours, theirs = pair
    for text in [*hard_strings, *corpus[:300], "a" * 3000, " \n\n  x\r\n\t "]:
        assert ours.encode(text, allowed_special="all").ids == theirs.encode(
            text, allowed_special="all"
        ), text
        assert ours.encode(text, disallowed_special=()).ids == theirs.encode(
            text, disallowed_special=()
        ), text
        ids = theirs.encode(text, allowed_special="all")
        assert ours.decode(ids, skip_special_tokens=False) == theirs.decode(ids)


@settings(max_examples=150, deadline=None)
@given(HARD_TEXT)
def test_ids_equal_tiktoken_on_any_text(pair, text):
    ours, theirs = pair
    assert ours.encode(text, disallowed_special=()).ids == theirs.encode_ordinary(text)
    assert ours.encode(text, allowed_special="all").ids == theirs.encode(
        text, allowed_special="all"
    )


def test_batch_equals_tiktoken(pair, corpus):
    ours, theirs = pair
    texts = corpus[:200]
    got = [e.ids for e in ours.encode_batch(texts, workers=1, allowed_special="all")]
    assert got == theirs.encode_batch(texts, allowed_special="all", num_threads=1)


def test_special_tokens_as_tiktoken(pair):
    ours, theirs = pair
    text = "a<|endoftext|>b<pad>c"
    with pytest.raises(ValueError, match="disallowed_special"):
        ours.encode(text)
    with pytest.raises(ValueError):
        theirs.encode(text)
    for allowed in ({"<pad>"}, {"<|endoftext|>"}, set(), "all"):
        expected = theirs.encode(text, allowed_special=allowed, disallowed_special=())
        assert ours.encode(text, allowed_special=allowed, disallowed_special=()).ids == expected
    with pytest.raises(ValueError, match="<pad>"):  # allowed one, the other still refused
        ours.encode(text, allowed_special={"<|endoftext|>"})
    with pytest.raises(ValueError, match="not a special token"):
        ours.encode(text, allowed_special={"<unk>"})
    with pytest.raises(TypeError, match="allowed_special"):
        ours.encode(text, allowed_special="<pad>")
    assert ours.tokenize("a b") == [ours.id_to_token(i) for i in theirs.encode("a b")]


def test_rank_rule_is_not_a_merge_list():
    """tiktoken merges any split of a token at its rank; a merge list only its own pairs."""
    ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
    theirs = tiktoken.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    ours = ByteLevelBPE.from_ranks(ranks, pattern=r"\S+|\s+", special_tokens={})
    for text in ("abcx", "xabcab", "abcabc", "ab c", "abab"):
        assert ours.encode(text).ids == theirs.encode(text), text
    assert theirs.encode("abcx") == [258, ord("x")]
    assert ("a", "bc") in ours.merges and ("ab", "c") in ours.merges


def test_gaps_between_ranks_and_special_tokens(ranks):
    """cl100k_base's special tokens leave ids that are no token: they stay unused."""
    top = max(ranks.values())
    specials = {"<|endoftext|>": top + 2, "<|endofprompt|>": top + 20}
    ours = ByteLevelBPE.from_ranks(
        ranks, pattern=ENCODINGS["cl100k_base"].pattern, special_tokens=specials
    )
    theirs = tiktoken.Encoding(
        "gaps",
        pat_str=ENCODINGS["cl100k_base"].pattern,
        mergeable_ranks=ranks,
        special_tokens=specials,
    )
    assert len(ours) == theirs.n_vocab == top + 21
    text = "hello<|endofprompt|> world<|endoftext|>"
    assert ours.encode(text, allowed_special="all").ids == theirs.encode(
        text, allowed_special="all"
    )
    assert to_ranks(ours) == ranks


def test_file_round_trip(trained, ranks, tmp_path, monkeypatch):
    path = tmp_path / "mine.tiktoken"
    trained.to_tiktoken(path)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken reads the local file, no cache
    assert load_tiktoken_bpe(str(path)) == ranks == read_ranks(path)
    lines = path.read_bytes().splitlines()
    first = min(ranks, key=ranks.get)
    assert lines[0] == base64.b64encode(first) + b" " + str(ranks[first]).encode()
    again = ByteLevelBPE.from_tiktoken(
        path, pattern=trained.pattern, special_tokens=trained.special_tokens
    )
    assert again.vocab == trained.vocab
    again.to_tiktoken(tmp_path / "again.tiktoken")
    assert (tmp_path / "again.tiktoken").read_bytes() == path.read_bytes()
    again.save(tmp_path / "again.json")  # rowbook's file keeps tiktoken's rules
    back = ByteLevelBPE.load(tmp_path / "again.json")
    text = "héllo <pad> wörld"
    expected = again.encode(text, allowed_special="all").ids
    assert back.encode(text, allowed_special="all").ids == expected
    with pytest.raises(ValueError, match="disallowed_special"):
        back.encode(text)


def test_recognised_by_content(trained, ranks, tmp_path):
    """A file named after an encoding takes its pattern and special tokens."""
    path = tmp_path / "cl100k_base.tiktoken"
    trained.to_tiktoken(path)
    assert detect(path).name == "a tiktoken rank file (.tiktoken)"
    theirs = tiktoken.Encoding(
        "cl100k_base",
        pat_str=ENCODINGS["cl100k_base"].pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(ENCODINGS["cl100k_base"].special_tokens),
    )
    for ours in (load_tokenizer(path), load(path)):
        assert isinstance(ours, ByteLevelBPE)
        text = "The cat's 12345 naïve<|endoftext|>\r\n\n  end"
        assert ours.encode(text, allowed_special="all").ids == theirs.encode(
            text, allowed_special="all"
        )
    other = tmp_path / "other.tiktoken"
    trained.to_tiktoken(other)
    with pytest.raises(ValueError, match="name its encoding"):
        load_tokenizer(other)
    assert ByteLevelBPE.from_tiktoken(other, "cl100k_base").encode("x y").ids == theirs.encode(
        "x y"
    )


def test_bad_files_name_the_line(tmp_path, ranks):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"IQ== 0\nIg== 1\nnot base64! 2\n")
    with pytest.raises(ValueError, match="line 3"):
        read_ranks(path)
    path.write_bytes(b"IQ== 0\nIg== 0\n")
    with pytest.raises(ValueError, match="line 2: rank 0"):
        read_ranks(path)
    path.write_bytes(b"IQ== 0\nIg== 1\n")
    with pytest.raises(ValueError, match="254 of the 256 single bytes"):
        ByteLevelBPE.from_tiktoken(path, "r50k_base")
    with pytest.raises(ValueError, match="encoding 'gpt5'"):
        ByteLevelBPE.from_tiktoken(path, "gpt5")
    with pytest.raises(ValueError, match="also a rank"):
        ByteLevelBPE.from_ranks(ranks, pattern=r"\S+", special_tokens={"<x>": min(ranks.values())})
    far = {**ranks, b"far away": 10**9}  # no billion placeholders for one wrong rank
    with pytest.raises(ValueError, match="ids run up to 1000000000"):
        ByteLevelBPE.from_ranks(far, pattern=r"\S+", special_tokens={})
    counts = tmp_path / "counts.txt"  # word counts of 4-letter words: base64-like, falling
    counts.write_bytes(b"that 120\nwith 98\nhave 76\nfrom 50\n")
    assert not tiktoken_files.is_tiktoken_file(counts.read_bytes())
    assert detect(counts).name == "a vocabulary file of counts ('key count' lines)"
    with pytest.raises(ValueError, match=r"vocabulary file of counts .*, not a tokenizer"):
        load_tokenizer(counts)
    (tmp_path / "empty.tiktoken").write_bytes(b"\n")
    with pytest.raises(ValueError, match="no ranks"):
        read_ranks(tmp_path / "empty.tiktoken")


def test_only_byte_tokens_become_ranks(trained, tmp_path):
    copy_path = tmp_path / "copy.json"
    trained.save(copy_path)
    bpe = ByteLevelBPE.load(copy_path)
    bpe.add_tokens(["☃"])
    with pytest.raises(ValueError, match="added after training"):
        tiktoken_files.to_ranks(bpe)


def test_whole_words_that_merges_miss(tmp_path):
    """ignore_merges: a word that is a token, which its merges do not reach, is that token
    (tokenizers' rule too), among words that stay in several tokens."""
    from tokenizers import Tokenizer

    from rowbook.text.bpe.bytelevel import byte_alphabet

    alphabet = byte_alphabet()
    vocab = {c: i for i, c in enumerate(alphabet)} | {"bc": 256, "ab": 257, "abc": 258}
    merges = [["b", "c"], ["a", "b"], ["ab", "c"]]
    bpe = ByteLevelBPE().fit_word_counts({"x": 1}, 256)
    bpe.to_tokenizer_json(tmp_path / "t.json")
    document = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    document["model"] |= {"vocab": vocab, "merges": merges, "ignore_merges": True}
    (tmp_path / "t.json").write_text(json.dumps(document), encoding="utf-8")
    theirs = Tokenizer.from_file(str(tmp_path / "t.json"))
    ours = ByteLevelBPE.from_tokenizer_json(tmp_path / "t.json")
    for text in ["abc", "xabc abc abcabc bca", "abcd abc ab c", "zz abc"]:
        assert ours.encode(text).ids == theirs.encode(text).ids, text
    assert ours.encode("abc").ids == [258]
    document["model"]["ignore_merges"] = False
    (tmp_path / "t.json").write_text(json.dumps(document), encoding="utf-8")
    assert ByteLevelBPE.from_tokenizer_json(tmp_path / "t.json").encode("abc").ids == [
        vocab["a"],
        256,
    ]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tokenizer_json_of_ranks_gives_tiktokens_ids(ranks, corpus, hard_strings, tmp_path, name):
    """Written as a tokenizer.json (every split a merge, ignore_merges, the pattern in
    Oniguruma's reading), the ranks give tokenizers tiktoken's ids on these texts."""
    from tokenizers import Tokenizer

    pattern = ENCODINGS[name].pattern
    ours = ByteLevelBPE.from_ranks(ranks, pattern=pattern, special_tokens={})
    ours.to_tokenizer_json(tmp_path / "tokenizer.json")
    theirs = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    for text in [*hard_strings, *corpus[:400], " \n\n  x\r\n\t ", "a  \nb", "1234567"]:
        assert theirs.encode(text).ids == enc.encode_ordinary(text), text


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text("abc", min_size=2, max_size=5), min_size=1, max_size=40, unique=True),
    st.randoms(use_true_random=False),
    st.lists(st.text("abc ", max_size=60), min_size=1, max_size=5),
)
def test_any_ranks_merge_as_tiktoken(tokens, rng, texts):
    """Ranks that no training made (a token may rank before its parts, a token has many
    splits): the rank rule is tiktoken's, not only on trained vocabularies."""
    order = list(range(256, 256 + len(tokens)))
    rng.shuffle(order)
    ranks = {bytes([b]): b for b in range(256)}
    ranks |= {t.encode(): r for t, r in zip(tokens, order, strict=True)}
    theirs = tiktoken.Encoding("any", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    ours = ByteLevelBPE.from_ranks(ranks, pattern=r"\S+|\s+", special_tokens={})
    for text in texts:
        assert ours.encode(text).ids == theirs.encode(text), text


@pytest.mark.parametrize("allowed", ["all", set()])
def test_batch_on_two_workers_equals_tiktoken(pair, corpus, monkeypatch, allowed):
    """The threads (GPT-2's compiled pre-split) and the forked processes (the others) of
    encode_batch, engaged on a small batch, with special tokens allowed or encoded as text."""
    from rowbook.text.bpe import batch, cutoff

    monkeypatch.setattr(cutoff, "POOL_WORK", 0)
    monkeypatch.setattr(batch, "BATCH_CHARS", 1_000)
    monkeypatch.setattr(cutoff, "THREAD_WORK", 0)
    monkeypatch.setattr(batch, "THREAD_BATCH_CHARS", 1_000)
    ours, theirs = pair
    texts = [t + "<|endoftext|>" for t in corpus[:300]]
    got = ours.encode_batch(texts, workers=2, allowed_special=allowed, disallowed_special=())
    expected = theirs.encode_batch(texts, allowed_special=allowed, disallowed_special=())
    assert [e.ids for e in got] == expected


def test_tiktokens_cached_copy_is_recognised(trained, ranks, tmp_path, monkeypatch):
    """tiktoken caches a rank file under a name of its own (cache_name): that name tells the
    encoding too, the offline case users ask about. tiktoken itself finds the file there
    (its download is replaced by an error: nothing is fetched)."""
    import tiktoken.load

    def no_download(address):
        raise AssertionError(f"the test would download {address}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    path = tmp_path / tiktoken_files.cache_name("o200k_base")
    trained.to_tiktoken(path)
    address = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    assert tiktoken.load.load_tiktoken_bpe(address) == ranks  # read from the cache
    ours = load_tokenizer(path)
    assert ours.pattern == ENCODINGS["o200k_base"].pattern
    assert ours.special_tokens == dict(ENCODINGS["o200k_base"].special_tokens)
