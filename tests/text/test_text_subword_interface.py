"""The four subword tokenizers answer alike; load_tokenizer reads any file by its content; word counts
within a memory budget and on Dask equal counts made in RAM; the CLI trains and reads them."""

from __future__ import annotations

import io
import shutil

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import ByteLevelBPETokenizer, Tokenizer, models, pre_tokenizers, trainers

from rowbook import load_tokenizer
from rowbook.cli import main
from rowbook.file_kinds import tokenizer_file
from rowbook.text import (
    ByteLevelBPE,
    SentencePieceBPE,
    TextPipeline,
    Unigram,
    WordPiece,
    word_count_runs,
)
from rowbook.text import word_counts as word_counts_module
from rowbook.text.bpe import count as bpe_count
from rowbook.text.bpe.result import Encoding
from rowbook.text.word_counts import CountedWords, count_words


@pytest.fixture(scope="module")
def four(corpus, tmp_path_factory):
    """A fitted tokenizer of each kind, and a folder of their files in every format."""
    folder = tmp_path_factory.mktemp("four")
    bpe = ByteLevelBPE().fit(corpus, 400, special_tokens=["<pad>"])
    wp = WordPiece().fit(corpus, 500, workers=1)
    uni = Unigram().fit(corpus, 500, special_tokens=["<pad>"], workers=1)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus),
        model_writer=out,
        vocab_size=500,
        model_type="bpe",
        minloglevel=2,
        hard_vocab_limit=False,
        pad_id=3,
    )
    (folder / "spm-bpe.bin").write_bytes(out.getvalue())
    sp_bpe = load_tokenizer(folder / "spm-bpe.bin")
    return {"bpe": bpe, "wordpiece": wp, "unigram": uni, "sentencepiece_bpe": sp_bpe}, folder


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram", "sentencepiece_bpe"])
def test_one_interface(four, kind, hard_strings, corpus):
    tok = four[0][kind]
    texts = [*hard_strings, *corpus[:50]]
    batch = tok.encode_batch(texts)
    for text, encoding in zip(texts, batch, strict=True):
        single = tok.encode(text)
        assert isinstance(encoding, Encoding) and encoding.ids == single.ids
        n = len(single.ids)
        assert len(single.tokens) == len(single.offsets) == len(single.attention_mask) == n
        assert len(single.special_tokens_mask) == n
        assert all(0 <= a <= b <= len(text) for a, b in single.offsets)
        assert isinstance(tok.decode(single.ids), str)
    token = tok.id_to_token(5)
    assert tok.token_to_id(token) == 5 and len(tok) == len(tok.vocab)
    with pytest.raises(KeyError):
        tok.token_to_id("no such token \u2603\u2603")


@pytest.mark.parametrize("kind", ["bpe", "wordpiece", "unigram", "sentencepiece_bpe"])
def test_each_fits_into_a_text_pipeline_and_its_file(four, kind, tmp_path):
    tok = four[0][kind]
    pipe = TextPipeline(None, tok).fit([])
    ids, mask = pipe.encode_batch(["the cat sat", "on the mat today, naïve"])
    assert ids.shape == mask.shape and mask[1].all()
    pipe.save(tmp_path / "pipe.json")
    again = TextPipeline.load(tmp_path / "pipe.json")
    assert (again.encode("the cat, naïve") == pipe.encode("the cat, naïve")).all()


def test_load_tokenizer_decides_by_content_not_by_name(four, tmp_path):
    tokenizers, folder = four
    bpe, wp, uni = (tokenizers[k] for k in ("bpe", "wordpiece", "unigram"))
    files = {}
    for name, save in [
        ("a.model", bpe.to_tokenizer_json),
        ("b.txt", wp.to_tokenizer_json),
        ("c.json", uni.to_tokenizer_json),
        ("d.bin", wp.save),
        ("e", uni.save),
        ("f.json", wp.save_vocab),
    ]:
        save(tmp_path / name)
        files[name] = tmp_path / name
    shutil.copy(folder / "spm-bpe.bin", tmp_path / "g.vocab")
    expected = {
        "a.model": (ByteLevelBPE, "tokenizer.json (byte-level BPE)"),
        "b.txt": (WordPiece, "tokenizer.json (WordPiece)"),
        "c.json": (Unigram, "tokenizer.json (Unigram)"),
        "d.bin": (WordPiece, "rowbook WordPiece"),
        "e": (Unigram, "rowbook Unigram"),
        "f.json": (WordPiece, "WordPiece vocab.txt"),
        "g.vocab": (SentencePieceBPE, "SentencePiece model"),
    }
    for name, (cls, words) in expected.items():
        path = tmp_path / name
        assert words in tokenizer_file(path)[1].name, name
        assert isinstance(load_tokenizer(path), cls), name
    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    theirs = ByteLevelBPETokenizer()
    theirs.train_from_iterator(["the cat sat on the mat"] * 20, vocab_size=270, show_progress=False)
    theirs.save_model(str(gpt2))
    for path in (gpt2, gpt2 / "vocab.json", gpt2 / "merges.txt"):
        assert load_tokenizer(path).encode("the cat").ids == theirs.encode("the cat").ids
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"):
        load_tokenizer(tmp_path / "empty")
    (tmp_path / "junk").write_bytes(b"\x00\x01\x02\xff")
    with pytest.raises(ValueError, match=r"junk is no tokenizer file rowbook knows: it reads"):
        load_tokenizer(tmp_path / "junk")
    (tmp_path / "list.json").write_text('{"a": [1]}')
    with pytest.raises(ValueError, match=r"list\.json is no tokenizer file rowbook knows"):
        load_tokenizer(tmp_path / "list.json")
    (tmp_path / "counts.txt").write_text("the 5\ncat 3\n")
    with pytest.raises(ValueError, match=r"is a vocabulary file of counts.*not a tokenizer"):
        load_tokenizer(tmp_path / "counts.txt")
    llama = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))  # Llama-2's shape
    llama.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=40, special_tokens=["<unk>"], show_progress=False)
    llama.train_from_iterator(["the cat sat on the mat"] * 5, trainer)
    llama.save(str(tmp_path / "llama.json"))
    llama_bpe = load_tokenizer(tmp_path / "llama.json")  # a byte-fallback BPE, read
    assert type(llama_bpe).__name__ == "ByteFallbackBPE"
    assert llama_bpe.encode("the cat").ids == llama.encode("the cat").ids


def _many_words():
    rng = np.random.default_rng(0)
    vocab = np.array(
        [
            "".join(rng.choice(list("abcdefghijé日▁ "), size=rng.integers(1, 12))).strip() or "x"
            for _ in range(12000)
        ]
    )
    picks = rng.integers(0, vocab.size, size=(3000, 20))  # about 8,000 distinct words
    return [" ".join(vocab[row]) for row in picks]


def test_counts_within_a_memory_budget_equal_counts_in_ram(monkeypatch, tmp_path):
    texts = _many_words()
    monkeypatch.setattr(word_counts_module, "BATCH_CHARS", 20_000)
    in_ram = count_words(texts, str.split)
    budgeted = count_words(texts, str.split, memory=1 << 20, spill_dir=tmp_path)
    assert isinstance(budgeted, CountedWords) and budgeted.spilled > 1
    assert list(budgeted.items()) == list(in_ram.items())
    assert not list(tmp_path.iterdir())  # the runs are removed
    monkeypatch.setattr(word_count_runs, "PARTITIONS", 2)  # partitions too large: split again
    splits = []
    sum_partition = word_count_runs.sum_partition

    def spy(path, memory, depth):
        splits.append(depth)
        return sum_partition(path, memory // 8, depth)  # as if the budget were 128 kB

    monkeypatch.setattr(word_count_runs, "sum_partition", spy)
    monkeypatch.setattr(word_counts_module, "sum_partition", spy)
    assert list(count_words(texts, str.split, memory=1 << 20).items()) == list(in_ram.items())
    assert max(splits) > 0  # a partition was split again


@pytest.fixture
def spills(monkeypatch):
    """Small counting batches, and a record of the spills to disk (each a number of words)."""
    monkeypatch.setattr(word_counts_module, "BATCH_CHARS", 20_000)
    monkeypatch.setattr(bpe_count, "BATCH_CHARS", 20_000)
    spilled: list[int] = []
    spill = word_counts_module._spill

    def spy(held, files):
        spilled.append(len(held))
        return spill(held, files)

    monkeypatch.setattr(word_counts_module, "_spill", spy)
    return spilled


@pytest.mark.parametrize("workers", [1, 2])
def test_training_past_a_small_budget_learns_what_training_in_ram_learns(spills, tmp_path, workers):
    texts = _many_words()  # about 8,000 distinct words: far more than 1 MB of counts holds
    for cls, size in ((WordPiece, 500), (Unigram, 500), (ByteLevelBPE, 700)):
        spills.clear()
        in_ram = cls().fit(texts, size, workers=1)
        assert not spills
        budgeted = cls().fit(texts, size, workers=workers, memory="1MB", spill_dir=tmp_path)
        assert len(spills) > 2 and sum(spills) > 8_000, cls  # spilled, every word at least once
        assert budgeted.vocab == in_ram.vocab, cls
        if cls is ByteLevelBPE:
            assert budgeted.merge_trace == in_ram.merge_trace
        assert not list(tmp_path.iterdir())  # the spilled runs are removed


def test_a_memory_budget_is_gigabytes_or_a_size():
    from rowbook.text.word_counts import budget_bytes

    assert budget_bytes(1) == budget_bytes("1GB") == budget_bytes("1 gib") == 2**30
    assert budget_bytes("512MB") == budget_bytes(0.5) == 2**29
    for bad in ("1 parsec", "GB", "-1GB", "0MB"):
        with pytest.raises(ValueError, match="memory must be a number of gigabytes or a size"):
            ByteLevelBPE().fit(["a b"], 300, memory=bad)
    with pytest.raises(ValueError, match="memory must be an integer >= 1048576"):
        WordPiece().fit(["a b"], 300, memory="1kB")


def test_dask_counts_train_the_same_tokenizers(corpus, tmp_path):
    pytest.importorskip("distributed")
    import dask

    from rowbook.distributed import subword_word_counts

    for cls in (WordPiece, Unigram):
        with dask.config.set(scheduler="synchronous"):
            counts = subword_word_counts([corpus[:500], corpus[500:]], tokenizer=cls())
        assert (
            cls().fit((), 500, word_counts=counts).vocab == cls().fit(corpus, 500, workers=1).vocab
        )


def test_cli_trains_and_reads_every_format(corpus, tmp_path, capsys):
    (tmp_path / "c.txt").write_text("\n".join(corpus), encoding="utf-8")
    for model, fmt, name in [
        ("wordpiece", "rowbook", "wp.json"),
        ("wordpiece", "tokenizer.json", "wp-hf.json"),
        ("unigram", "model", "u.model"),
        ("unigram", "rowbook", "u.json"),
    ]:
        argv = [
            "vocab",
            str(tmp_path / "c.txt"),
            "--model",
            model,
            "--format",
            fmt,
            "--max-vocab",
            "500",
            "-o",
            str(tmp_path / name),
            "--quiet",
        ]
        assert main(argv + (["--memory", "0.01"] if model == "unigram" else [])) == 0
        capsys.readouterr()
        assert main(["tokenize", "--tokenizer", str(tmp_path / name), "--ids", "the cat sat"]) == 0
        out, err = capsys.readouterr()
        expected = load_tokenizer(tmp_path / name).encode("the cat sat").ids
        assert out.split() == [str(i) for i in expected] and name in err
    assert (
        main(
            [
                "vocab",
                str(tmp_path / "c.txt"),
                "--model",
                "wordpiece",
                "--format",
                "model",
                "--max-vocab",
                "500",
                "-o",
                str(tmp_path / "x.model"),
            ]
        )
        == 2
    )
    assert "--format model writes a SentencePiece .model" in capsys.readouterr().err
    assert main(["tokenize", "--tokenizer", str(tmp_path / "nothing"), "x"]) == 2
    assert "is neither one of word, whitespace, char, bpe nor a file" in capsys.readouterr().err
