"""``bonsai repomap [PATH] [--tokens N] [--mention TEXT] [--json]``.

``add_repomap_command(subparsers)`` registers the sub-command; the CLI layer
calls ``args.func(args)``. Token counting uses tiktoken's ``o200k_base`` through
``bonsai.services.tokens`` when it loads offline, else chars/4 (a note on stderr
says so). A warm repeat of the same command is read back from the render memo
(``memo.py``) before the service, numpy, pydantic or the tokenizer are imported.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bonsai.cli.terminal_text import terminal_json, write_content
from bonsai.home import bonsai_home
from bonsai.services.repomap.memo import DEFAULTS_ID, lookup

if TYPE_CHECKING:
    from bonsai.services.repomap.records import RepoMap
    from bonsai.services.repomap.service import RepoMapService

CountTokens = Callable[[str], int]
DEFAULT_ENCODING = "o200k_base"


def chars_per_token(text: str) -> int:
    """The fallback estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def default_counter() -> tuple[CountTokens, str | None]:
    """(counter, note): tiktoken o200k_base if it loads offline, else chars/4."""
    try:
        from bonsai.services.tokens import load_encoding

        encoding = load_encoding(DEFAULT_ENCODING)
    except Exception as exc:  # missing rank file, import error: degrade visibly
        return chars_per_token, f"tiktoken unavailable ({exc}); counting chars/4"

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count, None


def _map(service: RepoMapService, args: argparse.Namespace, counter: CountTokens | None) -> RepoMap:
    """The map from scratch; a warm repeat of the same command is served from
    the cache without loading the tokenizer (it takes longer than the map)."""
    args.files_found = service.build().files
    inputs = {"tokens": args.tokens, "chat_files": args.chat, "mentions": args.mention}
    if counter is not None:  # a caller's own counter: no memo across processes
        return service.get(**inputs)
    hit = service.cached_fresh(**inputs, counter_id=DEFAULT_ENCODING, settings_id=DEFAULTS_ID)
    if hit is not None:
        return hit
    service.count_tokens, note = default_counter()
    if note:
        print(f"bonsai repomap: {note}", file=sys.stderr)
        return service.get(**inputs)
    return service.get_fresh(**inputs, counter_id=DEFAULT_ENCODING, settings_id=DEFAULTS_ID)


def default_cache_db() -> Path:
    return bonsai_home() / "cache" / "repomap.db"


def to_json(result: RepoMap) -> dict[str, Any]:
    """The CLI's JSON shape: ``{text, files: [{path, rank, tags}], tokens, builtMs, cached}``."""
    return {
        "text": result.text,
        "files": [f.model_dump() for f in result.files],
        "tokens": result.tokens,
        "builtMs": round(result.built_ms, 3),
        "cached": result.cached,
    }


def _remembered(args: argparse.Namespace, cache: Path) -> dict[str, Any] | None:
    """The CLI's JSON shape of the memo's map for this command, if it has one."""
    started = time.perf_counter()
    stored = lookup(Path(args.path), cache, args.tokens, args.chat, args.mention, DEFAULT_ENCODING)
    if stored is None:
        return None
    return {
        "text": stored["text"],
        "files": stored["files"],
        "tokens": stored["tokens"],
        "builtMs": round((time.perf_counter() - started) * 1000, 3),
        "cached": True,
    }


def empty_note(args: argparse.Namespace) -> str:
    """Why the map came out empty, and what to do (never an empty answer in silence)."""
    if getattr(args, "files_found", None) == 0:
        return (
            f"bonsai repomap: nothing to map: no files found in {args.path} "
            "(git-ignored, dependency, build and .bonsai folders are skipped)"
        )
    if args.tokens is not None:
        return f"bonsai repomap: the map is empty: --tokens {args.tokens} leaves no room for a file"
    return "bonsai repomap: the map is empty: no file here has anything to show"


def _print(out: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json:
        print(terminal_json(out, indent=2))
    else:
        text = out["text"]
        write_content(text if not text or text.endswith("\n") else text + "\n")
    if not out["text"]:
        print(empty_note(args), file=sys.stderr)


def add_repomap_command(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "repomap", help="print the repository map of a directory"
    )
    parser.add_argument("path", nargs="?", default=".", help="workspace (default: .)")
    parser.add_argument("--tokens", type=int, default=None, help="token budget")
    parser.add_argument("--mention", default="", help="task text naming files/identifiers")
    parser.add_argument("--chat", action="append", default=[], help="file in the conversation")
    parser.add_argument("--cache", type=Path, default=None, help="tag cache database")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=repomap_command)
    return parser


def repomap_command(args: argparse.Namespace, counter: CountTokens | None = None) -> int:
    """Run the sub-command; returns the exit status (2 for bad input)."""
    workspace = Path(args.path)
    if not workspace.is_dir():
        print(f"bonsai repomap: {workspace} is not a directory", file=sys.stderr)
        return 2
    if args.tokens is not None and args.tokens < 0:
        print("bonsai repomap: --tokens must be >= 0", file=sys.stderr)
        return 2
    cache = args.cache if args.cache is not None else default_cache_db()
    remembered = _remembered(args, cache) if counter is None else None
    if remembered is not None and remembered["text"]:  # an empty one is built again, to say why
        _print(remembered, args)
        return 0
    from bonsai.services.repomap.service import RepoMapService
    from bonsai.settings import RepoMapSettings

    service = RepoMapService(workspace, cache, RepoMapSettings(), counter or chars_per_token)
    try:
        result = _map(service, args, counter)
    finally:
        service.stop()
    _print(to_json(result), args)
    return 0
