"""``python -m rowbook.cli``: the same as the ``rowbook`` command.

Guarded, so that worker processes started by spawning (``--scheduler local``) import this
module without running the command again.
"""

from rowbook.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
