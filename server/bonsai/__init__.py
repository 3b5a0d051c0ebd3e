"""bonsai: a context-managing daemon for LLM coding agents."""

import sys

__version__ = "0.1.0"

# httpx imports its command-line client (rich, click, pygments: ~6 MB and ~0.1 s of CPU
# in every process that imports httpx) whenever those happen to be installed; bonsai never
# runs it. A None entry makes that one optional import fail, as httpx expects when they
# are not installed (its `httpx` script then says to install `httpx[cli]`).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
