"""Messages in the CLI's own words: a table of bad invocations, each answered with one line that
names only options the (sub)command has, never a library parameter or Python syntax."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from rowbook.cli import build_parser

#: (argv with {corpus}, {vectors}, {bad}, {badvec}, {tmp} placeholders, words the message holds)
BAD = [
    ("train word2vec {corpus} -o {tmp}/v.xyz", ["suffix '.xyz'"]),
    ("train word2vec {corpus} -o {tmp}/v.txt --to text", ["unrecognized arguments: --to text"]),
    ("train word2vec {corpus} -o {tmp}/v.txt --tok word", ["unrecognized arguments: --tok"]),
    (
        "train word2vec {corpus} -o {tmp}/v.txt --vector_size 5",
        ["did you mean --vector-size?", "'rowbook train word2vec --help'"],
    ),
    ("train word2vec {corpus} -o {tmp}/v.txt --window 0", ["--window must be", "got 0"]),
    ("train word2vec {corpus} -o {tmp}/v.txt --vector-size 0", ["--vector-size must be"]),
    ("train word2vec {corpus} -o {tmp}/v.txt --resume", ["--checkpoint"]),
    ("train word2vec {bad} -o {tmp}/v.txt --quiet", ["--unicode-errors replace"]),
    ("train glove {corpus} -o {tmp}/g.txt --x-max -1", ["--x-max must be"]),
    ("train glove {corpus} -o {tmp}/g.txt --xmax 3", ["did you mean --x-max?"]),
    ("train nplm {corpus} -o {tmp}/n.npz --context 0", ["--context must be"]),
    ("train nplm {bad} -o {tmp}/n.npz --quiet", ["--unicode-errors replace"]),
    ("train", ["MODEL"]),
    ("trian word2vec", ["did you mean 'train'?"]),
    ("train word2vc {corpus}", ["did you mean 'word2vec'?"]),
    ("neighbors {vectors} king --json --method 3cosad", ["unrecognized arguments: --method"]),
    ("analogy {vectors} man woman king --method 3cosad", ["did you mean '3cosadd'?"]),
    ("neighbors {vectors} king --topn -3", ["--topn must be an integer >= 0, got -3"]),
    ("neighbors {vectors} king --top 3", ["did you mean --topn?"]),
    ("neighbors {badvec} king", ["--unicode-errors replace"]),
    ("analogy {vectors} man woman king --topn -1", ["--topn must be"]),
    ("similarity {vectors} king", ["WORD2"]),
    ("evaluate {vectors} --pairs {tmp}/none.tsv", ["none.tsv"]),
    ("convert {vectors}", ["-o OUT"]),
    ("evaluate {vectors} --analogies {corpus} --restrict-vocab 0", ["--restrict-vocab must be"]),
    ("plot {vectors} -o {tmp}/p.png --top 2 --method tsne", ["add --method pca"]),
    ("vocab {bad} -o {tmp}/vocab.json --quiet", ["--unicode-errors replace"]),
    ("vocab {corpus} -o {tmp}/vocab.json --min-count 0", ["--min-count must be"]),
    ("vocab {corpus} -o {tmp}/vocab.json --max-vocab 1", ["--max-vocab must be"]),
    ("vocab {corpus} -o {tmp}/vocab.json --min-cout 2", ["did you mean --min-count?"]),
    ("vocab {corpus} -o {tmp}/bpe.json --tokenizer bpe", ["--max-vocab"]),
    ("tokenize --ids 'the cat'", ["--vocab", "--tokenizer"]),
    ("tokenize --bpe x.json --tokenizer word 'the cat'", ["--bpe", "--tokenizer"]),
    ("convert {vectors} {tmp}/v.xyz", ["--to"]),
    ("plot {vectors} -o {tmp}/p.png --dims 3", ["--dims 2"]),
    ("plot {vectors} -o {tmp}/p.html --heatmap", ["--heatmap"]),
    ("plot {vectors} -o {tmp}/p.png --top 0", ["--top must be"]),
    ("plot {vectors} -o {tmp}/p.png --label all", ["did you mean --labels?"]),
]


def _command_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``argv`` names (``train word2vec`` -> its own)."""
    parser = build_parser()
    for token in argv:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers or token not in subparsers[0].choices:
            break
        parser = subparsers[0].choices[token]
    return parser


@pytest.fixture
def files(tmp_path: Path, vectors_txt: Path, corpus_txt: Path) -> dict[str, str]:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("the caf\u00e9 sat on the mat\n".encode("latin-1") * 3)
    badvec = tmp_path / "latin1.vec"
    badvec.write_bytes(b"2 2\nking 0.1 0.2\ncaf\xe9 0.3 0.4\n")
    return {
        "corpus": str(corpus_txt),
        "vectors": str(vectors_txt),
        "bad": str(bad),
        "badvec": str(badvec),
        "tmp": str(tmp_path),
    }


@pytest.mark.parametrize(("command", "needles"), BAD, ids=[c for c, _ in BAD])
def test_bad_invocations_name_only_existing_options(run, files, command, needles) -> None:
    argv = [part.format(**files) for part in _split(command)]
    result = run(*argv)
    parser = _command_parser(argv)
    assert result.code == 2, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    line = lines[0]
    assert line.startswith(f"{parser.prog}: error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    said = line.replace(files["tmp"], "TMP")
    options = set(parser._option_string_actions)
    for flag in re.findall(r"(?<![\w-])--?[a-z][\w-]*", said):
        if flag not in ("-o",) and not argv.count(flag):  # an unknown option the user typed
            assert flag in options, f"{flag} is not an option of {parser.prog}: {line}"
    # library wording: no keyword=value, no snake_case parameter names, no None
    for typed in argv:
        said = said.replace(typed, "ARG")
    assert not re.search(r"\b[a-z]+_[a-z_]+\b|\w+='|\bNone\b", said), line


def _split(command: str) -> list[str]:
    import shlex

    return shlex.split(command)


def test_option_abbreviations_are_refused(run) -> None:
    for parser in _every_parser(build_parser()):
        assert parser.allow_abbrev is False, parser.prog


def _every_parser(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _every_parser(child)


def test_unicode_errors_replace_reads_the_file(run, files, tmp_path) -> None:
    result = run(
        "vocab",
        files["bad"],
        "-o",
        tmp_path / "v.json",
        "--unicode-errors",
        "replace",
        "--tokenizer",
        "whitespace",
    )
    assert result.code == 0, result
    assert "caf\ufffd" in (tmp_path / "v.json").read_text(encoding="utf-8")
    result = run("neighbors", files["badvec"], "king", "--unicode-errors", "replace")
    assert result.code == 0 and "caf\ufffd" in result.out, result
