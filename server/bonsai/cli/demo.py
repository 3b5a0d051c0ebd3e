"""``bonsai demo``: a whole coding session offline, no API key, nothing to configure.

It starts the provider simulator and a private daemon in a new home, gives the
session a small window (12,000 tokens) so that context management has to
happen, and runs three scripted tasks on a sample project. As they happen it
shows the read-reuse pointer, GC stubs with what they saved, a fold with the
rolling summary's headings, the first episode archived when the next task
starts, and a recall that brings an archived detail back. It ends with the
before/after table (the same session replayed offline with and without
management), a per-request fill chart, and the commands that open the
session's ledger and its HTML replay report. The home is kept.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bonsai.cli.client import DaemonClient
from bonsai.cli.ctx_table import fill_bar
from bonsai.cli.demo_report import replay_lines
from bonsai.cli.demo_script import MODEL, TASKS, demo_script, make_workspace
from bonsai.cli.interact import ClientRequests
from bonsai.cli.render import TurnPrinter
from bonsai.cli.stop import StillRunning, stop_and_wait
from bonsai.sim.runner import SimulatorThread

WINDOW = 8_000
RESERVE = 1_000


def demo_config(base_url: str) -> dict[str, Any]:
    """The demo home's config: the simulator, a 12k-window model, eager thresholds."""
    return {
        "providers": {
            "provider": "sim",
            "baseUrl": base_url,
            "model": MODEL,
            "models": {
                MODEL: {
                    "family": "openai",
                    "contextWindow": WINDOW,
                    "maxOutput": RESERVE,
                    "tokenizer": "o200k_base",
                    "priceInput": 0.15,
                    "priceCachedInput": 0.075,
                    "priceOutput": 0.6,
                }
            },
        },
        "context": {
            "outputReserve": RESERVE,
            "summaryMode": "deterministic",
            "gcTrigger": 0.45,
            "compactTrigger": 0.8,
            "compactTarget": 0.45,
            "minRewriteTokens": 300,
            "minRewritePayback": 0.8,
            "minRewriteFraction": 0.03,
            "minStubTokens": 120,
            "keepRecentGroups": 2,
            "keepUserMessages": 1,
        },
        "repomap": {"tokens": 256, "tokensNoFiles": 384},
        "memory": {"enabled": False},
    }


@dataclass
class Stage:
    """What the demo has shown so far (the checks at the end, and the tests, read it)."""

    seen: set[str] = field(default_factory=set)
    fills: list[tuple[int, int, int]] = field(default_factory=list)  # (request, used, usable)
    folds: list[str] = field(default_factory=list)  # summary node ids to show


class DemoPrinter(TurnPrinter):
    """A turn printer that also names each stage of context management as it happens."""

    def __init__(self) -> None:
        super().__init__()
        self.stage = Stage()

    def _note(self, mark: str, text: str) -> None:
        bold = f"\033[1;36m{mark} {text}\033[0m" if self.color else f"{mark} {text}"
        self._line(f"  {bold}")

    def event(self, params: dict[str, Any]) -> None:
        super().event(params)
        result = params.get("result") or ""
        if params.get("kind") == "toolResult" and result.startswith("[reused previous read"):
            self.stage.seen.add("reuse")
            self._note("↺", "read reuse: the re-read of an unchanged file became a pointer")
        recalled = "episode 1," in result or "episode 1 " in result
        if params.get("kind") == "toolResult" and params.get("name") == "recall" and recalled:
            self.stage.seen.add("recall")
            self._note("⟲", "recall: the archived test failure is back in the context")

    def ctx_changed(self, params: dict[str, Any]) -> None:
        used, usable = int(params.get("used", 0)), int(params.get("usable", 1))
        self.stage.fills.append((len(self.stage.fills) + 1, used, usable))
        for event in params.get("events") or []:
            self._ctx_event(event)

    def _ctx_event(self, event: dict[str, Any]) -> None:
        kind, detail = event.get("kind"), event.get("detail", "")
        if kind == "stub":
            self.stage.seen.add("stub")
            saved = event.get("tokensBefore")
            size = f" ({saved:,} tokens)" if saved else ""
            self._note("✂", f"GC stub{size}: {detail}")
        elif kind == "gc":
            self.stage.seen.add("gc")
            self._note("✂", f"GC: {detail}")
        elif kind == "fold":
            self.stage.seen.add("fold")
            self._note("⊟", f"fold: {detail}")
            node = str(detail).split(" folded into ")[-1].split(";")[0]
            if node.startswith(("sum", "Σ", "s_", "summary")) or " folded into " in detail:
                self.stage.folds.append(node)
        elif kind == "compaction":
            self._note("⊟", f"compaction: {detail}")
        elif kind == "archive":
            self.stage.seen.add("archive")
            self._note("▣", f"archived {detail}")
        elif kind in ("episodes", "restore", "guard"):
            self._note("·", f"{kind}: {detail}")


def _run_task(client: DaemonClient, printer: DemoPrinter, session_id: str, text: str) -> str:
    print(f"\n\033[1m> {text}\033[0m" if printer.color else f"\n> {text}")
    turn_id = client.request("bonsai/chat/send", {"sessionId": session_id, "text": text})["turnId"]
    while turn_id not in printer.finished:
        client.pump()
        while printer.stage.folds:
            _show_summary(client, printer, session_id, printer.stage.folds.pop(0))
    return printer.finished[turn_id]


def _show_summary(client: DaemonClient, printer: DemoPrinter, session_id: str, node: str) -> None:
    try:
        text = client.request("bonsai/ctx/text", {"sessionId": session_id, "nodeId": node})["text"]
    except Exception:  # the fold line above already said what happened
        return
    headings = [line.strip("# ").strip() for line in text.splitlines() if line.startswith("#")]
    if headings:
        printer.stage.seen.add("summary")
        printer.aside(f"    rolling summary headings: {' · '.join(headings)}")


def run_demo() -> int:
    command = this_bonsai()  # before the agent's PATH is set below
    root = Path(tempfile.mkdtemp(prefix="bonsai-demo-"))
    home, workspace = root / "home", make_workspace(root / "stats")
    printer = DemoPrinter()
    with SimulatorThread(demo_script()) as sim:
        home.mkdir(parents=True)
        (home / "config.json").write_text(json.dumps(demo_config(sim.openai_base_url), indent=2))
        os.environ["BONSAI_HOME"] = str(home)
        # the agent's `python` is this one, whatever the machine's PATH holds
        bindir = str(Path(sys.executable).parent)
        os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
        for name in ("BONSAI_PROVIDER", "BONSAI_MODEL", "BONSAI_BASE_URL"):
            os.environ.pop(name, None)  # the demo's own config decides
        print(
            f"bonsai demo: simulator on {sim.base_url}, workspace {workspace}\n"
            f"  model {MODEL}: window {WINDOW:,} tokens, {RESERVE:,} kept for the reply, so "
            f"{WINDOW - RESERVE:,} usable — small on purpose, with eager thresholds (GC above "
            "45%, compaction above 80%), so a short session shows every stage"
        )
        client = DaemonClient.connect(home)
        try:
            session_id, outcomes = _session(client, printer, workspace)
        finally:
            client.close()
            _stop(home)
    return _finish(root, home, workspace, session_id, outcomes, printer.stage, command)


def _session(client: DaemonClient, printer: DemoPrinter, workspace: Path) -> tuple[str, list[str]]:
    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "bonsai/chat/event":
            printer.event(params)
        elif method == "bonsai/ctx/changed":
            printer.ctx_changed(params)
        elif method == "$/progress":
            printer.progress(params)

    client.on_notification = on_notification
    client.on_request = ClientRequests(printer, auto=True)
    created = client.request("bonsai/session/create", {"workspace": str(workspace)})
    session_id = str(created["sessionId"])
    client.request("bonsai/session/attach", {"sessionId": session_id})
    return session_id, [_run_task(client, printer, session_id, task) for task in TASKS]


def _stop(home: Path) -> None:
    """Stopped and gone before the closing lines: the ledger command they print starts anew."""
    try:
        stop_and_wait(home)
    except StillRunning as still:
        print(f"bonsai demo: {still}", file=sys.stderr)


def fill_chart(fills: list[tuple[int, int, int]], width: int = 24) -> list[str]:
    lines = ["context fill per model request (live, of the usable window):"]
    for number, used, usable in fills:
        percent = 100 * used / usable if usable else 0.0
        lines.append(f"  {number:>3} {fill_bar(percent, width)} {percent:5.1f}%  {used:>6,}")
    return lines


def _finish(
    root: Path,
    home: Path,
    workspace: Path,
    session_id: str,
    outcomes: list[str],
    stage: Stage,
    command: str,
) -> int:
    print()
    report = root / "replay.html"
    print("\n".join(replay_lines(home, session_id, MODEL, WINDOW, report)))
    print()
    print("\n".join(fill_chart(stage.fills)))
    wanted = {
        "reuse": "read reuse",
        "stub": "GC stubs",
        "fold": "fold",
        "archive": "episode archived",
        "recall": "recall",
    }
    missing = [label for key, label in wanted.items() if key not in stage.seen]
    tests_pass = "def median" in (workspace / "calc.py").read_text()
    ok = all(o == "done" for o in outcomes) and tests_pass
    print()
    print(
        "demo finished: "
        + ("all three tasks done" if ok else "something failed (see above)")
        + (f"; not shown this time: {', '.join(missing)}" if missing else "")
    )
    ledger = f"BONSAI_HOME={shlex.quote(str(home))} {command} ctx --session {session_id}"
    print(f"  the session's ledger:  {ledger}")
    print(f"  the replay report:     {report}")
    print(f"  (the demo's files are kept in {root}; delete the folder when done)")
    return 0 if ok else 1


def this_bonsai(argv0: str | None = None) -> str:
    """The shell words that run this bonsai: ``bonsai`` when that is it on ``PATH``, else
    its path (``./run demo`` runs ``.venv/bin/bonsai``, which a fresh shell does not have
    on ``PATH``), or ``python -m bonsai`` for a module run."""
    script = Path(argv0 if argv0 is not None else sys.argv[0]).absolute()
    if script.name != "bonsai" or not script.is_file():
        return f"{shlex.quote(sys.executable)} -m bonsai"
    found = shutil.which("bonsai")
    if found is not None and Path(found).resolve() == script.resolve():
        return "bonsai"
    return shlex.quote(str(script))
