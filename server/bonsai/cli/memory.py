"""Command-line functions for memory: ``bonsai memory …`` and ``bonsai remember``.

Wire them into the console script with :func:`add_memory_commands`; each
command is a plain function taking the parsed arguments, printing its output
and returning the exit code (0 ok, 1 refused or not found).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bonsai.cli.terminal_text import shown, write_content
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.memory.embedding import model_dir
from bonsai.services.memory.entry import Tier
from bonsai.services.memory.model_build import ModelBuildError, build_model
from bonsai.services.memory.results import MemoryListing
from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.store import MemoryStoreError
from bonsai.services.memory.write_tool import MemoryWriteError
from bonsai.services.workspace import workspace_problem

Command = Callable[[argparse.Namespace], int]


def open_service(args: argparse.Namespace) -> MemoryService:
    home = bonsai_home()
    workspace = Path(args.workspace).resolve() if args.workspace else Path.cwd()
    what = workspace_problem(workspace)
    if what is not None:  # a mistyped --workspace must not become a new folder tree
        raise MemoryStoreError(f"the workspace {workspace} {what}; pass --workspace DIR")
    loaded = load_settings(home, workspace)
    for problem in loaded.problems:
        print(shown(f"bonsai: settings: {problem}", newlines=False), file=sys.stderr)
    return MemoryService(home, workspace, loaded.settings.memory)


def _guarded(command: Command) -> Command:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (MemoryStoreError, MemoryWriteError, ModelBuildError) as error:
            print(shown(f"bonsai memory: {error}"), file=sys.stderr)
            return 1

    run.__name__ = command.__name__
    run.__doc__ = command.__doc__
    return run


@_guarded
def cmd_list(args: argparse.Namespace) -> int:
    """List entries (project entries win a name clash), then any problems."""
    service = open_service(args)
    status = service.status()
    entries = service.list()
    if args.json:
        print(MemoryListing(entries=entries, issues=status.issues).model_dump_json())
        return 0
    print(status.index_line)
    for entry in entries:
        flag = "" if entry.enabled else "  (disabled)"
        name = shown(entry.name, newlines=False)
        description = shown(entry.description, newlines=False)
        print(f"  {name:<40} {entry.tier:<7} {shown(entry.type):<10} {description}{flag}")
    for issue in status.issues:
        print(shown(f"  ! {issue.path}: {issue.problem}", newlines=False))
    if status.gitignore_advisory:
        print(f"note: {status.gitignore_advisory}")
    return 0


@_guarded
def cmd_show(args: argparse.Namespace) -> int:
    entry = open_service(args).get(args.name)
    print(shown(f"# {entry.path}", newlines=False))
    write_content(entry.path.read_text(encoding="utf-8", errors="replace"))
    return 0


@_guarded
def cmd_edit(args: argparse.Namespace) -> int:
    """Print the file path of an entry: editing the file is the intended way."""
    print(open_service(args).get(args.name).path)
    return 0


@_guarded
def cmd_forget(args: argparse.Namespace) -> int:
    path = open_service(args).forget(args.name)
    print(f"forgot {args.name} (deleted {path})")
    return 0


@_guarded
def cmd_enable(args: argparse.Namespace) -> int:
    entry = open_service(args).set_enabled(args.name, args.enable)
    print(f"{entry.name}: {'enabled' if entry.enabled else 'disabled'}")
    return 0


@_guarded
def cmd_search(args: argparse.Namespace) -> int:
    result = open_service(args).search(" ".join(args.query), limit=args.limit)
    if args.json:
        print(result.model_dump_json())
        return 0
    for rank, hit in enumerate(result.results, 1):
        bm25 = "-" if hit.lanes.bm25 is None else f"{hit.lanes.bm25:.3f}"
        cosine = "-" if hit.lanes.embedding is None else f"{hit.lanes.embedding:.3f}"
        name = shown(hit.name, newlines=False)
        print(f"{rank:>2}. {hit.score:.3f}  {name:<40} {hit.tier:<7} bm25 {bm25}  cos {cosine}")
    if not result.results:
        print("no matching entry")
    print(f"embeddings: {result.embeddings}")
    return 0


@_guarded
def cmd_status(args: argparse.Namespace) -> int:
    status = open_service(args).status()
    if args.json:
        print(status.model_dump_json())
        return 0
    print(status.index_line)
    print(f"user store:     {status.user_dir}")
    print(f"project store:  {status.project_dir or '(no workspace)'}")
    print(
        f"entries:        {status.entries} ({status.project_entries} project, "
        f"{status.user_entries} user)"
    )
    if status.disabled:
        print(shown(f"disabled:       {', '.join(status.disabled)}", newlines=False))
    if status.shadowed:
        print(shown(f"shadowed user entries: {', '.join(status.shadowed)}", newlines=False))
    print(f"embeddings:     {status.embeddings}")
    print(f"model folder:   {status.model_dir}")
    print(f"index:          {status.index_path}")
    for issue in status.issues:
        print(shown(f"problem:        {issue.path}: {issue.problem}", newlines=False))
    if status.gitignore_advisory:
        print(f"note: {status.gitignore_advisory}")
    return 0


@_guarded
def cmd_model_build(args: argparse.Namespace) -> int:
    home = bonsai_home()
    settings = load_settings(home, None).settings.memory
    out = Path(args.out) if args.out else model_dir(home, settings)
    build_model(out, python=args.python, progress=lambda line: print(line, flush=True))
    return 0


@_guarded
def cmd_remember(args: argparse.Namespace) -> int:
    """Pin a fact (user tier, or the project tier with --project)."""
    tier: Tier = "project" if args.project else "user"
    plan = open_service(args).add(" ".join(args.fact), tier=tier, name=args.name)
    sys.stdout.write(plan.diff)
    print(plan.note)
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", metavar="DIR", help="project folder (default: current directory)"
    )


def _named(sub: Any, name: str, func: Command, help_text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    _common(parser)
    parser.set_defaults(func=func)
    return parser


def add_memory_commands(subparsers: Any) -> None:
    """Register ``memory`` (with its subcommands) and ``remember``; every parser
    sets ``func``, so the caller runs ``args.func(args)``."""
    memory = subparsers.add_parser("memory", help="manage persistent memory")
    verbs = memory.add_subparsers(dest="memory_command", required=True)
    listing = _named(verbs, "list", cmd_list, "list entries")
    listing.add_argument("--json", action="store_true", help="print JSON (entries and problems)")
    for verb, func, text in (
        ("show", cmd_show, "print one entry"),
        ("edit", cmd_edit, "print an entry's file path"),
        ("forget", cmd_forget, "delete one entry"),
    ):
        _named(verbs, verb, func, text).add_argument("name", help="the entry's name")
    for verb, flag in (("enable", True), ("disable", False)):
        parser = _named(verbs, verb, cmd_enable, f"{verb} recall of an entry")
        parser.add_argument("name", help="the entry's name")
        parser.set_defaults(enable=flag)
    search = _named(verbs, "search", cmd_search, "search entries (hybrid BM25 + embeddings)")
    search.add_argument("query", nargs="+", help="words to search the memory for")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument(
        "--limit", type=int, default=5, metavar="K", help="at most K hits (default 5)"
    )
    status = _named(verbs, "status", cmd_status, "stores, embeddings, problems")
    status.add_argument("--json", action="store_true", help="print JSON")
    model = verbs.add_parser("model", help="the embedding model")
    model_verbs = model.add_subparsers(dest="model_command", required=True)
    build = _named(model_verbs, "build", cmd_model_build, "distil the model locally")
    build.add_argument("--python", help="interpreter that has torch/transformers (default: this)")
    build.add_argument("--out", help="output folder (default: the configured model folder)")
    remember = _named(subparsers, "remember", cmd_remember, "pin a fact in memory")
    remember.add_argument("--project", action="store_true", help="store in the project tier")
    remember.add_argument("--name", help="entry name (default: derived from the fact)")
    remember.add_argument("fact", nargs="+", help="the fact to remember (plain words)")
