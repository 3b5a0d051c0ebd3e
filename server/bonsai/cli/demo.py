"""``bonsai demo``: a whole coding session offline, no API key, nothing to configure.

It starts the provider simulator and a private daemon in a temporary home,
runs two scripted tasks on a small sample project (grep, read, edit, run the
tests), streams what happens, then prints where the context went.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bonsai.cli.client import DaemonClient
from bonsai.cli.ctx_table import print_ledger
from bonsai.cli.demo_script import TASKS, demo_script, make_workspace
from bonsai.cli.render import TurnPrinter
from bonsai.sim.runner import SimulatorThread


def _run_task(client: DaemonClient, printer: TurnPrinter, session_id: str, text: str) -> str:
    print(f"\n\033[1m> {text}\033[0m" if printer.color else f"\n> {text}")
    turn_id = client.request("bonsai/chat/send", {"sessionId": session_id, "text": text})["turnId"]
    while turn_id not in printer.finished:
        client.pump()
    return printer.finished[turn_id]


def run_demo(keep: bool = False) -> int:
    root = Path(tempfile.mkdtemp(prefix="bonsai-demo-"))
    home, workspace = root / "home", make_workspace(root / "stats")
    printer = TurnPrinter()
    with SimulatorThread(demo_script()) as sim:
        os.environ.update(
            {
                "BONSAI_HOME": str(home),
                "BONSAI_PROVIDER": "sim",
                "BONSAI_BASE_URL": sim.openai_base_url,
                "BONSAI_MODEL": "gpt-4o-mini",
            }
        )
        print(f"bonsai demo: simulator on {sim.base_url}, workspace {workspace}")
        client = DaemonClient.connect(home)
        try:
            status = _session(client, printer, workspace)
        finally:
            client.request("bonsai/daemon/stop")
            client.close()
    if keep:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return status


def _session(client: DaemonClient, printer: TurnPrinter, workspace: Path) -> int:
    client.on_notification = lambda method, params: (
        printer.event(params) if method == "bonsai/chat/event" else None
    )

    def on_request(method: str, params: dict[str, Any]) -> Any:
        return printer.approval(params, approve=True)

    client.on_request = on_request
    created = client.request("bonsai/session/create", {"workspace": str(workspace)})
    session_id = created["sessionId"]
    client.request("bonsai/session/attach", {"sessionId": session_id})
    outcomes = [_run_task(client, printer, session_id, task) for task in TASKS]
    ledger = client.request("bonsai/ctx/get", {"sessionId": session_id, "view": "turns"})
    print()
    print_ledger(ledger, limit=14)
    tests_pass = "median" in (workspace / "calc.py").read_text()
    ok = all(o == "done" for o in outcomes) and tests_pass
    print("\ndemo finished: " + ("both tasks done" if ok else "something failed (see above)"))
    return 0 if ok else 1
