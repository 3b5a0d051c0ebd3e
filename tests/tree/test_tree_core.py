"""The conversation tree, derived from the log plus operations (pure core)."""

from __future__ import annotations

import pytest

from bonsai.core.history.tree import TreeOp, apply_op, branch_tokens, compare, derive, hidden_ids
from bonsai.domain import Message, StoredMessage, ToolCall


def log_of(*messages: Message) -> list[StoredMessage]:
    return [
        StoredMessage(message_id=f"m{i}", session_id="s", seq=i, created_at=0.0, message=m)
        for i, m in enumerate(messages, 1)
    ]


def q(text: str) -> Message:
    return Message(role="user", content=text)


def a(text: str, *calls: str) -> Message:
    return Message(
        role="assistant",
        content=text,
        tool_calls=tuple(ToolCall(id=c, name="bash", arguments="{}") for c in calls),
    )


def r(call: str) -> Message:
    return Message(role="tool", content=f"out {call}", tool_call_id=call, name="bash")


def op(kind: str, node: str, after: int, parent: str | None = None) -> TreeOp:
    return TreeOp(kind=kind, node_id=node, parent_id=parent, after_seq=after)  # type: ignore[arg-type]


BASE = (q("one"), a("", "c1", "c2"), r("c1"), r("c2"), a("done one"), q("two"), a("done two"))


def test_a_linear_log_is_one_path_in_log_order() -> None:
    tree = derive(log_of(*BASE), [])
    assert tree.active_path() == [f"m{i}" for i in range(1, 8)]
    assert [tree.nodes[i].kind for i in ("m1", "m2", "m3")] == ["question", "answer", "tool_result"]


def test_fork_attaches_the_next_question_there_only() -> None:
    log = log_of(*BASE, q("three"), a("done three"))
    tree = derive(log, [op("fork", "m5", after=7)])
    assert tree.nodes["m8"].parent == "m5" and tree.nodes["m9"].parent == "m8"
    assert tree.active_path() == ["m1", "m2", "m3", "m4", "m5", "m8", "m9"]
    assert tree.fork is None, "one turn only"


def test_fork_on_an_answer_with_calls_means_after_its_last_result() -> None:
    tree = derive(log_of(*BASE, q("three")), [op("fork", "m2", after=7)])
    assert tree.nodes["m8"].parent == "m4", "a question never lands between call and result"


def test_a_cancelled_turn_leaves_the_tree_as_it_was() -> None:
    log = log_of(*BASE, q("cancelled"), a("partial"), q("three"))
    tree = derive(log, [op("fork", "m1", after=7)], excluded={"m8", "m9"})
    assert "m8" not in tree.nodes and tree.nodes["m10"].parent == "m1", "the fork survived"


def test_jump_moves_the_active_leaf_and_new_messages_follow_it() -> None:
    tree = derive(log_of(*BASE, q("three")), [op("jump", "m5", after=7)])
    assert tree.nodes["m8"].parent == "m5"
    assert tree.active_path() == ["m1", "m2", "m3", "m4", "m5", "m8"]


def test_reparent_moves_a_subtree_and_refuses_cycles_and_lone_results() -> None:
    tree = derive(log_of(*BASE), [])
    apply_op(tree, op("reparent", "m6", after=7, parent="m1"))
    assert tree.active_path() == ["m1", "m6", "m7"]
    with pytest.raises(ValueError, match="cycle"):
        apply_op(tree, op("reparent", "m1", after=7, parent="m7"))
    with pytest.raises(ValueError, match="tool result"):
        apply_op(tree, op("reparent", "m3", after=7, parent="m1"))
    with pytest.raises(KeyError):
        apply_op(tree, op("reparent", "m6", after=7, parent="nope"))


def test_hide_sends_the_subtree_to_the_bin_and_restore_brings_it_back() -> None:
    tree = derive(log_of(*BASE), [])
    apply_op(tree, op("hide", "m6", after=7))
    assert tree.active == "m5" and tree.hidden == ["m6"]
    assert hidden_ids(tree) == {"m6", "m7"}
    with pytest.raises(ValueError, match="hidden"):
        apply_op(tree, op("jump", "m7", after=7))
    apply_op(tree, op("restore", "m6", after=7))
    assert tree.hidden == [] and not hidden_ids(tree)
    with pytest.raises(ValueError, match="not in the recycle bin"):
        apply_op(tree, op("restore", "m6", after=7))


def test_ops_replay_at_their_log_position() -> None:
    # hidden after m7; a later question attaches to the (moved) active leaf m5
    tree = derive(log_of(*BASE, q("three")), [op("hide", "m6", after=7)])
    assert tree.nodes["m8"].parent == "m5"
    assert tree.active_path()[-2:] == ["m5", "m8"]


def test_an_op_that_no_longer_applies_is_skipped_and_reported() -> None:
    tree = derive(log_of(*BASE), [op("jump", "m_gone", after=3)])
    assert tree.active == "m7" and tree.skipped and "m_gone" in tree.skipped[0]


def test_compare_and_branch_tokens() -> None:
    log = log_of(*BASE, q("three"), a("done three"))
    tree = derive(log, [op("fork", "m5", after=7)])
    result = compare(tree, "m7", "m9")
    assert (result.ancestor, result.a, result.b) == ("m5", ["m6", "m7"], ["m8", "m9"])
    tokens = {node_id: 10 for node_id in tree.nodes}
    branches = branch_tokens(tree, tokens)
    assert branches["m7"] == 70 and branches["m9"] == 70 and branches["m5"] == 50
