"""WordPiece, Unigram and SentencePiece models: rowbook beside ``tokenizers`` and ``sentencepiece``.

On the NewsArticles corpus (:mod:`corpora`), in one process, each measurement taken in turn
with its anchor (:func:`timing.interleaved_medians_ms`):

* training from raw text (normalizing, pre-tokenizing and counting included): WordPiece
  (BERT uncased, 8,000 entries) against ``tokenizers``' ``WordPieceTrainer``; Unigram
  (Metaspace, 8,000 pieces) against ``tokenizers``' ``UnigramTrainer`` and the
  ``sentencepiece`` trainer (identity rules, the same size; a different algorithm, for
  scale); rowbook does not train SentencePiece's BPE (its BPE trainer is byte-level);
* encoding the first 20,000 lines with the same vocabulary (read from the anchor's file):
  WordPiece and Unigram against ``tokenizers``' ``encode_batch``, SentencePiece Unigram and
  BPE models against ``sentencepiece``'s ``encode`` of the list; rowbook's word cache is
  emptied before every repetition, its ids are checked equal to the anchor's. rowbook runs
  with ``workers=None`` (two processes on 2 cores) and ``workers=1``; on a machine busy
  with other work one process is faster, and the target takes the better of the two;
* SentencePiece ``.model`` files (8,000 pieces, ``nmt_nfkc`` rules, Unigram and BPE, trained
  by ``sentencepiece``): the first 10 MB of NewsArticles' lines encoded by both, on one thread
  and on every core, the ids checked equal;
* with ``--only unigram-training``: Unigram training alone on NewsArticles, rowbook on every
  core and with ``workers=1``, beside ``tokenizers`` and ``sentencepiece``;
* Unigram training on generated text of many distinct long words
  (:func:`corpora.many_words_lines`, 3 MB), against ``tokenizers`` and ``sentencepiece``;
* with ``--memory``: peak resident memory of training on a corpus of at least 1 GB
  (NewsArticles repeated, or ``--corpus FILE``), each library in its own process, the same
  vocabulary size; rowbook counts within ``--budget`` GB.

    python benchmarks/bench_tokenizers.py            # speed, full sizes
    python benchmarks/bench_tokenizers.py --quick    # a smoke test
    python benchmarks/bench_tokenizers.py --only models many-words   # SentencePiece's side
    python benchmarks/bench_tokenizers.py --only unigram-training many-words   # Unigram training
    python benchmarks/bench_tokenizers.py --memory   # also peak memory on 1 GB (slow)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import cache_dir, many_words_lines, newsarticles_lines, newsarticles_texts
from timing import Row, interleaved_medians_ms, machine, print_table, print_targets

VOCAB = 8_000
ENCODE_LINES = 20_000
ENCODE_MB = 10
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def hf_wordpiece(texts, vocab_size):
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer, tok.pre_tokenizer = (
        normalizers.BertNormalizer(),
        pre_tokenizers.BertPreTokenizer(),
    )
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(
        texts,
        trainers.WordPieceTrainer(
            vocab_size=vocab_size, special_tokens=SPECIALS, min_frequency=2, show_progress=False
        ),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return tok


def hf_unigram(texts, vocab_size):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    tok.train_from_iterator(
        texts,
        trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False
        ),
    )
    return tok


def spm_train(texts, vocab_size, model_type, rule="identity"):
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=out,
        vocab_size=vocab_size,
        model_type=model_type,
        minloglevel=2,
        normalization_rule_name=rule,
        input_sentence_size=0,
        hard_vocab_limit=False,
    )
    return out.getvalue()


def _from(tokenizer, cls, folder):
    path = Path(folder) / f"{cls.__name__}.json"
    tokenizer.save(str(path))
    return cls.from_tokenizer_json(path)


def cold(tok, lines, workers=None):
    tok._cache.clear()
    return tok.encode_batch(lines, workers=workers)


def speed(args) -> tuple[list[Row], list]:
    from rowbook.text import Unigram, WordPiece

    texts = newsarticles_texts()[: 300 if args.quick else None]
    lines = newsarticles_lines()[: 2_000 if args.quick else ENCODE_LINES]
    vocab, repeat = (2_000, 1) if args.quick else (VOCAB, args.repeat)
    WordPiece().fit(
        texts[:30], 200, workers=1
    )  # compile (or load) the numba kernels outside the timers
    Unigram().fit(texts[:30], 200, workers=1)
    rows, targets = [], []
    train = interleaved_medians_ms(
        {
            "rowbook WordPiece.fit": lambda: WordPiece().fit(texts, vocab),
            "tokenizers WordPieceTrainer": lambda: hf_wordpiece(texts, vocab),
            "rowbook Unigram.fit": lambda: Unigram().fit(texts, vocab),
            "tokenizers UnigramTrainer": lambda: hf_unigram(texts, vocab),
            "sentencepiece trainer (unigram)": lambda: spm_train(texts, vocab, "unigram"),
            "sentencepiece trainer (bpe)": lambda: spm_train(texts, vocab, "bpe"),
        },
        repeat=repeat,
        warmup=0,
    )
    for name, ms in train.items():
        group = (
            "train WordPiece"
            if "WordPiece" in name
            else "train Unigram"
            if "nigram" in name
            else "train BPE"
        )
        rows.append(Row(group, name, ms, "not trained by rowbook" if "bpe" in name else ""))
    targets.append(
        (
            "WordPiece training, tokenizers / rowbook",
            train["tokenizers WordPieceTrainer"] / train["rowbook WordPiece.fit"],
            1.0,
        )
    )
    targets.append(
        (
            "Unigram training, tokenizers / rowbook",
            train["tokenizers UnigramTrainer"] / train["rowbook Unigram.fit"],
            1.0,
        )
    )
    targets.append(
        (
            "Unigram training, sentencepiece / rowbook",
            train["sentencepiece trainer (unigram)"] / train["rowbook Unigram.fit"],
            1.0,
        )
    )
    with tempfile.TemporaryDirectory() as folder:
        hf_wp, hf_uni = hf_wordpiece(texts, vocab), hf_unigram(texts, vocab)
        wp, uni = _from(hf_wp, WordPiece, folder), _from(hf_uni, Unigram, folder)
    same = [e.ids for e in cold(wp, lines)] == [e.ids for e in hf_wp.encode_batch(lines)]
    same &= [e.ids for e in cold(uni, lines)] == [e.ids for e in hf_uni.encode_batch(lines)]
    encode = {
        "rowbook WordPiece.encode_batch": lambda: cold(wp, lines),
        "rowbook WordPiece.encode_batch, workers=1": lambda: cold(wp, lines, 1),
        "tokenizers encode_batch (WordPiece)": lambda: hf_wp.encode_batch(lines),
        "rowbook Unigram.encode_batch": lambda: cold(uni, lines),
        "rowbook Unigram.encode_batch, workers=1": lambda: cold(uni, lines, 1),
        "tokenizers encode_batch (Unigram)": lambda: hf_uni.encode_batch(lines),
    }
    times = interleaved_medians_ms(encode, repeat=2 * repeat + 1)
    for name, ms in times.items():
        rows.append(Row("encode " + ("WordPiece" if "WordPiece" in name else "Unigram"), name, ms))
    for ours, theirs, need in [
        ("rowbook WordPiece.encode_batch", "tokenizers encode_batch (WordPiece)", 1.5),
        ("rowbook Unigram.encode_batch", "tokenizers encode_batch (Unigram)", 1.5),
    ]:
        best = min(times[ours], times[f"{ours}, workers=1"])  # 2 processes lose on a busy machine
        targets.append(
            (f"encoding, {theirs} / {ours} (best of workers=None, 1)", times[theirs] / best, need)
        )
    targets.append(("same ids as the anchors on every line", float(same), 1.0))
    return rows, targets


# -- Unigram training alone ----------------------------------------------------------------------


def unigram_training(args) -> tuple[list[Row], list]:
    """Unigram training alone (Metaspace, 8,000 pieces) on NewsArticles: rowbook on every core
    and on one thread (the same pieces), ``tokenizers``' ``UnigramTrainer`` and the
    ``sentencepiece`` trainer, each in turn in every repetition."""
    from rowbook.text import Unigram

    texts = newsarticles_texts()[: 300 if args.quick else None]
    vocab = 2_000 if args.quick else VOCAB
    Unigram().fit(texts[:30], 200, workers=1)  # compile (or load) the kernels outside the timers
    train = interleaved_medians_ms(
        {
            "rowbook Unigram.fit": lambda: Unigram().fit(texts, vocab),
            "rowbook Unigram.fit, workers=1": lambda: Unigram().fit(texts, vocab, workers=1),
            "tokenizers UnigramTrainer": lambda: hf_unigram(texts, vocab),
            "sentencepiece trainer (unigram)": lambda: spm_train(texts, vocab, "unigram"),
        },
        repeat=1 if args.quick else args.repeat,
        warmup=0,
    )
    rows = [Row("train Unigram, NewsArticles", name, ms) for name, ms in train.items()]
    ours = train["rowbook Unigram.fit"]
    print(
        "Unigram training on NewsArticles: rowbook's second core gives "
        f"{train['rowbook Unigram.fit, workers=1'] / ours:.2f}x"
    )
    targets = [
        (
            "Unigram training on NewsArticles, sentencepiece / rowbook",
            train["sentencepiece trainer (unigram)"] / ours,
            1.0,
        ),
        (
            "Unigram training on NewsArticles, tokenizers / rowbook",
            train["tokenizers UnigramTrainer"] / ours,
            1.0,
        ),
    ]
    return rows, targets


# -- SentencePiece .model files ---------------------------------------------------------------


def first_megabytes(lines: list[str], megabytes: float) -> list[str]:
    """The first lines of ``lines`` holding ``megabytes`` million characters."""
    out, size = [], 0
    for line in lines:
        if size >= megabytes * 1e6:
            break
        out.append(line)
        size += len(line)
    return out


def model_encoding(args) -> tuple[list[Row], list]:
    """``.model`` files trained by ``sentencepiece`` (8,000 pieces, its default ``nmt_nfkc``
    rules) on NewsArticles, then the first ``ENCODE_MB`` MB of its lines encoded by both
    libraries: one thread (rowbook ``workers=1``, ``num_threads=1``) and every core
    (``workers=None``, ``num_threads=-1``)."""
    import sentencepiece as spm

    from rowbook.text.sentencepiece.files import read_parts
    from rowbook.text.sentencepiece.loading import model_from_parts

    texts = newsarticles_texts()[: 300 if args.quick else None]
    lines = first_megabytes(newsarticles_lines(), 1 if args.quick else ENCODE_MB)
    vocab = 2_000 if args.quick else VOCAB
    rows, targets, timed, same = [], [], {}, True
    for kind in ("unigram", "bpe"):
        data = spm_train(texts, vocab, kind, rule="nmt_nfkc")
        ours = model_from_parts(read_parts(data, f"{kind}.model"))
        theirs = spm.SentencePieceProcessor(model_proto=data)
        same &= [e.ids for e in ours.encode_batch(lines)] == theirs.encode(lines)
        for cores, workers, threads in (("1 thread", 1, 1), ("all cores", None, -1)):
            timed[f"rowbook {kind} .model encode_batch, {cores}"] = lambda o=ours, w=workers: (
                o.encode_batch(lines, workers=w)
            )
            timed[f"sentencepiece encode ({kind}), {cores}"] = lambda t=theirs, n=threads: t.encode(
                lines, num_threads=n
            )
    times = interleaved_medians_ms(timed, repeat=args.repeat)
    for name, ms in times.items():
        kind = "unigram" if "unigram" in name else "bpe"
        rows.append(Row(f"encode sp {kind}, {name.rsplit(', ', 1)[1]}", name, ms))
    for kind in ("unigram", "bpe"):
        for cores in ("1 thread", "all cores"):
            ratio = (
                times[f"sentencepiece encode ({kind}), {cores}"]
                / times[f"rowbook {kind} .model encode_batch, {cores}"]
            )
            targets.append(
                (f".model encoding ({kind}, {cores}), sentencepiece / rowbook", ratio, 1.0)
            )
    targets.append(("same ids as sentencepiece on every line", float(same), 1.0))
    megabytes = sum(map(len, lines)) / 1e6
    print(f".model encoding: {len(lines):,} NewsArticles lines, {megabytes:.1f} M characters")
    return rows, targets


def many_words_training(args) -> tuple[list[Row], list]:
    """Unigram training (Metaspace, 8,000 pieces) on generated text of many distinct long
    words (:func:`corpora.many_words_lines`), against ``tokenizers`` and ``sentencepiece``."""
    from rowbook.text import Unigram

    lines = many_words_lines(600_000 if args.quick else 3_000_000)
    vocab = 2_000 if args.quick else VOCAB
    train = interleaved_medians_ms(
        {
            "rowbook Unigram.fit (many words)": lambda: Unigram().fit(lines, vocab),
            "tokenizers UnigramTrainer (many words)": lambda: hf_unigram(lines, vocab),
            "sentencepiece trainer (unigram, many words)": lambda: spm_train(
                lines, vocab, "unigram"
            ),
        },
        repeat=1 if args.quick else args.repeat,
        warmup=0,
    )
    rows = [Row("train Unigram, many words", name, ms) for name, ms in train.items()]
    ours = train["rowbook Unigram.fit (many words)"]
    targets = [
        (
            "Unigram training on many distinct words, tokenizers / rowbook",
            train["tokenizers UnigramTrainer (many words)"] / ours,
            1.0,
        ),
        (
            "Unigram training on many distinct words, sentencepiece / rowbook",
            train["sentencepiece trainer (unigram, many words)"] / ours,
            1.0,
        ),
    ]
    print(
        f"many words: {len(lines):,} generated lines, {sum(map(len, lines)) / 1e6:.1f} M characters"
    )
    return rows, targets


# -- peak memory --------------------------------------------------------------------------------


def big_corpus(size: int) -> Path:
    """NewsArticles repeated to ``size`` bytes, cached beside the corpus."""
    path = cache_dir() / f"newsarticles-{size >> 20}MB.txt"
    if not path.exists() or path.stat().st_size < size:
        data = ("\n".join(newsarticles_lines()) + "\n").encode("utf-8")
        with open(path.with_suffix(".tmp"), "wb") as f:
            for _ in range(-(-size // len(data))):
                f.write(data)
        path.with_suffix(".tmp").replace(path)
    return path


def _child(kind: str, tool: str, corpus: str, vocab: int, budget: float) -> None:
    """Train in this process (a child of the benchmark) and print the peak memory."""
    start = time.perf_counter()
    if tool == "tokenizers":
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        if kind == "wordpiece":
            tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
            tok.normalizer, tok.pre_tokenizer = (
                normalizers.BertNormalizer(),
                pre_tokenizers.BertPreTokenizer(),
            )
            trainer = trainers.WordPieceTrainer(
                vocab_size=vocab, special_tokens=SPECIALS, show_progress=False
            )
        else:
            tok = Tokenizer(models.Unigram())
            tok.pre_tokenizer = pre_tokenizers.Metaspace()
            trainer = trainers.UnigramTrainer(
                vocab_size=vocab, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False
            )
        tok.train([corpus], trainer)
        size = tok.get_vocab_size()
    else:
        from rowbook.corpus_files import iter_lines
        from rowbook.text import Unigram, WordPiece

        cls = WordPiece if kind == "wordpiece" else Unigram
        extra = (
            {"special_tokens": SPECIALS, "min_count": 0}
            if kind == "wordpiece"
            else {"special_tokens": ["<unk>"]}
        )
        size = len(cls().fit(iter_lines(Path(corpus)), vocab, memory=budget, **extra))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    forked = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # largest child
    # rowbook counts on forked processes (tokenizers on threads): their peak is added, which
    # over-counts the pages they share with this process
    peak = own + forked
    print(
        json.dumps(
            {
                "peak": peak,
                "self": own,
                "children": forked,
                "seconds": time.perf_counter() - start,
                "size": size,
            }
        )
    )


def memory(args) -> tuple[list[Row], list]:
    corpus = (
        Path(args.corpus) if args.corpus else big_corpus(1 << 30 if not args.quick else 1 << 24)
    )
    print(f"\npeak memory: {corpus} ({corpus.stat().st_size / 2**30:.2f} GiB)")
    rows, targets = [], []
    for kind, vocab in (("wordpiece", 30_000), ("unigram", 8_000)):
        peaks = {}
        for tool in ("tokenizers", "rowbook"):
            cmd = [
                sys.executable,
                __file__,
                "--child",
                kind,
                tool,
                str(corpus),
                str(vocab),
                str(args.budget),
            ]
            out = (
                subprocess.run(cmd, check=True, capture_output=True, text=True)
                .stdout.strip()
                .splitlines()[-1]
            )
            result = json.loads(out)
            print(f"  {kind}, {tool}: {out}", flush=True)  # each child's figures as they come
            peaks[tool] = result["peak"]
            rows.append(
                Row(
                    f"memory {kind}",
                    f"{tool} ({result['size']:,} entries)",
                    result["seconds"] * 1e3,
                    f"peak {result['peak'] / 2**20:,.0f} MiB",
                )
            )
        targets.append(
            (
                f"{kind} peak memory, tokenizers / rowbook (half: 2.0)",
                peaks["tokenizers"] / peaks["rowbook"],
                2.0,
            )
        )
    return rows, targets


PARTS = {
    "speed": speed,
    "unigram-training": unigram_training,
    "models": model_encoding,
    "many-words": many_words_training,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke test, not a measurement"
    )
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per timing (median)")
    parser.add_argument(
        "--memory", action="store_true", help="also measure peak memory on a 1 GB corpus (slow)"
    )
    parser.add_argument(
        "--corpus", help="the corpus of --memory (default: NewsArticles repeated to 1 GiB)"
    )
    parser.add_argument(
        "--budget", type=float, default=0.25, help="rowbook's --memory budget in GB (default: 0.25)"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(PARTS),
        default=[part for part in PARTS if part != "unigram-training"],
        help="the parts to run: NewsArticles training and encoding (speed), Unigram training "
        "alone on NewsArticles, with rowbook on one thread too (unigram-training), .model "
        "encoding (models), Unigram training on many distinct words (many-words); default all "
        "but unigram-training",
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, tool, corpus, vocab, budget = args.child
        _child(kind, tool, corpus, int(vocab), float(budget))
        return 0
    print(f"NewsArticles; {machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}")
    rows, targets = [], []
    for part in args.only:
        more_rows, more_targets = PARTS[part](args)
        rows, targets = rows + more_rows, targets + more_targets
    if args.memory:
        more_rows, more_targets = memory(args)
        rows, targets = rows + more_rows, targets + more_targets
    subjects = {
        "train WordPiece": "rowbook WordPiece.fit",
        "train Unigram": "rowbook Unigram.fit",
        "encode WordPiece": "rowbook WordPiece.encode_batch",
        "encode Unigram": "rowbook Unigram.encode_batch",
        "encode sp unigram, 1 thread": "rowbook unigram .model encode_batch, 1 thread",
        "encode sp unigram, all cores": "rowbook unigram .model encode_batch, all cores",
        "encode sp bpe, 1 thread": "rowbook bpe .model encode_batch, 1 thread",
        "encode sp bpe, all cores": "rowbook bpe .model encode_batch, all cores",
        "train Unigram, many words": "rowbook Unigram.fit (many words)",
        "train Unigram, NewsArticles": "rowbook Unigram.fit",
    }
    print_table("WordPiece, Unigram, SentencePiece models", rows, subjects)
    print(
        f"\n1-min load average at the end: {os.getloadavg()[0]:.1f} (other processes share the cores)"
    )
    return 0 if print_targets(targets) or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
