"""Which heavy libraries this daemon has imported so far (``bonsai/daemon/status``).

They are loaded when first needed: the tokenizer's encoding in the background once
serving, detect-secrets at the first redaction, model2vec with the first embedding, a
tree-sitter grammar with the first file of its language; httpx's command line (rich,
click, pygments) never. A daemon that has not needed one has not paid for it, and a
test can see that over the wire.
"""

from __future__ import annotations

import sys

HEAVY = (
    "click",
    "detect_secrets",
    "model2vec",
    "numpy",
    "pygments",
    "rich",
    "tiktoken",
    "tokenizers",
)
GRAMMARS = "tree_sitter_"  # tree_sitter_python, tree_sitter_go, ...


def heavy_modules() -> list[str]:
    """The heavy libraries imported in this process, sorted."""
    loaded = [name for name in HEAVY if name in sys.modules]
    grammars = [n for n in list(sys.modules) if n.startswith(GRAMMARS) and "." not in n]
    return sorted(loaded + grammars)
