"""``rowbook.load``: one file of every kind, under a name that says nothing, gives the right
object; a kind rowbook recognises but does not open says what it is and what reads it; a
file of no known kind is one line listing the kinds."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import rowbook
from rowbook.data.cooccurrence_file import CountedCooccurrence, save_cooccurrence
from rowbook.file_kinds import KINDS, detect
from rowbook.io import save_safetensors
from rowbook.models import ColorHarmony, FastText, GloVe, Word2Vec
from rowbook.nn import Embedding
from rowbook.optim import Adam
from rowbook.text import ByteLevelBPE, TextPipeline, Vocab, WordTokenizer
from rowbook.training import TrainConfig, Trainer
from rowbook.vectors import SubwordVectors, Vectors

CORPUS = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "a", "log"]] * 20
TEXTS = [" ".join(s) for s in CORPUS]
VECTORS = Vectors(["king", "queen", "naïve"], [[1.0, 0.1, 0.0], [0.9, 0.2, 0.1], [0, 1, 0.5]])


def _same(a: Vectors, b: Vectors) -> bool:
    return a.index_to_key == b.index_to_key and np.array_equal(a.vectors, b.vectors)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, tuple[Path, object]]:
    """One file of each kind rowbook opens, named ``<kind>.dat``, and what it should open to."""
    folder = tmp_path_factory.mktemp("kinds")
    made = {}

    def name(kind: str) -> Path:
        return folder / f"{kind}.dat"

    VECTORS.save(name("vectors npz"))
    VECTORS.save(folder / "v.safetensors")
    (folder / "v.safetensors").rename(name("vectors safetensors"))
    VECTORS.save_word2vec_format(name("word2vec text"))
    VECTORS.save_word2vec_format(name("word2vec binary"), binary=True)
    VECTORS.save_word2vec_format(name("glove"), write_header=False)
    with gzip.open(name("word2vec text gz"), "wb") as f:
        f.write(name("word2vec text").read_bytes())
    for kind in ("vectors npz", "vectors safetensors", "word2vec text", "word2vec binary"):
        made[kind] = VECTORS
    made["glove"] = made["word2vec text gz"] = VECTORS
    w2v = Word2Vec(vector_size=4, min_count=1, epochs=1, workers=1).fit(CORPUS)
    w2v.save(name("word2vec model"))
    Word2Vec(vector_size=4, min_count=1, epochs=2, workers=1).fit(
        CORPUS, checkpoint=name("word2vec checkpoint")
    )
    ColorHarmony(epochs=1).fit().save(name("colour model"))
    made.update(
        {"word2vec model": w2v, "word2vec checkpoint": Word2Vec, "colour model": ColorHarmony}
    )
    ft = FastText(vector_size=4, bucket=50, min_count=1, epochs=1, workers=1).fit(CORPUS)
    ft.save_fasttext(name("fasttext bin"))  # what `rowbook train fasttext -o model.bin` writes
    made["fasttext bin"] = ft
    bpe = ByteLevelBPE().fit(TEXTS, 270, special_tokens=["<pad>"])
    bpe.save(name("bpe json"))
    bpe.to_tokenizer_json(name("tokenizer json"))
    made["bpe json"] = made["tokenizer json"] = bpe
    vocab = Vocab().fit(CORPUS)
    vocab.save(name("vocab json"))
    pipeline = TextPipeline(tokenizer=WordTokenizer(), vocab=Vocab()).fit(TEXTS)
    pipeline.save(name("text pipeline json"))
    made["vocab json"], made["text pipeline json"] = vocab, pipeline
    counted = GloVe(vector_size=4, min_count=1).cooccurrence(CORPUS)
    save_cooccurrence(
        name("cooccurrence npz"), counted.matrix, counted.keys, counted.counts, window=15
    )
    made["cooccurrence npz"] = counted
    return {kind: (name(kind), expected) for kind, expected in made.items()}


def test_every_kind_opens_to_the_right_object_whatever_its_name(files):
    for kind, (path, expected) in files.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = rowbook.load(path)
        if isinstance(expected, Vectors):
            assert type(got) is Vectors and _same(got, expected), kind
        elif isinstance(expected, type):
            assert type(got) is expected, kind
        elif isinstance(expected, Word2Vec | FastText):
            assert type(got) is type(expected), kind
            np.testing.assert_array_equal(got.W_in_[: len(expected.W_in_)], expected.W_in_)
        elif isinstance(expected, ByteLevelBPE):
            assert type(got) is ByteLevelBPE and got.encode("the cat") == expected.encode("the cat")
        elif isinstance(expected, Vocab):
            assert type(got) is Vocab and got.itos == expected.itos
        elif isinstance(expected, TextPipeline):
            assert type(got) is TextPipeline
            assert got.encode("the cat").tolist() == expected.encode("the cat").tolist()
        else:
            assert isinstance(got, CountedCooccurrence), kind
            assert (got.matrix != expected.matrix).nnz == 0 and got.keys == expected.keys


def test_the_issues_fasttext_bin_opens_as_the_model_that_wrote_it(files):
    path, model = files["fasttext bin"]
    loaded = rowbook.load(path)
    assert isinstance(loaded.vectors, SubwordVectors)
    np.testing.assert_allclose(loaded.vectors["cat"], model.vectors["cat"], rtol=1e-6)
    assert detect(path).reader == "FastText.load_fasttext(path)"


def test_the_models_own_loader_says_what_a_file_is_not(files):
    from rowbook.models import load as load_model

    path, _ = files["fasttext bin"]
    with pytest.raises(ValueError) as caught:
        load_model(path)
    message = str(caught.value)
    assert "is not an .npz archive: it starts with" in message and "truncated" not in message
    cut = path.with_name("cut.npz")
    cut.write_bytes(files["word2vec model"][0].read_bytes()[:500])
    with pytest.raises(ValueError, match=r"starts as a zip archive but has no zip directory"):
        load_model(cut)


def _known_not_opened(path: Path) -> str:
    with pytest.raises(ValueError) as caught:
        rowbook.load(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_kinds_rowbook_recognises_but_does_not_open_say_what_reads_them(tmp_path, files):
    checkpoint = tmp_path / "trainer.dat"
    layer = Embedding(5, 2, rng=0)
    optimizer = Adam(layer.parameters(), lr=0.1)
    config = TrainConfig(epochs=1, batch_size=4, seed=0, progress=False)
    Trainer(layer, optimizer, lambda m, b: m(b[0]).sum(), config=config).fit(
        (np.arange(8) % 5,), checkpoint=checkpoint
    )
    optimizer.save(tmp_path / "adam.dat")
    save_safetensors(tmp_path / "weights.dat", {"weight": np.eye(2, dtype=np.float32)})
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    vectors = Vectors(["a", "b"], np.eye(2), counts=[3, 2])
    vectors.save_word2vec_format(tmp_path / "v.txt", fvocab=tmp_path / "counts.dat")
    vectors.build_index("ivf", nlist=1)
    vectors.save_index(tmp_path / "index.dat")
    expected = {
        checkpoint: "a rowbook training checkpoint (.npz); read it with Trainer(...).fit(data, resume=path)",
        tmp_path
        / "adam.dat": "a rowbook optimizer state (.npz); read it with optimizer.load(path)",
        tmp_path
        / "weights.dat": "a safetensors file; read it with rowbook.io.load_safetensors(path)",
        tmp_path
        / "plain.npz": "a NumPy .npz archive not written by rowbook; read it with numpy.load",
        tmp_path / "counts.dat": "a vocabulary file of counts ('key count' lines); read it with "
        "Vectors.load_word2vec_format(vectors_path, fvocab=path)",
        tmp_path / "index.dat": "a faiss index; read it with Vectors.load_index(path)",
    }
    for path, said in expected.items():
        assert f"{path} is {said}" in _known_not_opened(path)


def test_fasttext_supervised_and_quantised_models_open_as_classifiers(tmp_path):
    from rowbook.models import FastTextClassifier
    from rowbook.vectors.fasttext_format import FastTextArgs, FastTextFile, write_fasttext_bin

    rng = np.random.default_rng(0)
    args = FastTextArgs(dim=4, model=3, loss=3, bucket=256, minn=0, maxn=0, wordNgrams=2)
    words, types = ("the", "cat", "__label__a", "__label__b"), np.array([0, 0, 1, 1], np.int8)
    rows, out = rng.random((258, 4), dtype=np.float32), rng.random((2, 4), dtype=np.float32)
    file = FastTextFile(args, words, np.array([4, 3, 2, 2]), rows, out, ntokens=11, types=types)
    write_fasttext_bin(tmp_path / "classifier.dat", file)  # fastText's layout, model code 3
    model = FastTextClassifier.load_fasttext(tmp_path / "classifier.dat")
    model.quantize(dsub=2).save_fasttext(tmp_path / "small.dat")
    for name, said in [
        ("classifier.dat", "a fastText supervised model (.bin)"),
        ("small.dat", "a quantised fastText supervised model (.ftz)"),
    ]:
        assert detect(tmp_path / name).name == said
        loaded = rowbook.load(tmp_path / name)
        assert type(loaded) is FastTextClassifier and loaded.labels_ == model.labels_


def test_hugging_face_and_gpt2_tokenizer_files_are_named(tmp_path, files):
    tokenizers = pytest.importorskip("tokenizers")
    wordpiece = tokenizers.Tokenizer(tokenizers.models.WordPiece({"[UNK]": 0, "a": 1}))
    wordpiece.save(str(tmp_path / "wordpiece.dat"))
    assert detect(tmp_path / "wordpiece.dat").name == "a Hugging Face tokenizer.json (WordPiece)"
    assert type(rowbook.load(tmp_path / "wordpiece.dat")).__name__ == "WordPiece"
    wordlevel = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    wordlevel.save(str(tmp_path / "wordlevel.dat"))
    said = _known_not_opened(tmp_path / "wordlevel.dat")
    assert "is a Hugging Face tokenizer.json; read it with tokenizers.Tokenizer.from_file" in said
    gpt2 = tokenizers.ByteLevelBPETokenizer()
    gpt2.train_from_iterator(TEXTS, vocab_size=270, show_progress=False)
    vocab_json, merges_txt = gpt2.save_model(str(tmp_path))
    for given in (Path(vocab_json), Path(merges_txt)):  # either opens the pair beside it
        assert detect(given).name in ("a GPT-2 vocab.json (token -> id)", "a GPT-2 merges.txt")
        assert rowbook.load(given).encode("the cat").ids == gpt2.encode("the cat").ids
    Path(merges_txt).unlink()
    with pytest.raises(ValueError, match=r"GPT-2's vocab\.json, but there is no merges\.txt"):
        rowbook.load(vocab_json)


def test_a_file_of_no_known_kind_is_one_line_listing_the_kinds(tmp_path):
    for name, data in [("notes.dat", b"some words, not vectors\n"), ("empty.dat", b"")]:
        (tmp_path / name).write_bytes(data)
        message = _known_not_opened(tmp_path / name)
        assert f"{tmp_path / name} is not a file rowbook knows: it reads " in message
        assert all(kind.name in message for kind in KINDS)
    with pytest.raises(ValueError, match=r"is a folder of no kind rowbook knows: it reads "):
        rowbook.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        rowbook.load(tmp_path / "missing.dat")


def test_a_damaged_file_of_a_known_kind_is_refused_by_its_own_reader(tmp_path, files):
    path, _ = files["word2vec text"]
    broken = tmp_path / "broken.dat"
    broken.write_bytes(path.read_bytes().replace(b"0.9", b"x.9"))
    assert detect(broken) is None or detect(broken).format == "text"
    (tmp_path / "bad.json").write_text('{"format": "rowbook.Vocab", ')
    with pytest.raises(ValueError, match=r"bad\.json is not valid JSON: .* line 1"):
        rowbook.load(tmp_path / "bad.json")
    document = json.loads(files["vocab json"][0].read_text())
    document["tokens"] = "not a list"
    (tmp_path / "vocab.dat").write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"vocab\.dat: field 'tokens'"):
        rowbook.load(tmp_path / "vocab.dat")


def test_wordpiece_unigram_and_sentencepiece_files_open_whatever_their_name(tmp_path):
    """The tokenizer kinds of rowbook.text (rowbook's JSON, Hugging Face's tokenizer.json,
    BERT's vocab.txt, a SentencePiece .model) open to the tokenizer their own loader gives."""
    from rowbook.text import Unigram, WordPiece, load_model

    spm = pytest.importorskip("sentencepiece")
    wordpiece = WordPiece().fit(TEXTS, 40, min_count=1, workers=1)
    unigram = Unigram().fit(TEXTS, 30, workers=1)
    wordpiece.save(tmp_path / "wp.dat")
    wordpiece.to_tokenizer_json(tmp_path / "wp-hf.dat")
    wordpiece.save_vocab(tmp_path / "vocab.dat")
    unigram.save(tmp_path / "uni.dat")
    unigram.to_tokenizer_json(tmp_path / "uni-hf.dat")
    with open(tmp_path / "sp.dat", "wb") as model:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(TEXTS * 4),
            model_writer=model,
            vocab_size=30,
            minloglevel=2,
            hard_vocab_limit=False,
        )
    expected = {
        "wp.dat": WordPiece.load,
        "wp-hf.dat": WordPiece.from_tokenizer_json,
        "vocab.dat": WordPiece.from_vocab,
        "uni.dat": Unigram.load,
        "uni-hf.dat": Unigram.from_tokenizer_json,
        "sp.dat": load_model,
    }
    for name, reader in expected.items():
        got, own = rowbook.load(tmp_path / name), reader(tmp_path / name)
        assert type(got) is type(own), name
        assert got.encode("the cat sat").ids == own.encode("the cat sat").ids, name
