"""The n-gram count language model: counts, smoothing, ARPA files, and the experiment beside
the neural model.

==============  ============================================================================
module          what it holds
==============  ============================================================================
``model``       :class:`NGramLM`: parameters, ``fit``, probabilities, perplexity,
                generation, saved state
``counts``      every order's n-grams counted in one NumPy pass
``kneser_ney``  interpolated modified Kneser-Ney as KenLM's ``lmplz`` estimates it
``tables``      the estimated probabilities and backoffs, looked up by packed keys
``state``       that state as saved values, checked when read back
``arpa``        ARPA files both ways
``experiment``  the count model and the NPLM on the same sentences
                (``rowbook count-vs-neural``)
==============  ============================================================================
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submod_attrs={"model": ["NGramLM"], "experiment": ["counts_vs_neural"]}
)
