"""quantize and prune, and mapped opening of the query commands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rowbook.data.synthetic_vectors import clustered_vectors
from rowbook.vectors import Vectors

from .conftest import assert_one_line_error


@pytest.fixture
def table_npz(tmp_path):
    rows = clustered_vectors(1200, 16, seed=5)
    table = Vectors([f"w{i}" for i in range(len(rows))], rows, counts=np.arange(1200, 0, -1))
    table.save(tmp_path / "float.npz")
    table.save_word2vec_format(tmp_path / "float.bin", binary=True)
    return tmp_path / "float.npz"


def test_quantize_prints_its_cost_and_writes_a_table_that_answers(run, table_npz, tmp_path):
    (tmp_path / "pairs.tsv").write_text("".join(f"w{i}\tw{i + 3}\t{i % 7}\n" for i in range(40)))
    result = run(
        "quantize",
        table_npz,
        "-o",
        tmp_path / "small.npz",
        "--m",
        "4",
        "--report",
        "--pairs",
        tmp_path / "pairs.tsv",
        "--queries",
        "30",
    )
    assert result.code == 0, result
    assert (
        "quantised 1,200 x 16 float32 (76.8 kB) to pq (m=4 x 8 bits, norms in 1 byte)" in result.err
    )
    assert (
        "recall@10 against the float table" in result.err and "Spearman (pairs.tsv)" in result.err
    )
    small = Vectors.load(tmp_path / "small.npz")
    answer = run("neighbors", tmp_path / "small.npz", "w3", "--topn", "3", "--json")
    assert [d["word"] for d in json.loads(answer.out)["w3"]] == [
        k for k, _ in small.most_similar("w3", topn=3)
    ]


def test_quantize_reranks_against_the_mapped_float_table(run, table_npz, tmp_path):
    result = run(
        "quantize",
        tmp_path / "float.bin",
        "-o",
        tmp_path / "small.npz",
        "--m",
        "2",
        "--rerank",
        "50",
    )
    assert result.code == 0, result
    assert "converting" in result.err and "re-rank 50" in result.err
    answer = json.loads(run("neighbors", tmp_path / "small.npz", "w8", "--json").out)["w8"]
    exact = Vectors.load(table_npz).most_similar("w8", topn=10)
    assert [d["word"] for d in answer] == [k for k, _ in exact]


def test_quantize_measures_the_pool_for_recall_and_refuses_both_flags(run, table_npz, tmp_path):
    result = run("quantize", table_npz, "-o", tmp_path / "small.npz", "--m", "2", "--recall", "0.9")
    assert result.code == 0, result
    small = Vectors.load(tmp_path / "small.npz")
    assert small.calibration is not None and small.calibration.target == 0.9
    assert f"re-rank {small.rerank}" in result.err
    assert_one_line_error(
        run("quantize", table_npz, "-o", tmp_path / "b.npz", "--rerank", "5", "--recall", "0.9"),
        "quantize",
        "--rerank N fixes the re-ranked pool and --recall R measures it",
    )


def test_quantize_refuses_another_output_format(run, table_npz, tmp_path):
    assert_one_line_error(
        run("quantize", table_npz, "-o", tmp_path / "small.txt"),
        "quantize",
        "written as rowbook .npz",
    )
    assert_one_line_error(
        run("quantize", table_npz, "-o", tmp_path / "s.npz", "--nbits", "9"),
        "quantize",
        "--nbits must be an integer from 1 to 8",
    )


def test_prune_keeps_the_most_frequent_words(run, table_npz, tmp_path):
    result = run("prune", table_npz, "-o", tmp_path / "top.txt", "--keep", "100")
    assert result.code == 0, result
    assert "pruned to 100 of 1,200 keys" in result.err
    top = Vectors.load_word2vec_format(tmp_path / "top.txt")
    assert top.index_to_key == tuple(f"w{i}" for i in range(100))


@pytest.mark.parametrize("flag", ["--mmap", "--no-mmap"])
def test_query_commands_answer_the_same_mapped_or_read(run, table_npz, tmp_path, flag):
    answer = run("neighbors", tmp_path / "float.bin", "w8", "--topn", "4", "--json", flag)
    assert answer.code == 0, answer
    exact = Vectors.load(table_npz).most_similar("w8", topn=4)
    assert [d["word"] for d in json.loads(answer.out)["w8"]] == [k for k, _ in exact]
    assert ("converting" in answer.err) == (flag == "--mmap")
    similarity = run("similarity", table_npz, "w1", "w2", "--json", flag)
    assert json.loads(similarity.out)["cosine"] == pytest.approx(
        Vectors.load(table_npz).similarity("w1", "w2")
    )


def test_query_commands_map_a_large_file_by_default(run, table_npz, tmp_path, monkeypatch):
    """Without --mmap / --no-mmap, a file of MAP_FROM_BYTES or more is mapped (a word2vec
    binary through its cache), a smaller one read."""
    import rowbook.cli._vectorio as vectorio

    size = (tmp_path / "float.bin").stat().st_size
    for limit, mapped in ((size + 1, False), (size, True)):
        monkeypatch.setattr(vectorio, "MAP_FROM_BYTES", limit)
        answer = run("neighbors", tmp_path / "float.bin", "w8", "--topn", "4", "--json")
        assert answer.code == 0, answer
        assert ("converting" in answer.err) == mapped, (limit, answer.err)
        exact = Vectors.load(table_npz).most_similar("w8", topn=4)
        assert [d["word"] for d in json.loads(answer.out)["w8"]] == [k for k, _ in exact]
        assert (
            any(
                p.name.startswith("float.bin") and p != tmp_path / "float.bin"
                for p in tmp_path.iterdir()
            )
            == mapped
        )
