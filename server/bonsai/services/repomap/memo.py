"""The render memo: the last map rendered from scratch, found again without the
service (no numpy, pydantic, ranking or tokenizer), for one-shot callers.

``bonsai repomap`` runs in a new process each time. When the files, the inputs
and the code are what they were when a map was rendered from scratch, the same
bytes come out, so a warm repeat reads them back instead: discovery (stat of
every file), the cache rows without their tags, one key, one row. The key
covers every file's path, content hash and row status, the budget, the chat
files, the mention text, the settings (``settings_id``), the token counter, and
the source of the modules that decide the map (``code_id``), so an upgrade or
an edit of the ranking never serves an old map.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bonsai import __version__
from bonsai.services.repomap.cache import CachedFile, TagCache
from bonsai.services.repomap.discovery import DEFAULT_EXCLUDED_DIRS, IgnoreRules, discover

# What ``RepoMapSettings()`` sets for discovery; a test keeps them equal.
DEFAULT_MAX_FILE_BYTES = 1_000_000
DEFAULTS_ID = "defaults"  # settings_id of ``RepoMapSettings()`` (covered by code_id)
_CODE_DIRS = ("services/repomap", "core/repomap")
_code_id: str | None = None


def code_id() -> str:
    """A digest of the source of every module that shapes the map (and of the
    settings' defaults), the bonsai, Python and numpy versions."""
    global _code_id
    if _code_id is None:
        base = Path(__file__).resolve().parents[2]  # .../bonsai
        digest = hashlib.sha256(f"{__version__}\n{sys.version_info[:2]}\n".encode())
        files = [base / "settings.py"]
        for rel in _CODE_DIRS:
            files += sorted((base / rel).glob("*.py"))
        numpy = importlib.util.find_spec("numpy")  # found, not imported
        if numpy is not None and numpy.origin:
            files.append(Path(numpy.origin).parent / "version.py")
        for path in files:
            digest.update(path.name.encode() + b"\0")
            try:
                digest.update(path.read_bytes())
            except OSError:
                digest.update(b"missing")
        _code_id = digest.hexdigest()
    return _code_id


def files_key(rows: Mapping[str, CachedFile]) -> str:
    """Every row's path, content hash and status (the files a map was made of)."""
    digest = hashlib.sha256()
    for path in sorted(rows):
        row = rows[path]
        digest.update(f"{path}\0{row.sha256}\0{row.status}\n".encode())
    return digest.hexdigest()


def relative(workspace: Path, path: str) -> str | None:
    """``path`` (absolute, or relative to the workspace) as a workspace path."""
    p = Path(path)
    absolute = p if p.is_absolute() else workspace / p
    try:
        rel = absolute.relative_to(workspace).as_posix()
    except ValueError:
        return None
    return None if rel in ("", ".") else rel


def fresh_key(
    rows: Mapping[str, CachedFile],
    workspace: Path,
    tokens: int | None,
    chat_files: Iterable[str],
    mentions: str,
    settings_id: str,
    counter_id: str,
) -> str:
    chat = sorted({r for r in (relative(workspace, p) for p in chat_files) if r is not None})
    inputs = [files_key(rows), tokens, chat, mentions, settings_id, counter_id, code_id()]
    return hashlib.sha256(json.dumps(inputs).encode()).hexdigest()


def lookup(
    workspace: Path,
    cache_db: Path,
    tokens: int | None,
    chat_files: Iterable[str],
    mentions: str,
    counter_id: str,
) -> dict[str, Any] | None:
    """The remembered map (``RepoMap`` as JSON data) for these inputs under the
    default settings, if every file is as the tag cache has it; else None."""
    if not cache_db.is_file():
        return None
    workspace = workspace.resolve()
    found = discover(IgnoreRules(workspace, DEFAULT_EXCLUDED_DIRS, DEFAULT_MAX_FILE_BYTES))
    cache = TagCache(cache_db)
    try:
        rows = cache.load(str(workspace), with_data=False)
        if len(rows) != len(found.files):
            return None
        for cand in found.files:
            row = rows.get(cand.path)
            if row is None or (row.size, row.mtime_ns) != (cand.size, cand.mtime_ns):
                return None  # a new or changed file: the service decides
        key = fresh_key(rows, workspace, tokens, chat_files, mentions, DEFAULTS_ID, counter_id)
        stored = cache.load_render(str(workspace), key)
    finally:
        cache.close()
    if stored is None:
        return None
    data: dict[str, Any] = json.loads(stored)
    return data
