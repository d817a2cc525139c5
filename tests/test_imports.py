"""What each entry point imports: only the modules its work needs.

Each check runs in a fresh interpreter (this process has imported everything already)
and lists the heavy modules found in ``sys.modules`` afterwards; none may be there.
Import time is measured in ``benchmarks/bench_scale.py``, never here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Never needed to train word vectors: other stacks, optional dependencies, oracles.
HEAVY = [
    "torch",
    "matplotlib",
    "sklearn",
    "faiss",
    "dask",
    "distributed",
    "safetensors",
    "tokenizers",
    "gensim",
    "fasttext",
    "PIL",
    "pandas",
    "rowbook.viz",
    "rowbook.autograd",
    "rowbook.nn",
    "rowbook.optim",
    "rowbook.demo",
    "scipy.stats",
    "scipy.sparse",
    "scipy.special",
]
#: Not needed to import the package or build the command line, either.
HEAVY_AT_IMPORT = [
    *HEAVY,
    "numba",
    "llvmlite",
    "scipy",
    "tqdm",
    "rowbook.models.word_vectors.word2vec",
]


def _imported_after(code: str, watched: list[str], tmp_path: Path) -> list[str]:
    """The ``watched`` modules in ``sys.modules`` after ``code`` runs in a fresh interpreter
    (with this checkout first on the path)."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        print(json.dumps([m for m in {watched!r} if m in sys.modules]))
    """)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_check_sees_a_heavy_import(tmp_path):
    """The check can fail: importing a heavy module in the child is seen."""
    found = _imported_after("import rowbook.nn", HEAVY, tmp_path)
    assert {"rowbook.autograd", "rowbook.nn"} <= set(found)


@pytest.mark.parametrize(
    "code",
    [
        "import rowbook",
        "import rowbook.cli",
        "from rowbook.cli import main; main(['--help'])",
        "from rowbook.cli import main; main(['train', '--help'])",
        "from rowbook.cli import build_parser; build_parser(['neighbors', 'v.txt', 'king'])",
    ],
)
def test_importing_the_package_and_the_cli_loads_nothing_heavy(code, tmp_path):
    assert _imported_after(code, HEAVY_AT_IMPORT, tmp_path) == []


def test_word2vec_help_imports_word2vec_alone(tmp_path):
    """``train word2vec --help`` reads Word2Vec's signature, not the other models'."""
    code = "from rowbook.cli import main; main(['train', 'word2vec', '--help'])"
    watched = [
        *HEAVY,
        "rowbook.models.word_vectors.glove",
        "rowbook.models.word_vectors.fasttext",
        "rowbook.models.nplm",
    ]
    assert _imported_after(code, watched, tmp_path) == []


def test_training_word2vec_loads_nothing_it_does_not_use(tmp_path):
    """The API and the CLI train word2vec with numba and NumPy alone."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20, encoding="utf-8")
    api = f"""
        from rowbook import Word2Vec
        Word2Vec(vector_size=8, min_count=1, epochs=1, workers=1).fit({str(corpus)!r})
    """
    cli = f"""
        from rowbook.cli import main
        assert main(["train", "word2vec", {str(corpus)!r}, "-o", "v.txt", "--min-count", "1",
                     "--vector-size", "8", "--epochs", "1", "--quiet"]) == 0
    """
    assert _imported_after(api, HEAVY, tmp_path) == []
    assert _imported_after(cli, HEAVY, tmp_path) == []
    assert (tmp_path / "v.txt").exists()


def test_training_and_predicting_with_the_fasttext_classifier_loads_no_tokenizer(tmp_path):
    """fastText's classifier reads with its own scanner: no subword tokenizer, no autograd
    stack (each is resident memory the process pays for: the classifier's peak is
    compared with fastText's in ``benchmarks/bench_classifier.py``)."""
    corpus = tmp_path / "train.txt"
    corpus.write_text("__label__a good film\n__label__b bad plot\n" * 20, encoding="utf-8")
    code = f"""
        from rowbook.models import FastTextClassifier
        model = FastTextClassifier(vector_size=8, epochs=1, workers=1, word_ngrams=2, bucket=100)
        model.fit({str(corpus)!r})
        model.predict(["a good plot"])
    """
    tokenizers = ["rowbook.text.bpe", "rowbook.text.sentencepiece", "rowbook.text.wordpiece"]
    assert _imported_after(code, [*HEAVY, *tokenizers], tmp_path) == []
