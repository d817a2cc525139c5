"""Every rowbook module imported the ordinary way before pytest collects their doctests.

With ``--import-mode=importlib`` (pyproject.toml), pytest imports a module it collects for
doctests by its own means when the package has not imported it yet; the package's own
import of it later makes a second module object, and its classes then exist twice: run
alone, ``pytest rowbook/text/bpe/model.py tests/cli/test_cli_text.py`` failed with
"tokenizer must be a ... ByteLevelBPE, got ByteLevelBPE". Imported first, each module is
the one pytest finds in ``sys.modules``, whatever order the files are collected in. (The
whole suite collects ``tests/`` first and imports them anyway: this costs it nothing.)
"""

from __future__ import annotations

import importlib
import pkgutil

import rowbook

for _module in pkgutil.walk_packages(rowbook.__path__, "rowbook."):
    importlib.import_module(_module.name)
