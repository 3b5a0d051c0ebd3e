"""``bonsai import``, ``bonsai replay`` and ``bonsai recall``.

Wire them into the console script with :func:`add_replay_commands`. They
honour ``BONSAI_HOME``. Imports (and the one recording a single replay stores)
go through the daemon (:mod:`bonsai.cli.import_cmd`), started when none runs;
reads use a read-only connection next to it. ``bonsai replay`` takes files,
folders or a stored session, replays every run (a corpus in up to two worker
processes, with a progress bar) and prints a report, a table, ``--json`` lines
or an ``--html`` page (see ``docs/replay.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bonsai.cli.import_cmd import (
    ImportRefused,
    add_import_command,
    store_via_daemon,
)
from bonsai.cli.import_cmd import cmd_import as import_files
from bonsai.cli.replay_table import Progress, corpus_table, total_json
from bonsai.cli.terminal_text import shown, terminal_json
from bonsai.core.replay.corpus_html import render_corpus_html
from bonsai.core.replay.report import ReplayReport, render_html, report_json
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.importers import FORMATS, ImportFormatError
from bonsai.services.replay import (
    DEFAULT_MODEL,
    DatabaseMissing,
    open_readonly,
    recall,
    replay,
    stored_source,
)
from bonsai.services.replay.corpus import (
    ConfigSpec,
    FileResult,
    RunResult,
    config_of,
    recording_files,
    replay_corpus,
    total_of,
)
from bonsai.services.replay.source import ReplaySource
from bonsai.services.store.db import StoreError
from bonsai.services.store.sessions import SessionStore, UnknownSession
from bonsai.services.workspace import workspace_key

IMPORT_METHOD = "bonsai/session/import"
METHOD_NOT_FOUND = -32601
Command = Callable[[argparse.Namespace], int]


class CliError(Exception):
    """A failure with a message for the user."""


def _guarded(name: str, command: Command) -> Command:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (CliError, ImportFormatError, DatabaseMissing, UnknownSession, StoreError) as exc:
            print(shown(f"bonsai {name}: {exc}"), file=sys.stderr)
            return 1
        except ValueError as exc:  # bad input the parser could not catch
            print(shown(f"bonsai {name}: {exc}"), file=sys.stderr)
            return 1

    return run


# ------------------------------------------------------------------ import
def cmd_import(args: argparse.Namespace) -> int:
    """``bonsai import`` (see :mod:`bonsai.cli.import_cmd`)."""
    return import_files(args)


# ------------------------------------------------------------------ replay
def _source(args: argparse.Namespace) -> ReplaySource:
    conn = open_readonly(bonsai_home())
    try:
        return stored_source(conn, args.session)
    finally:
        conn.close()


def _spec(args: argparse.Namespace, settings: Any) -> ConfigSpec:
    return ConfigSpec(
        model=args.model,
        window=args.window,
        preset=args.preset,
        policy="none" if args.no_manage else args.policy,
        cache_read_price=args.cache_read_price,
        context=settings.context,
        tool_output=settings.tool_output,
        user_models=dict(settings.providers.models),
    )


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay recordings (files, folders) or a stored session through the context pipeline."""
    if args.files and args.session:
        raise CliError("give recordings (FILE or DIR …) or --session, not both")
    if not args.files and not args.session:
        raise CliError("give a recording FILE, a folder of recordings, or --session ID")
    loaded = load_settings(bonsai_home(), Path.cwd())
    for problem in loaded.problems:
        print(shown(f"bonsai replay: settings: {problem}", newlines=False), file=sys.stderr)
    spec = _spec(args, loaded.settings)
    config = config_of(spec)  # a bad window or model fails here, before any work
    if args.session:
        source = _source(args)
        report = replay(source, config)
        result = RunResult(
            source=f"session {args.session}",
            run=0,
            runs=1,
            title=source.title,
            format="stored",
            report=report,
            raw_cached=0,
        )
        return _emit(args, [result], [], spec, single=source)
    files = recording_files([Path(f) for f in args.files])
    if not files:
        raise CliError(f"no recordings under {', '.join(args.files)}")
    bar = Progress(len(files), enabled=not args.no_progress)
    results = replay_corpus(
        files, spec, run=args.run, fmt=args.format, jobs=args.jobs, progress=bar.advance
    )
    bar.close()
    runs = [r for f in results for r in f.runs]
    errors = [f for f in results if f.error is not None]
    if not runs:
        raise CliError("nothing replayed: " + "; ".join(f.error or "" for f in errors))
    if len(runs) == 1 and len(files) == 1 and not args.no_store:
        runs = [_stored(args, files[0], runs[0])]
    return _emit(args, runs, errors, spec)


def _stored(args: argparse.Namespace, path: Path, result: RunResult) -> RunResult:
    """Store the one replayed recording as a session, so ``--session`` can replay it again."""
    try:
        session_id = store_via_daemon(bonsai_home(), path, args.format, result.run, Path.cwd())
    except ImportRefused as exc:
        raise CliError(str(exc)) from None
    report = result.report.model_copy(update={"session_id": session_id})
    return replace(result, report=report)


def _emit(
    args: argparse.Namespace,
    runs: list[RunResult],
    errors: list[FileResult],
    spec: ConfigSpec,
    single: ReplaySource | None = None,
) -> int:
    total = total_of(runs)
    if args.html:
        page = (
            render_html(runs[0].report)
            if len(runs) == 1
            else render_corpus_html(
                [(r.name, r.title, r.report) for r in runs], title=_corpus_title(args)
            )
        )
        Path(args.html).write_text(page, encoding="utf-8")
    if args.json:
        for r in runs:
            line = {"kind": "run", "source": r.source, "run": r.run, "runs": r.runs}
            line |= {"title": r.title, "format": r.format, "warnings": list(r.warnings)}
            line |= {"report": json.loads(report_json(r.report))}
            print(terminal_json(line))
        for f in errors:
            print(json.dumps({"kind": "error", "source": f.source, "error": f.error}))
        print(json.dumps({"kind": "total", **total_json(total, len(runs), spec.cache_read_price)}))
        return 0
    for f in errors:
        print(shown(f"bonsai replay: skipped {f.source}: {f.error}"), file=sys.stderr)
    if len(runs) == 1:
        print_report(runs[0], args, spec)
    else:
        print(shown("\n".join(corpus_table(runs, total, spec.cache_read_price))))
    return 0


def _corpus_title(args: argparse.Namespace) -> str:
    return "bonsai replay: " + ", ".join(Path(f).name or f for f in args.files)


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _header(result: RunResult, args: Any, spec: ConfigSpec) -> list[str]:
    report = result.report
    preset = args.preset or spec.context.preset
    mode = "no management" if args.no_manage else f"{args.policy}, preset {preset}"
    title = result.title or "(untitled)"
    where = f"run {result.run + 1} of {result.runs} · " if result.runs > 1 else ""
    return [
        f"bonsai replay: {title} — session {report.session_id or '(not stored)'}",
        f"  {where}{report.turns} model calls · window {report.window:,} "
        f"(usable {report.usable_window:,}) · {mode} · summaries: deterministic fallback (offline)",
    ]


def _table(report: ReplayReport, price: float) -> list[str]:
    turns = report.per_turn
    raw_fit = sum(t.raw_fits for t in turns) / len(turns) if turns else 1.0
    raw_peak = max((t.raw_input_tokens for t in turns), default=0)
    cached = f"{report.cached_input_tokens:,} ({_pct(report.cache_hit_fraction)})"
    rows = [
        ("input tokens", f"{report.raw_input_tokens:,}", f"{report.managed_input_tokens:,}"),
        ("saved", "", _pct(report.saved_fraction)),
        ("cache-eligible", "", cached),
        ("cost ratio", "1.000", f"{report.cost_ratio:.3f} (cache reads at {price:g})"),
        ("calls that fit", _pct(raw_fit), _pct(report.fit_fraction)),
        ("peak context", f"{raw_peak:,}", f"{report.peak_context_tokens:,}"),
    ]
    lines = [f"  {'':<16}{'raw':>14}  managed"]
    lines += [f"  {label:<16}{raw:>14}  {managed}" for label, raw, managed in rows]
    return lines


def _footer(report: ReplayReport) -> list[str]:
    events = ", ".join(f"{k} ×{v}" for k, v in report.events.items()) or "none"
    lines = [
        f"  rewrites {report.rewrites}; events: {events}",
        f"  pipeline p50 {report.pipeline_ms_p50:.2f} ms, p95 {report.pipeline_ms_p95:.2f} ms",
    ]
    if report.timing:
        lines.append(f"  call times: {report.timing}")
    if report.priced is not None:
        p = report.priced
        lines.append(
            f"  priced ({p.model}): raw ${p.raw_cost_usd:.4f}, managed ${p.managed_cost_usd:.4f}"
        )
    return lines


def _turn_lines(report: ReplayReport) -> list[str]:
    lines = []
    for t in report.per_turn:
        fits = "" if t.fits else "  DOES NOT FIT"
        raw = "" if t.raw_fits else " (raw overflows)"
        lines.append(
            f"  {t.step:>4} raw {t.raw_input_tokens:>8,}{raw} managed "
            f"{t.managed_input_tokens:>8,} cached {t.cached_input_tokens:>8,}{fits}"
            f"  {'; '.join(t.events)}"
        )
    return lines


def print_report(result: RunResult, args: Any, spec: ConfigSpec) -> None:
    report = result.report
    lines = _header(result, args, spec) + _table(report, args.cache_read_price)
    lines += _footer(report)
    if args.turns:
        lines += _turn_lines(report)
    for warning in result.warnings:
        lines.append(f"  note: {warning}")
    print(shown("\n".join(lines)))  # the title and the notes quote the recording


# ------------------------------------------------------------------ recall
def cmd_recall(args: argparse.Namespace) -> int:
    """Search a stored session's messages: ``--session``'s, else the workspace's latest
    (the session ``bonsai chat`` and ``bonsai ctx`` pick there)."""
    conn = open_readonly(bonsai_home())
    try:
        session = args.session or _latest_session(conn, args.workspace)
        hits = recall(conn, session, args.query, args.limit)
    finally:
        conn.close()
    if not args.session:
        print(f"(session {session})", file=sys.stderr)
    if args.json:
        print(json.dumps({"results": [h.model_dump(by_alias=True) for h in hits]}, indent=2))
        return 0
    if not hits:
        print(f"no match for {args.query!r} in session {session}")
    for n, hit in enumerate(hits, 1):
        snippet = shown(hit.snippet, newlines=False)
        print(f"{n:>3}. {hit.message_id} [{hit.role}] score {hit.score:.2f}: {snippet}")
    return 0


def _latest_session(conn: Any, workspace: str) -> str:
    folder = workspace_key(workspace)
    sessions = SessionStore(conn).list_sessions(folder)
    if not sessions:
        raise CliError(
            f"no session for {folder}; start one with `bonsai chat`, or pass --session ID"
        )
    return sessions[0].session_id


# ------------------------------------------------------------------ wiring
def add_replay_commands(sub: Any) -> None:
    """Register ``import``, ``replay`` and ``recall`` on the console script's subparsers."""
    imp = add_import_command(sub, ("auto", *FORMATS))
    imp.set_defaults(func=_guarded("import", cmd_import))

    rep = sub.add_parser(
        "replay", help="replay recordings (files or folders) through the context pipeline, offline"
    )
    rep.add_argument(
        "files", metavar="PATH", nargs="*", help="recordings, or folders of them (or --session)"
    )
    rep.add_argument("--session", metavar="ID", help="replay a stored session instead")
    rep.add_argument(
        "--format",
        default="auto",
        choices=("auto", *FORMATS),
        help="the recordings' format (default: detected)",
    )
    rep.add_argument(
        "--run", type=int, default=None, metavar="K", help="only run K (0-based) of each file"
    )
    rep.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"model to account for (default {DEFAULT_MODEL})"
    )
    rep.add_argument(
        "--window", type=_positive, metavar="TOKENS", help="replay as if the window were this size"
    )
    rep.add_argument("--preset", choices=("keep", "balanced", "save"), help="context preset")
    rep.add_argument(
        "--policy", choices=("managed", "naive"), default="managed", help=argparse.SUPPRESS
    )
    rep.add_argument(
        "--no-manage", action="store_true", help="disable every stage (reproduces raw)"
    )
    rep.add_argument(
        "--offline", action="store_true", default=True, help="deterministic summaries (default)"
    )
    rep.add_argument(
        "--cache-read-price",
        type=_fraction,
        default=0.1,
        metavar="P",
        help="cached input price as a fraction of normal input (default 0.1)",
    )
    rep.add_argument(
        "--no-store",
        action="store_true",
        help="do not store a single replayed recording as a session",
    )
    rep.add_argument(
        "--jobs",
        type=_positive,
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="worker processes for a corpus (default: up to 2)",
    )
    rep.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    rep.add_argument("--json", action="store_true", help="one JSON line per run, then the total")
    rep.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report")
    rep.add_argument("--turns", action="store_true", help="also print one line per model call")
    rep.set_defaults(func=_guarded("replay", cmd_replay))

    rec = sub.add_parser("recall", help="search a stored session's messages")
    rec.add_argument(
        "--session", metavar="ID", help="the session to search (default: latest for the workspace)"
    )
    rec.add_argument("--workspace", default=".", help="workspace whose latest session to search")
    rec.add_argument("query", help="words to search its messages for")
    rec.add_argument(
        "--limit", type=_positive, default=10, help="at most this many hits (default 10)"
    )
    rec.add_argument("--json", action="store_true", help="print the hits as JSON")
    rec.set_defaults(func=_guarded("recall", cmd_recall))


def _format_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        default="auto",
        choices=("auto", *FORMATS),
        help="the recording's format (default: detected)",
    )
    parser.add_argument(
        "--run", type=int, default=0, metavar="K", help="0-based run of a multi-run file"
    )


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text}")
    return value
