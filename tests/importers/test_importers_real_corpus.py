"""Every recorded session under the shared trajectories folder imports sanely.

The folder is read-only test data outside the repository (``../shared/
trajectories`` from the project root, or ``$BONSAI_TRAJECTORIES``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from importer_helpers import assert_paired

from bonsai.domain import content_hash
from bonsai.services.importers import ImportedSession, import_file

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))
WINDOW_COMMANDS = {"open", "goto", "scroll_up", "scroll_down"}


def _cases() -> list[object]:
    if not CORPUS.is_dir():
        reason = f"no recorded sessions at {CORPUS} (set BONSAI_TRAJECTORIES)"
        return [pytest.param(None, 0, marks=pytest.mark.skip(reason=reason))]
    cases: list[object] = []
    for path in sorted(p for p in CORPUS.rglob("*") if p.suffix in (".traj", ".jsonl")):
        runs = import_file(path).runs
        cases.extend(pytest.param(path, run, id=f"{path.name}#{run}") for run in range(runs))
    return cases


@pytest.mark.parametrize(("path", "run"), _cases())
def test_recorded_session_imports_sanely(path: Path, run: int) -> None:
    session = import_file(path, run=run)
    assert any(m.role == "assistant" for m in session.messages)
    assert_paired(session.messages)
    assert not [w for w in session.warnings if "answers no earlier call" in w]
    _check_read_evidence(session)
    if session.format == "swe-agent":
        _check_swe_agent_bytes(path, session)


def _check_read_evidence(session: ImportedSession) -> None:
    calls = {c.id: c for m in session.messages for c in m.tool_calls}
    for message in session.messages:
        if message.role != "tool":
            continue
        call = calls[message.tool_call_id or ""]
        evidence = message.evidence
        if call.name in WINDOW_COMMANDS or '"command": "view"' in call.arguments:
            assert evidence is not None and evidence.kind in ("read", "list"), call
        if evidence is not None and evidence.kind == "read" and evidence.ok:
            assert evidence.content_hash == content_hash(message.content)


def _check_swe_agent_bytes(path: Path, session: ImportedSession) -> None:
    history = json.loads(path.read_text(encoding="utf-8"))["history"]
    expected = [h["content"] for h in history]
    assert [m.content for m in session.messages] == expected


def test_the_corpus_yields_reads_of_every_kind_of_recording() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"no recorded sessions at {CORPUS}")
    reads: dict[str, int] = {}
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".traj", ".jsonl"):
            continue
        session = import_file(path)
        found = [m for m in session.messages if m.evidence and m.evidence.kind == "read"]
        reads[session.format] = reads.get(session.format, 0) + len(found)
    assert reads.get("swe-agent", 0) >= 5
    assert reads.get("openhands", 0) >= 5
