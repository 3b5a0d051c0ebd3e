"""Episode boundaries come from tool calls, deterministically."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.context import AssemblyMemo, Item
from bonsai.core.context.episodes_stage import spans
from bonsai.core.history.episodes import (
    CARD_MAX_CHARS,
    Segmenter,
    card,
    segment,
    segment_entries,
)
from bonsai.domain import Message, StoredMessage, ToolCall


def log_of(*messages: Message) -> list[StoredMessage]:
    return [
        StoredMessage(message_id=f"m{i}", session_id="s", seq=i, created_at=0.0, message=m)
        for i, m in enumerate(messages, 1)
    ]


def user(text: str) -> Message:
    return Message(role="user", content=text)


def title(t: str, action: str, call_id: str) -> Message:
    args = json.dumps({"title": t, "episode_action": action})
    return Message(
        role="assistant",
        tool_calls=(ToolCall(id=call_id, name="set_session_title", arguments=args),),
    )


def work(call_id: str, path: str = "a.py") -> list[Message]:
    args = json.dumps({"path": path, "old_string": "a", "new_string": "b"})
    return [
        Message(
            role="assistant", tool_calls=(ToolCall(id=call_id, name="edit_file", arguments=args),)
        ),
        Message(role="tool", content="edited", tool_call_id=call_id, name="edit_file"),
    ]


def result(call_id: str) -> Message:
    return Message(role="tool", content="ok", tool_call_id=call_id, name="set_session_title")


def test_new_topic_closes_the_span_at_the_last_user_message() -> None:
    log = log_of(
        user("fix the parser"),
        title("Fix parser", "new_topic", "t1"),
        result("t1"),
        *work("w1", "parser.py"),
        Message(role="assistant", content="Parser fixed."),
        user("now add a CLI flag"),
        title("Add flag", "new_topic", "t2"),
        result("t2"),
        *work("w2", "cli.py"),
    )
    episodes = segment(log)
    assert [e.title for e in episodes] == ["Fix parser", "Add flag"]
    assert episodes[0].closed and not episodes[1].closed
    assert episodes[1].start == "m7", "the new span starts at the user message that began it"
    assert episodes[0].files == ["parser.py"]
    assert episodes[0].outcome == "Parser fixed."


def test_new_topic_without_real_work_only_renames() -> None:
    log = log_of(
        user("hello"),
        title("Greeting", "new_topic", "t1"),
        result("t1"),
        user("let's fix the parser"),
        title("Fix parser", "new_topic", "t2"),
        result("t2"),
    )
    [only] = segment(log)
    assert only.title == "Fix parser" and not only.closed


def test_same_topic_renames_in_place() -> None:
    log = log_of(
        user("fix"),
        title("Fix", "new_topic", "t1"),
        result("t1"),
        *work("w1"),
        title("Fix parser bug", "same_topic", "t2"),
        result("t2"),
    )
    [only] = segment(log)
    assert only.title == "Fix parser bug"


def test_hard_reset_closes_unconditionally() -> None:
    log = log_of(user("a"), Message(role="assistant", content="x"), user("b"))
    episodes = segment(log, resets=[3])
    assert len(episodes) == 2 and episodes[0].closed


def test_card_is_bounded_and_says_how_to_recall() -> None:
    log = log_of(
        user("fix"),
        title("Fix parser", "new_topic", "t1"),
        result("t1"),
        *work("w1", "parser.py"),
        Message(role="assistant", content="done " * 2000),
        user("next"),
        title("Next", "new_topic", "t2"),
        result("t2"),
    )
    first = segment(log)[0]
    text = card(first, tokens_before=12_345)
    assert text.startswith('[Episode archived] #1 "Fix parser"')
    assert len(text) <= CARD_MAX_CHARS
    assert 'recall({"episode": 1})' in text and "parser.py" in text


def test_the_plan_tool_carries_episode_action_too() -> None:
    plan = json.dumps({"todos": [], "title": "Plan B", "episode_action": "new_topic"})
    log = log_of(
        user("fix"),
        *work("w1"),
        user("something else"),
        Message(
            role="assistant", tool_calls=(ToolCall(id="p1", name="todo_write", arguments=plan),)
        ),
    )
    episodes = segment(log)
    assert [e.title for e in episodes] == ["", "Plan B"] and episodes[0].closed
    assert episodes[1].start == "m4"


def test_malformed_arguments_never_make_a_boundary() -> None:
    bad = Message(
        role="assistant",
        tool_calls=(ToolCall(id="t1", name="set_session_title", arguments="{not json"),),
    )
    [only] = segment(log_of(user("a"), *work("w1"), user("b"), bad))
    assert not only.closed


def test_files_come_from_edit_evidence_and_the_task_is_the_first_user_message() -> None:
    from bonsai.domain import Evidence

    edited = Message(
        role="tool",
        content="ok",
        tool_call_id="b1",
        name="bash",
        evidence=Evidence(kind="write", path="gen/out.py"),
    )
    bash = Message(role="assistant", tool_calls=(ToolCall(id="b1", name="bash", arguments="{}"),))
    memory = Message(role="user", content="(memory note)", name="memory")
    [only] = segment(log_of(user("generate it"), memory, bash, edited))
    assert only.files == ["gen/out.py"] and only.task == "generate it"
    text = card(only, tokens_before=10)
    assert "Asked: generate it" in text and "gen/out.py" in text


def test_card_keeps_its_recall_line_whatever_the_sizes() -> None:
    log = log_of(
        user("x" * 5_000),
        title("T" * 500, "new_topic", "t1"),
        result("t1"),
        *[m for i in range(40) for m in work(f"w{i}", f"src/{'deep/' * 20}file{i}.py")],
        Message(role="assistant", content="y" * 5_000),
    )
    [only] = segment(log)
    text = card(only, tokens_before=99_999)
    assert len(text) <= CARD_MAX_CHARS and text.endswith("searches them.")
    small = card(only, 99_999, max_chars=600)
    assert len(small) <= 600 and small.endswith("searches them.")


def test_items_and_the_log_segment_alike() -> None:
    log = log_of(
        user("fix"),
        title("Fix", "new_topic", "t1"),
        result("t1"),
        *work("w1"),
        user("next"),
        title("Next", "new_topic", "t2"),
        result("t2"),
    )
    entries = [(s.message_id, s.seq, s.message) for s in log]
    assert [e.ids for e in segment(log)] == [e.ids for e in segment_entries(entries)]
    assert [e.number for e in segment(log)] == [1, 2]


def _random_log(rng: random.Random, size: int) -> list[Message]:
    """User tasks, title calls that open or keep a topic, real work, answers."""
    out: list[Message] = []
    while len(out) < size:
        roll = rng.random()
        n = len(out)
        if roll < 0.25:
            out.append(user(f"task {n}"))
        elif roll < 0.45:
            out += [
                title(f"T{n}", rng.choice(("new_topic", "same_topic")), f"t{n}"),
                result(f"t{n}"),
            ]
        elif roll < 0.8:
            out += work(f"w{n}", rng.choice(("a.py", "b.py")))
        else:
            out.append(Message(role="assistant", content=f"done {n}"))
    return out[:size]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_segmentation_fed_in_pieces_gives_what_one_pass_gives(seed: int) -> None:
    """However the log arrives (with resets, continuing a resumed span), the episodes
    after each piece are those of one pass over everything fed so far."""
    rng = random.Random(seed)
    log = log_of(*_random_log(rng, rng.randint(0, 40)))
    entries = [(s.message_id, s.seq, s.message) for s in log]
    resets = sorted(rng.sample(range(1, 45), rng.randint(0, 3)))
    resume = None
    if rng.random() < 0.4:
        opened = segment_entries([(f"old{i}", -5 + i, user("before")) for i in range(3)])[-1]
        resume = opened.resumed()
        resume.work = rng.randint(0, 2)
        entries = [("u0", 0, user("go on")), *entries]  # a window starts at a user message
    segmenter = Segmenter(resets, resume)
    fed = 0
    while fed < len(entries):
        step = rng.randint(1, 6)
        segmenter.feed(entries[fed : fed + step])
        fed = min(fed + step, len(entries))
        assert segmenter.episodes() == segment_entries(entries[:fed], resets, resume)
    for episode in segmenter.episodes():
        episode.ids.append("changed by a caller")  # copies: the pass keeps its own
    assert segmenter.episodes() == segment_entries(entries, resets, resume)


def test_a_sessions_episodes_pass_goes_on_over_its_new_items_only() -> None:
    """With a memo the items seen before are not segmented again; any other log (an
    edit, another branch, another resumed span) starts the pass again."""
    rng = random.Random(11)
    messages = _random_log(rng, 60)
    items = [Item(id=f"m{i}", seq=i, turn=1, message=m) for i, m in enumerate(messages, 1)]
    memo = AssemblyMemo()
    for end in (10, 25, 26, 60):
        assert spans(items[:end], memo=memo) == spans(items[:end])
    assert len(memo.segments.segmenter.log) == 60, "each item fed once"
    kept = memo.segments.segmenter
    edited = items[30].model_copy(update={"message": user("edited")})
    branch = [*items[:30], edited]
    assert spans(branch, memo=memo) == spans(branch)
    assert memo.segments.segmenter is not kept and len(memo.segments.segmenter.log) == 31
    assert spans(branch, resets=[12], memo=memo) == spans(branch, resets=[12])
