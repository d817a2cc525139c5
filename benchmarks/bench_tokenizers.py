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
* with ``--memory``: peak resident memory of training on a corpus of at least 1 GB
  (NewsArticles repeated, or ``--corpus FILE``), each library in its own process, the same
  vocabulary size; rowbook counts within ``--budget`` GB.

    python benchmarks/bench_tokenizers.py            # speed, full sizes
    python benchmarks/bench_tokenizers.py --quick    # a smoke test
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
from corpora import cache_dir, newsarticles_lines, newsarticles_texts
from timing import Row, interleaved_medians_ms, machine, print_table, print_targets

VOCAB = 8_000
ENCODE_LINES = 20_000
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


def spm_train(texts, vocab_size, model_type):
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=out,
        vocab_size=vocab_size,
        model_type=model_type,
        minloglevel=2,
        normalization_rule_name="identity",
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
    import sentencepiece as spm

    from rowbook.text import Unigram, WordPiece
    from rowbook.text.sentencepiece.files import model_from_bytes

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
        sp_models = {kind: spm_train(texts, vocab, kind) for kind in ("unigram", "bpe")}
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
    for kind, data in sp_models.items():
        ours, theirs = model_from_bytes(data, kind), spm.SentencePieceProcessor(model_proto=data)
        same &= [e.ids for e in ours.encode_batch(lines)] == theirs.encode(lines)
        encode[f"rowbook {kind} .model encode_batch"] = lambda ours=ours: cold(ours, lines)
        encode[f"rowbook {kind} .model encode_batch, workers=1"] = lambda ours=ours: cold(
            ours, lines, 1
        )
        encode[f"sentencepiece encode ({kind})"] = lambda theirs=theirs: theirs.encode(lines)
    times = interleaved_medians_ms(encode, repeat=2 * repeat + 1)
    for name, ms in times.items():
        group = "encode " + (
            "WordPiece"
            if "WordPiece" in name
            else "Unigram"
            if "Unigram" in name
            else "sp unigram"
            if "unigram" in name
            else "sp bpe"
        )
        rows.append(Row(group, name, ms))
    for ours, theirs, need in [
        ("rowbook WordPiece.encode_batch", "tokenizers encode_batch (WordPiece)", 1.5),
        ("rowbook Unigram.encode_batch", "tokenizers encode_batch (Unigram)", 1.5),
        ("rowbook unigram .model encode_batch", "sentencepiece encode (unigram)", 1.0),
        ("rowbook bpe .model encode_batch", "sentencepiece encode (bpe)", 1.0),
    ]:
        best = min(times[ours], times[f"{ours}, workers=1"])  # 2 processes lose on a busy machine
        targets.append(
            (f"encoding, {theirs} / {ours} (best of workers=None, 1)", times[theirs] / best, need)
        )
    targets.append(("same ids as the anchors on every line", float(same), 1.0))
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
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, tool, corpus, vocab, budget = args.child
        _child(kind, tool, corpus, int(vocab), float(budget))
        return 0
    print(f"NewsArticles; {machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}")
    rows, targets = speed(args)
    if args.memory:
        more_rows, more_targets = memory(args)
        rows, targets = rows + more_rows, targets + more_targets
    subjects = {
        "train WordPiece": "rowbook WordPiece.fit",
        "train Unigram": "rowbook Unigram.fit",
        "encode WordPiece": "rowbook WordPiece.encode_batch",
        "encode Unigram": "rowbook Unigram.encode_batch",
        "encode sp unigram": "rowbook unigram .model encode_batch",
        "encode sp bpe": "rowbook bpe .model encode_batch",
    }
    print_table("WordPiece, Unigram, SentencePiece models", rows, subjects)
    print(
        f"\n1-min load average at the end: {os.getloadavg()[0]:.1f} (other processes share the cores)"
    )
    return 0 if print_targets(targets) or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
