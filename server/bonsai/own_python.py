"""The command line that starts one of bonsai's own Python children (the detached
daemon, the view process, the repository map's parse workers).

``python -m`` and ``python -c`` put the current directory first on ``sys.path``, and
a child's current directory is often the repository being worked on (``bonsai chat``
run there, an editor started there): a repository holding a ``bonsai/`` folder would
be imported in place of bonsai, its code run with no approval. ``-P`` (Python 3.11)
leaves that entry out; ``PYTHONPATH`` still counts."""

from __future__ import annotations

import sys


def python_command(*args: str) -> list[str]:
    """``sys.executable`` with ``args``, never importing from the current directory."""
    return [sys.executable, "-P", *args]
