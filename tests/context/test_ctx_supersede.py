"""The session's superseded-read tracker (fed only new items) answers exactly as the
whole-log scan does, on any log, growing or switched to another branch."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.context import AssemblyMemo, Item
from bonsai.core.context.candidates import superseded_reads
from bonsai.core.context.reuse import REUSE_PREFIX
from bonsai.core.context.supersede import Supersession, superseded_of
from bonsai.domain import Evidence, Message

PATHS = ("a.py", "b.py", "c.py")


@st.composite
def tool_message(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["read", "read", "read", "edit", "write", "search"]))
    path = draw(st.sampled_from(PATHS))
    start = draw(st.none() | st.integers(1, 50))
    end = None if start is None else draw(st.none() | st.integers(start, 120))
    ok = draw(st.booleans() | st.just(True))
    pointer = kind == "read" and draw(st.integers(0, 5)) == 0
    content = f"{REUSE_PREFIX}m1] pointer" if pointer else f"{kind} {path} {start}-{end}"
    evidence = Evidence(kind=kind, path=path, start_line=start, end_line=end, ok=ok)
    role = draw(st.sampled_from(["tool", "tool", "tool", "assistant"]))
    if role == "assistant":
        return Message(role="assistant", content="next")
    return Message(role="tool", content=content, tool_call_id="c", evidence=evidence)


def _items(messages: list[Message], prefix: str = "m") -> list[Item]:
    return [Item(id=f"{prefix}{i}", seq=i, turn=1, message=m) for i, m in enumerate(messages)]


@settings(max_examples=100, deadline=None)
@given(st.lists(tool_message(), max_size=30), st.lists(tool_message(), max_size=10))
def test_the_tracker_matches_the_whole_log_scan(
    messages: list[Message], branch: list[Message]
) -> None:
    tracker = Supersession()
    items = _items(messages)
    for n in range(len(items) + 1):  # the log grows one message per call
        assert tracker.update(items[:n]) == superseded_reads(items[:n])
    # another branch from the middle: the tracker starts again, still exact
    switched = items[: len(items) // 2] + _items(branch, prefix="b")
    assert tracker.update(switched) == superseded_reads(switched)
    # an earlier message edited in place (same id, other content)
    if items:
        edited = [Item(id=items[0].id, seq=0, turn=1, message=Message(role="user", content="x"))]
        edited += items[1:]
        assert tracker.update(edited) == superseded_reads(edited)


def test_an_answer_given_out_never_changes_when_the_log_grows() -> None:
    read = Evidence(kind="read", path="a.py")
    first = Message(role="tool", content="one", tool_call_id="c1", evidence=read)
    again = Message(role="tool", content="two", tool_call_id="c2", evidence=read)
    edit = Evidence(kind="edit", path="a.py")
    change = Message(role="tool", content="ok", tool_call_id="c3", evidence=edit)
    memo = AssemblyMemo()
    items = _items([first, again, change])
    early = superseded_of(items[:2], memo)
    assert early == {"m0": "superseded: `a.py` was read again later (m1)"}
    late = superseded_of(items, memo)
    assert early == {"m0": "superseded: `a.py` was read again later (m1)"}
    assert late == {
        "m0": "superseded: `a.py` was changed later (m2)",
        "m1": "superseded: `a.py` was changed later (m2)",
    }
