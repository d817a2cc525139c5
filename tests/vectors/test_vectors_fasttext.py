"""fastText ``.bin`` files both ways with the ``fasttext`` package, and the subword query side."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rowbook.vectors import SubwordVectors, Vectors
from rowbook.vectors.fasttext_format import read_fasttext_bin, write_fasttext_bin

fasttext = pytest.importorskip("fasttext")

UNSEEN = ["walkers", "whalebone", "café", "日本語", "x", "", "😀", "</s>", "overcooked"]


def _corpus(path, seed=0, sentences=1500):
    """Made-up stems (consonant-vowel syllables), each with four suffixes, in random sentences.

    Every n-gram row of a word takes the full step, so on a corpus this small fastText's
    default lr 0.05 can diverge ("Encountered NaN"); the fixture trains with lr 0.01.
    """
    rng = np.random.default_rng(seed)
    consonants, vowels = list("bcdfghjklmnprstvz"), list("aeiou")
    stems = sorted(
        {
            "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.integers(2, 4)))
            for _ in range(300)
        }
    )
    words = [s + x for s in stems for x in ["", "s", "ed", "ing"]]
    lines = [" ".join(rng.choice(words, size=rng.integers(3, 12))) for _ in range(sentences)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ft_bin(tmp_path_factory, train_fasttext):
    folder = tmp_path_factory.mktemp("ftbin")
    corpus = _corpus(folder / "corpus.txt")
    model = train_fasttext(
        corpus, model="skipgram", dim=16, minn=3, maxn=6, lr=0.01, bucket=3000, minCount=2, epoch=2
    )
    path = folder / "model.bin"
    model.save_model(str(path))
    return path, model


def test_bin_read_equals_fasttext_matrices_and_dictionary(ft_bin):
    path, model = ft_bin
    read = read_fasttext_bin(path)
    assert list(read.words) == model.words
    np.testing.assert_array_equal(read.input, model.get_input_matrix())
    np.testing.assert_array_equal(read.output, model.get_output_matrix())
    assert (read.args.dim, read.args.minn, read.args.maxn, read.args.bucket) == (16, 3, 6, 3000)
    assert read.args.model == 2 and read.args.loss == 2


def test_word_vectors_of_a_fasttext_bin_equal_get_word_vector(ft_bin):
    path, model = ft_bin
    ft = SubwordVectors.load_fasttext(path)
    for word in model.words + UNSEEN:
        np.testing.assert_allclose(
            ft.vector_for(word), model.get_word_vector(word), atol=1e-6, rtol=1e-6
        )
    for word in UNSEEN[:4]:
        assert word not in ft
        assert [g for g, _ in ft.subwords(word)] == model.get_subwords(word)[0]
        assert [i for _, i in ft.subwords(word)] == model.get_subwords(word)[1].tolist()


def test_written_bin_is_byte_identical_and_fasttext_loads_it(ft_bin, tmp_path):
    path, model = ft_bin
    out = tmp_path / "again.bin"
    write_fasttext_bin(out, read_fasttext_bin(path))
    assert out.read_bytes() == path.read_bytes()
    loaded = fasttext.load_model(str(out))
    for word in [model.words[5], "whalebone"]:
        np.testing.assert_array_equal(loaded.get_word_vector(word), model.get_word_vector(word))


def test_a_bin_rowbook_makes_up_is_read_by_fasttext(tmp_path):
    from rowbook.vectors.fasttext_format import FastTextArgs, FastTextFile

    rng = np.random.default_rng(3)
    words = ("</s>", "walk", "walked", "talk")
    args = FastTextArgs(dim=6, bucket=100, minn=2, maxn=4)
    made = FastTextFile(
        args,
        words,
        np.array([9, 5, 3, 2]),
        rng.standard_normal((104, 6)).astype(np.float32),
        rng.standard_normal((4, 6)).astype(np.float32),
        ntokens=19,
    )
    path = tmp_path / "made.bin"
    write_fasttext_bin(path, made)
    theirs = fasttext.load_model(str(path))
    ours = SubwordVectors(words, made.input, minn=2, maxn=4, bucket=100)
    assert theirs.words == list(words)
    for word in [*words, "walking", "tal", "ü"]:
        np.testing.assert_allclose(
            ours.vector_for(word), theirs.get_word_vector(word), atol=1e-6, rtol=1e-6
        )


def _patched(path, tmp_path, offset, fmt, value):
    data = bytearray(path.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    out = tmp_path / "patched.bin"
    out.write_bytes(bytes(data))
    return out


def _offsets(path):
    """Byte offsets of the dictionary size, the quant flag and the input matrix rows."""
    read = read_fasttext_bin(path)
    dict_at = 8 + 56
    entries = sum(len(w.encode()) + 10 for w in read.words)
    quant_at = dict_at + 28 + entries
    return dict_at, quant_at, quant_at + 1


def test_size_claims_the_file_cannot_hold_are_refused_before_allocating(ft_bin, tmp_path):
    path, _ = ft_bin
    dict_at, quant_at, rows_at = _offsets(path)
    with pytest.raises(ValueError, match=r"patched.bin: dictionary field 'size' claims 2147483647"):
        read_fasttext_bin(_patched(path, tmp_path, dict_at, "<i", 2**31 - 1))
    with pytest.raises(ValueError, match=r"patched.bin: field 'input matrix' rows claims"):
        read_fasttext_bin(_patched(path, tmp_path, rows_at, "<q", 2**40))
    with pytest.raises(ValueError, match=r"quantised fastText classifier"):
        read_fasttext_bin(_patched(path, tmp_path, quant_at, "<b", 1))
    with pytest.raises(ValueError, match=r"not a fastText \.bin model"):
        read_fasttext_bin(_patched(path, tmp_path, 0, "<i", 1234))


@pytest.mark.parametrize("keep", [3, 70, 200, -5000, -1])
def test_a_truncated_bin_is_a_clear_error(ft_bin, tmp_path, keep):
    path, _ = ft_bin
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes()[:keep])
    with pytest.raises(ValueError, match=r"cut\.bin"):
        read_fasttext_bin(cut)


def test_vec_text_round_trip_and_fasttext_style_lines(ft_bin, tmp_path):
    path, model = ft_bin
    ft = SubwordVectors.load_fasttext(path)
    vec = tmp_path / "model.vec"
    ft.save_word2vec_format(vec)
    back = Vectors.load_word2vec_format(vec)
    assert back.index_to_key == ft.index_to_key
    np.testing.assert_array_equal(back.vectors, ft.vectors)
    # fastText's saveVectors: "%g" with 5 significant digits and a space after every value
    theirs = tmp_path / "theirs.vec"
    rows = [f"{w} " + "".join(f"{x:.5g} " for x in model.get_word_vector(w)) for w in model.words]
    theirs.write_text(f"{len(rows)} 16\n" + "\n".join(rows) + "\n", encoding="utf-8")
    read = Vectors.load_word2vec_format(theirs)
    np.testing.assert_allclose(read.vectors, ft.vectors, atol=1e-4, rtol=1e-4)  # 5 digits


def test_queries_answer_for_unseen_words(ft_bin):
    path, _ = ft_bin
    ft = SubwordVectors.load_fasttext(path)
    unseen, known = ft.index_to_key[7] + "ers", ft.index_to_key[7]
    assert unseen not in ft
    unit = ft.vector_for(unseen) / np.linalg.norm(ft.vector_for(unseen))
    expected = ft.get_normed_vectors() @ unit
    best = ft.most_similar(unseen, topn=3)
    assert [k for k, _ in best] == [ft.index_to_key[i] for i in np.argsort(-expected)[:3]]
    assert ft.similarity(unseen, known) == pytest.approx(float(expected[7]), abs=1e-5)
    with pytest.raises(KeyError):
        ft[unseen]


def test_vectors_files_hold_no_ngrams_and_say_so(ft_bin, tmp_path):
    path, _ = ft_bin
    ft = SubwordVectors.load_fasttext(path)
    ft.save(tmp_path / "v.npz")
    assert Vectors.load(tmp_path / "v.npz").index_to_key == ft.index_to_key
    with pytest.raises(TypeError, match="load_fasttext"):
        SubwordVectors.load(tmp_path / "v.npz")
    with pytest.raises(TypeError, match="load_fasttext"):
        SubwordVectors.load_glove(tmp_path / "v.txt")
