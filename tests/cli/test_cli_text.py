"""tokenize and vocab: the tokens of the library's tokenizers (and Hugging Face's), counts from Counter."""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections import Counter

import pytest
import regex

from rowbook.corpus_source import corpus_source
from rowbook.data import scan

TEXT = "The cat, it's 3.5 m long! Café"


def test_tokenize_word_char_whitespace(run):
    result = run("tokenize", TEXT)
    assert result.code == 0 and result.err == ""
    assert result.out == " ".join(regex.findall(r"\w+(?:['’]\w+)*|[^\w\s]\p{M}*", TEXT)) + "\n"
    assert run("tokenize", "--tokenizer", "whitespace", TEXT).out == " ".join(TEXT.split()) + "\n"
    result = run("tokenize", "--tokenizer", "char", "--json", "Cat sat")
    assert json.loads(result.out) == {"text": "Cat sat", "tokens": list("Cat sat")}
    assert run("tokenize", "--tokenizer", "char", "--lower", "A b").out == "a ' ' b\n"


def test_tokenize_reads_stdin_line_by_line(run, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("The Cat sat\n\nON the mat\n"))
    result = run("tokenize", "--lower", "-")
    assert result.code == 0
    assert result.out == "the cat sat\n\non the mat\n"


def test_tokenize_with_a_vocabulary_gives_its_ids(run, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat\n")
    assert run("vocab", corpus, "-o", tmp_path / "v.json", "--quiet").code == 0
    itos = [t for t, _ in json.loads((tmp_path / "v.json").read_text())["vocab"]["tokens"]]
    result = run("tokenize", "--vocab", tmp_path / "v.json", "--ids", "the dog ate the mat")
    expected = [
        itos.index(t) if t in itos else itos.index("<unk>") for t in "the dog ate the mat".split()
    ]
    assert result.out.split() == [str(i) for i in expected]
    result = run("tokenize", "--vocab", tmp_path / "v.json", "--json", "cat")
    assert json.loads(result.out)["ids"] == [itos.index("cat")]


def test_vocab_file_remembers_lower_and_tokenize_applies_it(run, tmp_path):
    from rowbook.text import Normalizer, TextPipeline, Vocab, WordTokenizer

    corpus = tmp_path / "c.txt"
    corpus.write_text("The Cat sat on the mat\nthe dog sat\n")
    assert run("vocab", corpus, "--lower", "-o", tmp_path / "v.json", "--quiet").code == 0
    library = TextPipeline(Normalizer(case="lower"), WordTokenizer(), Vocab())
    library.fit(corpus.read_text().splitlines())
    result = run("tokenize", "--vocab", tmp_path / "v.json", "--json", "The CAT sat")
    assert result.code == 0 and result.err == ""
    record = json.loads(result.out)
    assert record["tokens"] == ["the", "cat", "sat"]
    assert record["ids"] == library.encode("The CAT sat").tolist()
    assert 1 not in record["ids"]  # nothing became <unk>
    result = run("tokenize", "--vocab", tmp_path / "v.json", "--lower", "x")
    assert result.code == 2 and "drop --lower" in result.err


def test_tokenize_warns_when_most_tokens_are_unknown(run, tmp_path):
    from rowbook.text import Vocab

    Vocab().fit([["the", "cat", "sat"]]).save(tmp_path / "plain.json")  # a file of older versions
    result = run("tokenize", "--vocab", tmp_path / "plain.json", "--ids", "The Cat sat")
    assert result.code == 0 and result.out.split() == ["1", "1", "4"]
    assert "warning: 2 of 3 tokens" in result.err and "add --lower" in result.err
    quiet = run("tokenize", "--vocab", tmp_path / "plain.json", "--lower", "--ids", "The Cat sat")
    assert quiet.err == "" and quiet.out.split() == ["2", "3", "4"]
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\n")
    assert run("vocab", corpus, "--lower", "-o", tmp_path / "v.json", "--quiet").code == 0
    result = run("tokenize", "--vocab", tmp_path / "v.json", "le chat dort sur le tapis")
    assert "warning: 6 of 6 tokens" in result.err and "differs from the corpus" in result.err


@pytest.fixture
def bpe_files(run, tmp_path):
    """A BPE trained through the CLI, and the Hugging Face trainer's on the same lines."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    lines = [
        "low lower lowest newest widest",
        "the newest of the low widest rows",
        "rows and rows of newer lower tables",
    ] * 5
    corpus = tmp_path / "bpe.txt"
    corpus.write_text("\n".join(lines) + "\n")
    result = run(
        "vocab",
        corpus,
        "--tokenizer",
        "bpe",
        "--max-vocab",
        290,
        "-o",
        tmp_path / "bpe.json",
        "--json",
    )
    assert result.code == 0, result
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=290,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    hf.train_from_iterator(lines, trainer)
    hf.save(str(tmp_path / "hf.json"))
    return json.loads(result.out), tmp_path / "bpe.json", hf, tmp_path / "hf.json"


def test_bpe_vocab_and_tokenize_agree_with_hugging_face(run, bpe_files):
    summary, ours, hf, hf_path = bpe_files
    assert summary["size"] == hf.get_vocab_size()
    text = "the lowest rows of newer widest tables"
    encoding = hf.encode(text)
    result = run("tokenize", "--bpe", ours, "--json", text)
    record = json.loads(result.out)
    assert record["tokens"] == encoding.tokens
    assert record["ids"] == encoding.ids
    # a Hugging Face tokenizer.json is read too
    assert (
        json.loads(run("tokenize", "--tokenizer", "bpe", "--bpe", hf_path, "--json", text).out)
        == record
    )
    assert run("tokenize", "--bpe", ours, "--ids", text).out.split() == [
        str(i) for i in encoding.ids
    ]


def test_bpe_vocab_within_memory_learns_the_same_merges(run, bpe_files, tmp_path):
    summary, *_ = bpe_files
    result = run(
        "vocab",
        tmp_path / "bpe.txt",
        "--model",
        "bpe",
        "--max-vocab",
        290,
        "--memory",
        0.001,
        "--spill-dir",
        tmp_path,
        "-o",
        tmp_path / "budgeted.json",
        "--json",
    )
    assert result.code == 0, result
    assert json.loads(result.out) | {"output": summary["output"]} == summary  # same merges, lines
    assert (tmp_path / "budgeted.json").read_text() == (tmp_path / "bpe.json").read_text()


def test_vocab_counts_and_order(run, corpus_txt, tmp_path):
    result = run(
        "vocab", corpus_txt, "--min-count", 100, "-o", tmp_path / "v.json", "--json", "--top", 3
    )
    assert result.code == 0, result
    counts = Counter(corpus_txt.read_text().split())  # the word tokenizer finds the same words here
    kept = sorted((w for w, c in counts.items() if c >= 100), key=lambda w: -counts[w])
    saved = json.loads((tmp_path / "v.json").read_text())["vocab"]
    assert [t for t, _ in saved["tokens"]][:2] == ["<pad>", "<unk>"]
    assert {t: c for t, c in saved["tokens"][2:]} == {w: counts[w] for w in kept}
    assert [c for _, c in saved["tokens"][2:]] == sorted((counts[w] for w in kept), reverse=True)
    summary = json.loads(result.out)
    assert summary["tokens"] == sum(counts.values()) and summary["distinct"] == len(counts)
    assert [(d["token"], d["count"]) for d in summary["top"]] == [
        (t, c) for t, c in saved["tokens"][2:5]
    ]


def test_vocab_summary_reads_the_counts_once_not_once_a_word(run, tmp_path, monkeypatch):
    # Vocab.counts copies a dict: read once a word, it made `rowbook vocab` quadratic in V
    from rowbook.text import Vocab

    reads = []
    counts_of = Vocab.counts.fget
    monkeypatch.setattr(Vocab, "counts", property(lambda v: reads.append(1) or counts_of(v)))
    corpus = tmp_path / "c.txt"
    corpus.write_text(" ".join(f"w{k}" for k in range(2_000)) + "\n")
    result = run("vocab", corpus, "-o", tmp_path / "v.json", "--json", "--top", 3)
    assert result.code == 0, result
    assert [d["token"] for d in json.loads(result.out)["top"]] == ["w0", "w1", "w2"]
    assert len(reads) <= 3


def test_vocab_table_max_vocab_and_stdin(run, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("b a b c b a\n"))
    result = run("vocab", "-", "--max-vocab", 4, "-o", tmp_path / "v.json")
    assert result.code == 0, result
    assert [t for t, _ in json.loads((tmp_path / "v.json").read_text())["vocab"]["tokens"]] == [
        "<pad>",
        "<unk>",
        "b",
        "a",
    ]
    lines = result.out.splitlines()
    assert lines[0] == "read 1 lines: 6 tokens, 3 distinct"
    assert lines[2].split() == ["id", "token", "count"] and lines[3].split() == ["2", "b", "3"]


def test_text_errors(run, one_line_error, tmp_path, monkeypatch):
    one_line_error(
        run("vocab", tmp_path / "none.txt", "-o", tmp_path / "v.json"),
        "vocab",
        "none.txt",
        "does not exist",
    )
    (tmp_path / "empty.txt").write_text("\n \n")
    one_line_error(
        run("vocab", tmp_path / "empty.txt", "-o", tmp_path / "v.json"), "vocab", "empty"
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    one_line_error(run("vocab", "-", "-o", tmp_path / "v.json"), "vocab", "standard input is empty")
    (tmp_path / "c.txt").write_text("a b a\n")
    one_line_error(
        run("vocab", tmp_path / "c.txt", "--min-count", 5, "-o", tmp_path / "v.json"),
        "vocab",
        "--min-count=5",
        "'a'",
    )
    one_line_error(
        run("vocab", tmp_path / "c.txt", "-o", tmp_path / "no" / "v.json"),
        "vocab",
        "does not exist",
    )
    one_line_error(
        run("vocab", tmp_path / "c.txt", "--tokenizer", "bpe", "-o", tmp_path / "b.json"),
        "vocab",
        "--max-vocab",
    )
    (tmp_path / "bad.txt").write_bytes(b"ok\nbad \xff byte\n")
    one_line_error(
        run("vocab", tmp_path / "bad.txt", "-o", tmp_path / "v.json"), "vocab", "line 2", "offset 7"
    )
    one_line_error(run("tokenize", "--ids", "x"), "tokenize", "--vocab FILE")
    one_line_error(run("tokenize", "--tokenizer", "bpe", "x"), "tokenize", "--bpe FILE")
    one_line_error(run("tokenize", "--bpe", tmp_path / "none.json", "x"), "tokenize", "none.json")
    one_line_error(run("tokenize", "--bpe", tmp_path / "c.txt", "x"), "tokenize", "c.txt")
    one_line_error(run("tokenize", "--vocab", tmp_path / "c.txt", "x"), "tokenize", "c.txt")
    one_line_error(
        run("tokenize", "--tokenizer", "nope", "x"),
        "tokenize",
        "is neither one of word, whitespace, char, bpe nor a file",
    )


def test_vocab_of_compressed_files_and_folders_equals_the_plain_file(run, corpus_txt, tmp_path):
    import gzip
    import lzma

    lines = corpus_txt.read_text().splitlines(keepends=True)
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress("".join(lines[:100]).encode()))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "rest.xz").write_bytes(lzma.compress("".join(lines[100:]).encode()))
    plain = run("vocab", corpus_txt, "-o", tmp_path / "plain.json", "--json")
    parts = run(
        "vocab", tmp_path / "a.txt.gz", tmp_path / "b", "-o", tmp_path / "parts.json", "--json"
    )
    assert plain.code == parts.code == 0
    assert json.loads(plain.out) | {"output": ""} == json.loads(parts.out) | {"output": ""}
    saved = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("plain", "parts")]
    assert saved[0] == saved[1]


def test_vocab_command_counts_the_same_on_every_worker_count(run, tmp_path, monkeypatch):
    files = [tmp_path / "a.txt", tmp_path / "b.txt.gz"]
    files[0].write_text("the cat\r\nsat on\n\nthe mat " * 9 + "end")
    files[1].write_bytes(gzip.compress(b"a cat\nthe end\n"))
    monkeypatch.setattr(scan, "MIN_PART_BYTES", 7)
    assert len(scan.parallel_parts(corpus_source(files), 2)) > 5
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"v{workers}.json"
        result = run("vocab", *files, "--workers", workers, "-o", out, "--quiet")
        assert result.code == 0, result
        outs.append(out.read_text())
    assert outs[0] == outs[1]
