"""The map's file order fuses three lanes (the text's words, what it names, the
graph's PageRank) by reciprocal rank: a hub module every file uses no longer
leads a map about something else, and the order is the same bytes in every
process, whatever the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import fusion
from bonsai.services.repomap.fusion import quoted_phrases

SCHEDULER = '''\
from pkg.core import core_helper


def next_slot(calendar, when):
    """Pick the earliest free appointment after a daylight saving transition,
    so that a meeting booked across the clock change does not shift by an hour."""
    return core_helper(calendar)[when]
'''

ISSUE = (
    "Meetings booked across the daylight saving clock change end up one hour late; "
    "the earliest free appointment should be picked."
)
HUB = "pkg/core.py"  # every module of write_repo imports it
HUB_DOC = '''"""Shared helpers: every module uses them (a clock, an hour, a booked change)."""

'''


@pytest.fixture
def hub_repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "repo")
    (root / "pkg" / "unit_m.py").write_text(SCHEDULER)
    hub = root / HUB
    hub.write_text(HUB_DOC + hub.read_text())
    return root


def _order(make_service: ServiceFactory, root: Path, issue: str) -> list[str]:
    return [f.path for f in make_service(root).get(tokens=1024, mentions=issue).files]


def test_the_file_the_issue_describes_leads_not_the_hub(
    hub_repo: Path, make_service: ServiceFactory
) -> None:
    order = _order(make_service, hub_repo, ISSUE)
    assert order[0] == "pkg/unit_m.py"
    assert HUB in order  # PageRank still counts, as a prior


def test_without_a_text_the_hub_leads(hub_repo: Path, make_service: ServiceFactory) -> None:
    """PageRank alone (nothing said yet) puts the hub first: the text's lanes are
    what moves the described file ahead of it (the test above can fail)."""
    assert _order(make_service, hub_repo, "")[0] == HUB


def test_a_traceback_frame_leads_the_map(hub_repo: Path, make_service: ServiceFactory) -> None:
    issue = (
        "Planning crashes:\n\nTraceback (most recent call last):\n"
        '  File "/srv/app/venv/lib/python3.11/site-packages/pkg/mod_041.py", line 9, in f\n'
        "    return x\nKeyError: 'when'\n"
    )
    assert _order(make_service, hub_repo, issue)[0] == "pkg/mod_041.py"


def _cli_map(root: Path, cache: Path, seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    cmd = [sys.executable, "-m", "bonsai", "repomap", str(root), "--tokens", "700"]
    cmd += ["--mention", ISSUE, "--cache", str(cache), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=True)
    return proc.stdout


def test_the_fused_map_is_byte_identical_across_hash_seeds(hub_repo: Path, tmp_path: Path) -> None:
    first = json.loads(_cli_map(hub_repo, tmp_path / "a.db", "1"))
    second = json.loads(_cli_map(hub_repo, tmp_path / "b.db", "987"))
    assert first["text"] == second["text"]
    assert first["files"] == second["files"]  # paths, ranks and tags
    assert first["files"][0]["path"] == "pkg/unit_m.py"


def test_quoted_messages_are_read_from_the_issue() -> None:
    """The quoted-messages lane (off by default, measured by the corpus bench)
    reads quoted strings and ``...Error:`` lines, linearly on hostile text."""
    issue = (
        'It fails with "refusing to overwrite an existing member" and `x`\n'
        "ValueError: calendar slot is already booked\n"
    )
    assert quoted_phrases(issue) == [
        "refusing to overwrite an existing member",
        "calendar slot is already booked",
    ]
    assert quoted_phrases("\n" * 65536 + '"' * 65536) == []


def test_the_quoted_messages_lane_finds_the_file_of_the_string(
    hub_repo: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    (hub_repo / "pkg" / "mod_007.py").write_text(
        'def check(slot):\n    raise ValueError("appointment overlaps a booked meeting")\n'
    )
    monkeypatch.setattr(fusion, "W_PHRASES", 3.0)
    issue = 'Booking fails: "appointment overlaps a booked meeting" though the slot is free.'
    assert _order(make_service, hub_repo, issue)[0] == "pkg/mod_007.py"
