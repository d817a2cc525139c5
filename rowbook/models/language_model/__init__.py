"""The decoder-only Transformer language model and everything around it.

=================  =========================================================================
module             what it holds
=================  =========================================================================
``config``         :class:`TransformerConfig`, the one statement of the architecture (read by
                   the model, the checkpoint readers and :mod:`rowbook.sizing`)
``transformer``    :class:`TransformerNet` and its blocks: GPT-2 and Llama as settings
``model``          :class:`TransformerLM`: BPE, training, generation, the table as ``vectors``
``state``          :class:`~rowbook.models.language_model.state.LMExtras`: what it keeps
                   besides the network (pipeline, V, end-of-text id, dropout's state)
``sampling``       temperature, top-k and top-p sampling of the next token
``kv_cache``       the KV cache kept in int8 with per-head, per-position scales
``hf_checkpoint``  Hugging Face checkpoints both ways (GGUF files: :mod:`rowbook.gguf`)
=================  =========================================================================

Each name is imported on first use: sizing a model reads ``config`` alone.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "config": ["TransformerConfig"],
        "transformer": ["TransformerNet"],
        "model": ["TransformerLM"],
    },
)
