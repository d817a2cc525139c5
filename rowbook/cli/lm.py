"""Language models on the command line: ``train lm``, ``generate``, ``size``, ``vocab-sweep``.

One file over 400 lines on purpose: the four commands share the language model's options and
its loading of a saved model or checkpoint folder.

* ``rowbook train lm CORPUS -o lm.npz`` trains a :class:`~rowbook.models.TransformerLM`
  (options read from its signature, as the other ``train`` commands'), saves the model
  (``--save-hf DIR``: also a Hugging Face folder) and prints a sample;
* ``rowbook generate MODEL PROMPT`` continues a prompt, MODEL a saved model or a Hugging
  Face checkpoint folder;
* ``rowbook size`` prints :func:`rowbook.sizing.model_size` for a preset, a ``config.json``,
  or dimensions given as options;
* ``rowbook vocab-sweep CORPUS --model bpe,wordpiece,unigram --sizes ...`` prints
  :func:`rowbook.vocab_sweep.vocab_sweep` (one scheme or several) and draws it.

The embedding commands (``neighbors``, ``plot``, ...) read the table of a saved model or
of a checkpoint folder as they read a vectors file (:mod:`rowbook.cli._vectorio`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rowbook.checks import ParameterError
from rowbook.cli._common import (
    add_command,
    add_corpus,
    add_json,
    add_positionals,
    add_sample_options,
    add_seed,
    add_training_run,
    add_unicode_errors,
    check_output_path,
    print_json,
    read_lines,
    source_name,
)
from rowbook.cli.fitting import checked_resume, make_model, run_fit
from rowbook.cli.options import add_model_options, add_option, flag_for

__all__ = ["HELP", "register"]

HELP = "a GPT-2 or Llama language model: BPE, attention, the table inside"

# -- train lm -------------------------------------------------------------------------------


def run_train(args: argparse.Namespace) -> int:
    out = check_output_path(args.output)
    if out.suffix.lower() != ".npz":
        raise ValueError(
            f"-o {out}: the language model is saved as .npz (rowbook.load, generate "
            f"and the table commands read it); name it {out.with_suffix('.npz')}"
        )
    for path in (args.checkpoint,):
        if path is not None:
            check_output_path(path)
    texts = [line for line in read_lines(args.corpus, errors=args.unicode_errors) if line.strip()]
    if not texts:
        raise ValueError(f"{source_name(args.corpus)} is empty: it has no non-blank line")
    resume = checked_resume(args)
    lm = make_model(args, progress=not args.quiet)
    stopped = run_fit(args, lambda: lm.fit(texts, checkpoint=args.checkpoint, resume=resume))
    if stopped is not None:
        return stopped
    lm.save(out)
    if args.save_hf:
        lm.save_hf(args.save_hf)
    if not args.quiet:
        print(_summary(lm, out, args.save_hf))
    if args.sample_length:
        print(_sample(lm, args.prompt, args.sample_length, args.temperature))
    return 0


def _sample(lm: Any, prompt: str, length: int, temperature: float) -> str:
    """A sample after ``prompt`` (or after an end of text), as long as the context allows."""
    ids = lm.encode(prompt) if prompt else [lm.eos_id_]
    if lm.config_.positions in ("learned", "sinusoidal"):
        length = min(length, lm.config_.context - len(ids))
    out = lm.generate(ids, max(length, 0), temperature=temperature, seed=lm.seed)
    return lm.pipeline_.decode(out if prompt else out[1:])


def _summary(lm: Any, out: Path, hf: str | None) -> str:
    c, last = lm.config_, lm.history_.epochs[-1] if lm.history_.epochs else {}
    held = f", held-out perplexity {last['val_perplexity']:.2f}" if "val_perplexity" in last else ""
    trained = f"training perplexity {last['perplexity']:.2f}{held}" if last else "no epoch run"
    tied = "tied" if c.tie_embeddings else "untied"
    also = f"; Hugging Face folder -> {hf}" if hf else ""
    return (
        f"lm: {c.family}, V={c.vocab_size:,}, d={c.d_model}, L={c.n_layers}, H={c.n_heads}"
        f"/{c.n_kv_heads}, table {tied}, {sum(p.size for p in lm.net_.parameters()):,} "
        f"parameters; {len(lm.history_.epochs)} epochs: {trained} -> {out}{also}"
    )


def _train_parser(models: Any) -> None:
    from rowbook.models import TransformerLM

    p = add_command(
        models,
        "lm",
        run=run_train,
        help=HELP,
        description="Learn a byte-level BPE of --vocab-size entries from CORPUS (each non-blank "
        "line is one text), train a decoder-only Transformer on windows of --context tokens, "
        "save the model to OUT (.npz) and print a sample.",
        examples=[
            "rowbook train lm lines.txt -o lm.npz --d-model 128 --layers 2 --epochs 3",
            "rowbook train lm lines.txt -o lm.npz --family llama --kv-heads 2 --save-hf lm-hf/",
            "rowbook train lm lines.txt -o lm.npz --untied --optimizer sparse_adam",
            "rowbook generate lm.npz 'the cat'",
            "rowbook neighbors lm.npz Ġcat",
        ],
    )
    add_corpus(p, "each non-blank line is one text")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="where to save the model (.npz)"
    )
    add_unicode_errors(p)
    add_option(
        p,
        "--save-hf",
        "also write a Hugging Face folder (config.json, "
        "model.safetensors, tokenizer.json) that transformers loads",
        metavar="DIR",
    )
    add_training_run(p)
    add_sample_options(p, length=40)
    p.allow_abbrev = False
    add_model_options(p, TransformerLM)


# -- generate ---------------------------------------------------------------------------


def load_lm(path: str) -> Any:
    """The language model saved at ``path`` (.npz), or of the Hugging Face folder ``path``."""
    from rowbook.models import TransformerLM, load

    if Path(path).is_dir():
        return TransformerLM.from_hf(path)
    if _is_gguf(path):
        return TransformerLM.from_gguf(path)
    model = load(path)
    if not isinstance(model, TransformerLM):
        raise ValueError(
            f"{path} holds a {type(model).__name__} model, not a language model; "
            "train one with 'rowbook train lm'"
        )
    return model


def _is_gguf(path: str) -> bool:
    """Whether ``path`` is a GGUF file (by its magic, as rowbook.load tells it)."""
    if not Path(path).is_file():
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"GGUF"


def run_generate(args: argparse.Namespace) -> int:
    lm = load_lm(args.model)
    prompt: Any = args.prompt
    if args.ids:
        try:
            prompt = [int(x) for x in args.prompt.replace(",", " ").split()]
        except ValueError:
            raise ValueError(
                f"--ids: the prompt must be token ids separated by spaces, got {args.prompt!r}"
            ) from None
    elif lm.pipeline_ is None:
        raise ValueError(
            f"{args.model} has no tokenizer rowbook reads; give the prompt as token ids with --ids"
        )
    try:
        out = lm.generate(
            prompt,
            args.max_new_tokens,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            seed=args.seed,
            stop_at_eos=not args.no_stop,
            use_cache=not args.no_cache,
            cache_dtype=args.cache_dtype,
        )
    except ParameterError as err:
        raise ValueError(err.message_for(flag_for(err.name))) from None
    print(" ".join(map(str, out.tolist())) if args.ids else out)
    return 0


def _generate_parser(commands: Any) -> None:
    p = add_command(
        commands,
        "generate",
        run=run_generate,
        help="continue a prompt with a language model (KV cache)",
        description="Continue PROMPT with the language model MODEL: a model saved by 'rowbook "
        "train lm', or a Hugging Face GPT-2 / Llama checkpoint folder. Each token is drawn "
        "with the temperature, top-k and top-p given (temperature 0: the most likely).",
        examples=[
            "rowbook generate lm.npz 'the cat'",
            "rowbook generate lm.npz 'the' --temperature 0",
            "rowbook generate gpt2-folder/ 'Hello' --top-k 40 --max-new-tokens 30",
            "rowbook generate llama-folder/ '1 450 4996' --ids",
        ],
    )
    add_positionals(p, MODEL="a saved language model (.npz), a checkpoint folder or a GGUF model")
    add_positionals(p, "PROMPT")
    add_option(p, "--max-new-tokens", default=50, metavar="N")
    add_option(p, "--temperature", default=1.0)
    add_option(p, "--top-k", "draw among the K most likely tokens", type=int, metavar="K")
    add_option(
        p,
        "--top-p",
        "draw among the most likely tokens whose probabilities add up to P",
        type=float,
        metavar="P",
    )
    add_seed(p)
    p.add_argument("--ids", action="store_true", help="PROMPT and the output are token ids")
    p.add_argument("--no-stop", action="store_true", help="go on past an end-of-text token")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="run the model over the whole sequence at every step (what the KV cache saves)",
    )
    add_option(
        p,
        "--cache-dtype",
        "store the KV cache in this type (int8: a float16 scale per head and position; "
        "default: the model's)",
        choices=("float32", "float16", "int8"),
    )


# -- size -------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(
            f"expected integers >= 1 separated by commas, got {text!r}"
        )
    return values


def run_size(args: argparse.Namespace) -> int:
    from rowbook import sizing

    dims = {k: getattr(args, k) for k in ("vocab_size", "d_model", "n_layers", "n_heads")}
    chosen = [x for x in (args.config, args.preset, all(dims.values()) or None) if x]
    if len(chosen) != 1:
        raise ValueError(
            "give one of CONFIG (a config.json or its folder), --preset NAME, or "
            "--vocab-size, --d-model, --layers and --heads"
        )
    changes = {"dtype": args.dtype, "batch": args.batch}
    changes = {k: v for k, v in changes.items() if v is not None}
    if args.preset:
        size = sizing.preset(args.preset, **changes)
    elif args.config and _is_gguf(args.config):
        size = sizing.model_size_from_gguf(args.config, **changes)
    elif args.config:
        size = sizing.model_size_from_hf(args.config, **changes)
    else:
        extra = {
            "n_kv_heads": args.n_kv_heads,
            "d_ff": args.d_ff,
            "context": args.context,
            "family": args.family,
            "tied": not args.untied,
        }
        try:
            size = sizing.model_size(
                **dims, **{k: v for k, v in (extra | changes).items() if v is not None}
            )
        except ParameterError as err:
            raise ValueError(err.message_for(flag_for(err.name))) from None
    if args.json:
        print_json(
            {
                "parameters": size.parameters,
                "embedding_parameters": size.embedding_parameters,
                "tying_saves": size.tying_saves,
                "layer_parameters": size.layer_parameters,
                "bytes": size.bytes(),
                "adam_state_bytes": size.adam_state_bytes,
                "kv_cache_bytes": {T: size.kv_cache_bytes(T) for T in args.lengths},
                "attention_flops": {T: size.attention_flops(T) for T in args.lengths},
            }
        )
    else:
        print(size.table(args.lengths))
    return 0


def _size_parser(commands: Any) -> None:
    from rowbook.sizing import DTYPE_BYTES, PRESETS

    p = add_command(
        commands,
        "size",
        run=run_size,
        help="what a model's d, V, L and T cost: parameters, bytes, KV cache, attention",
        description="Count the parameters (the table, what tying saves, per layer), their bytes, "
        "Adam's state, the KV cache and attention's cost as functions of the length T, for a "
        "published preset, a Hugging Face config.json, or dimensions given as options.",
        examples=[
            "rowbook size --preset llama-2-7b --lengths 4096,8192",
            "rowbook size path/to/config.json --dtype bfloat16",
            "rowbook size --vocab-size 32000 --d-model 1024 --layers 16 --heads 16 --family llama",
        ],
    )
    p.add_argument(
        "config",
        metavar="CONFIG",
        nargs="?",
        help="a Hugging Face config.json, its folder, or a GGUF model",
    )
    add_option(p, "--preset", choices=tuple(PRESETS))
    add_option(
        p,
        "--lengths",
        "sequence lengths to price",
        type=_ints,
        default=[1024, 4096, 8192],
        metavar="T,T",
        shown="1024,4096,8192",
    )
    add_option(
        p, "--dtype", "storage type (default: the preset's, or float32)", choices=tuple(DTYPE_BYTES)
    )
    add_option(p, "--batch", "sequences at once (default: 1)", type=int, metavar="B")
    for flag, dest, metavar in (
        ("--vocab-size", "vocab_size", "V"),
        ("--d-model", "d_model", "D"),
        ("--layers", "n_layers", "L"),
        ("--heads", "n_heads", "H"),
        ("--kv-heads", "n_kv_heads", "H"),
        ("--d-ff", "d_ff", "N"),
        ("--context", "context", "T"),
    ):
        add_option(p, flag, dest=dest, type=int, metavar=metavar)
    add_option(p, "--family", choices=("gpt2", "llama"))
    p.add_argument("--untied", action="store_true", help="a separate output layer")
    add_json(p)


# -- vocab-sweep --------------------------------------------------------------------------


def _models(text: str) -> list[str]:
    from rowbook.vocab_sweep import SWEEP_MODELS

    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in SWEEP_MODELS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"expected {', '.join(SWEEP_MODELS)} separated by commas, got {text!r}"
        )
    return list(dict.fromkeys(names))


def run_vocab_sweep(args: argparse.Namespace) -> int:
    from rowbook.vocab_sweep import vocab_sweep, vocab_table

    if args.plot:
        check_output_path(args.plot)
    texts = list(read_lines(args.corpus, errors=args.unicode_errors))
    held = list(read_lines(args.held_out, errors=args.unicode_errors)) if args.held_out else None
    try:
        rows = vocab_sweep(
            texts,
            args.sizes,
            model=args.model,
            held_out=held,
            d_model=args.d_model,
            characters=args.characters,
        )
    except ParameterError as err:
        raise ValueError(err.message_for(flag_for(err.name))) from None
    if args.json:
        print_json([row.__dict__ for row in rows])
    else:
        print(vocab_table(rows, args.characters))
    if args.plot:
        from rowbook.viz import plot_vocab_sweep

        plot_vocab_sweep(rows, args.plot)
        if not args.json:
            print(f"picture -> {args.plot}")
    return 0


def _vocab_sweep_parser(commands: Any) -> None:
    p = add_command(
        commands,
        "vocab-sweep",
        run=run_vocab_sweep,
        help="what each vocabulary size costs: tokens per character, unknown pieces, table, "
        "attention",
        description="Train a subword model on CORPUS at each of --sizes (--model bpe, wordpiece "
        "or unigram; several, comma-separated, to compare them): byte-level BPE once up to the "
        "largest size, a smaller one being its first merges (what a run stopped there learns); "
        "WordPiece and Unigram once per size from one count of the words. For each, measure "
        "held-out text: tokens per character, the share of [UNK] or byte-fallback tokens, the "
        "table's parameters and bytes at --d-model, and the attention cost of --characters "
        "characters of such text.",
        examples=[
            "rowbook vocab-sweep corpus.txt --sizes 1000,4000,16000,50000",
            "rowbook vocab-sweep corpus.txt --model wordpiece --sizes 1000,4000,16000",
            "rowbook vocab-sweep corpus.txt --model bpe,wordpiece,unigram --sizes 2000,8000",
            "rowbook vocab-sweep corpus.txt --sizes 500,2000 --held-out test.txt --plot v.png",
        ],
    )
    add_corpus(p, "one text per line")
    add_option(
        p,
        "--model",
        "bpe (byte-level), wordpiece (BERT's), unigram (Metaspace), or several",
        type=_models,
        default=["bpe"],
        metavar="NAME,NAME",
        shown="bpe",
    )
    add_option(
        p,
        "--sizes",
        "vocabulary sizes (each >= 257 for bpe)",
        type=_ints,
        required=True,
        metavar="V,V",
    )
    add_option(
        p,
        "--held-out",
        "text to measure on (default: a tenth of the lines, left out of training)",
        metavar="FILE",
    )
    add_option(p, "--d-model", "table width", default=768, metavar="D")
    add_option(
        p, "--characters", "length of the text priced for attention", default=4096, metavar="N"
    )
    add_option(
        p, "--plot", "where to draw it, '' for no picture", default="vocab-sweep.png", metavar="PNG"
    )
    add_json(p)
    add_unicode_errors(p)


def register(commands: Any, train: Any, only: Any = None) -> None:
    """``generate``, ``size``, ``vocab-sweep``, and ``lm`` under ``train`` (its subparsers);
    with ``only`` (the train models the command line names), ``lm``'s options only if named."""
    if only is None or "lm" in only:
        _train_parser(train)
    else:
        train.add_parser("lm", help=HELP)
    _generate_parser(commands)
    _size_parser(commands)
    _vocab_sweep_parser(commands)
