"""Message timestamps: filled where a format records them, absent where it does not,
and used by the replay for its cache-expiry clock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import recordings

from bonsai.services.importers import ImportedSession, import_file, parse_text
from bonsai.services.importers.stamps import parse_time
from bonsai.services.replay import build_config, replay_steps, store_imported, stored_source
from bonsai.services.replay.stored import imported_source
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore

T0 = 1_761_699_578.317  # 2025-10-29T00:59:38.317Z


def _iso(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _claude_code(pause_before_reply: float) -> str:
    """A user task, a read, its result, then after ``pause_before_reply`` s a reply."""

    def entry(n: int, kind: str, message: object, at: float) -> dict[str, object]:
        parent = f"u{n - 1}" if n else None
        return {
            "uuid": f"u{n}",
            "parentUuid": parent,
            "type": kind,
            "message": message,
            "timestamp": _iso(at),
            "sessionId": "s",
        }

    read = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/a.py"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1\n"}
    rows = [
        entry(0, "user", {"role": "user", "content": "Fix a.py"}, T0),
        entry(1, "assistant", {"id": "m1", "role": "assistant", "content": [read]}, T0 + 4),
        entry(2, "user", {"role": "user", "content": [result]}, T0 + 5),
        entry(
            3,
            "assistant",
            {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Done."}]},
            T0 + 5 + pause_before_reply,
        ),
        entry(4, "user", {"role": "user", "content": "Thanks, and b.py?"}, T0 + 900),
        entry(
            5,
            "assistant",
            {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "Also done."}]},
            T0 + 906,
        ),
    ]
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def test_claude_code_messages_carry_their_entries_times() -> None:
    session = parse_text(_claude_code(2.0), "claude-code")
    assert [m.role for m in session.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert session.times == pytest.approx([T0, T0 + 4, T0 + 5, T0 + 7, T0 + 900, T0 + 906])


def test_codex_rollout_lines_give_each_message_its_time() -> None:
    session = parse_text(recordings.codex(), "codex")
    assert session.times is not None and len(session.times) == len(session.messages)
    assert session.times[0] == pytest.approx(T0)
    assert session.times[-1] == pytest.approx(T0 + 21.683)  # the last line's own time


def test_openhands_events_with_times_and_without() -> None:
    events = json.loads(recordings.openhands_events())
    assert parse_text(json.dumps(events), "openhands").times is None  # none recorded
    for n, event in enumerate(events):
        event["timestamp"] = f"2025-04-30T16:32:{10 + 3 * n:02d}.500000"  # naive: UTC
    session = parse_text(json.dumps(events), "openhands")
    start = parse_time("2025-04-30T16:32:10.5Z")
    assert start is not None and session.times is not None
    assert session.times[0] == pytest.approx(start)  # the system prompt
    assert session.times[-1] == pytest.approx(start + 12)  # the finish action


def test_mini_swe_agent_times_from_extra_and_none_when_absent() -> None:
    doc = json.loads(recordings.mini_swe_v11())
    assert parse_text(json.dumps(doc), "mini-swe-agent").times is None
    for n, message in enumerate(doc["messages"]):
        if n in (2, 5):  # only the model's replies say when (epoch seconds)
            message.setdefault("extra", {})["timestamp"] = T0 + 10 * n
    session = parse_text(json.dumps(doc), "mini-swe-agent")
    # before the first known time: that time; after it: the last known one
    assert session.times == pytest.approx([T0 + 20, T0 + 20, T0 + 20, T0 + 20, T0 + 50])


def test_mini_swe_agent_reply_response_says_when_its_request_went_out() -> None:
    """A reply saved with its provider response (``extra.response.created``) was
    requested then: the message before it (the tool output) gets that time, so the
    replay's idle time between two calls is the provider's own clock."""
    doc = json.loads(recordings.mini_swe_v11())
    doc["messages"][2]["extra"]["response"] = {"created": int(T0) + 100}
    doc["messages"][5]["extra"] = {"response": {"created": int(T0) + 460}}
    session = parse_text(json.dumps(doc), "mini-swe-agent")
    first, second = int(T0) + 100, int(T0) + 460
    # system, task (sent with the first request), reply, tool output (sent at 460), reply
    assert session.times == pytest.approx([first, first, first, second, second])
    rows = replay_steps(imported_source(session), build_config(window=32_000))
    assert {r.timing for r in rows} == {"recording timestamps"}
    idles = [r.bill.idle for r in rows if r.bill is not None]
    assert idles == [None, pytest.approx(360.0)]
    assert rows[1].turn.cached_input_tokens == 0  # past a 5-minute cache: nothing cached


def test_formats_without_times_say_so() -> None:
    assert parse_text(recordings.swe_agent(), "swe-agent").times is None
    assert parse_text(recordings.aider(), "aider").times is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-10-29T00:59:38.317Z", T0),
        ("2025-10-29T01:59:38.317+01:00", T0),
        ("2025-10-29T00:59:38.317", T0),
        (T0, T0),
        (T0 * 1000, T0),  # milliseconds
        ("yesterday", None),
        ("", None),
        (True, None),
        (-5, None),
        (None, None),
    ],
)
def test_timestamp_values(value: object, expected: float | None) -> None:
    assert parse_time(value) == (pytest.approx(expected) if expected is not None else None)


def test_a_session_needs_one_time_per_message() -> None:
    session = parse_text(_claude_code(2.0), "claude-code")
    with pytest.raises(ValueError, match="6 timestamps for 5 messages"):
        ImportedSession.model_validate(
            {**session.model_dump(), "messages": session.model_dump()["messages"][:5]}
        )


def test_the_replay_takes_its_clock_from_the_recording(tmp_path: Path) -> None:
    """The 13-minute pause before the user's second message expires the cache: the
    call after it reads nothing cached on either side; the source is stated."""
    path = tmp_path / "session.jsonl"
    path.write_text(_claude_code(2.0))
    imported = import_file(path)
    rows = replay_steps(imported_source(imported), build_config(window=32_000))
    assert {r.timing for r in rows} == {"recording timestamps"}
    idles = [r.bill.idle for r in rows if r.bill is not None]
    assert idles[0] is None and idles[1] == pytest.approx(5.0) and idles[2] > 300
    assert rows[2].turn.cached_input_tokens == 0 and rows[2].raw_cached == 0
    # stored, the import keeps the recording's times (not the time it was stored)
    store = SessionStore(open_database(tmp_path / "bonsai.db"))
    session_id = store_imported(store, str(tmp_path), imported)
    stored = stored_source(store.conn, session_id)
    assert stored.times == imported_source(imported).times
    again = replay_steps(stored, build_config(window=32_000))
    assert [r.timing for r in again] == [r.timing for r in rows]


def test_a_recording_without_times_is_replayed_on_the_pause_model(tmp_path: Path) -> None:
    path = tmp_path / "run.traj"
    path.write_text(recordings.swe_agent())
    rows = replay_steps(imported_source(import_file(path)), build_config(window=32_000))
    assert rows and all(r.timing.startswith("pause model") for r in rows)
