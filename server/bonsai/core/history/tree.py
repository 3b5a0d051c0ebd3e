"""The conversation tree, derived from the append-only log plus tree operations.

The log stays the source of truth; the tree is a view of it. Each message is a
node: a **question** (user message), an **answer** (assistant message, with
its tool calls) or a **tool result**. Replaying the log in order, a new
message hangs under the **active leaf** and becomes the active leaf; a user
message hangs under the pending **fork point** instead, when there is one; a
tool result hangs after its call (so a call and its results stay together).

Operations are rows of their own, each recorded after a known log position
(``after_seq``) and replayed there:

- ``fork``: the next user message attaches under this node ("continue from here");
- ``jump``: this node becomes the active leaf;
- ``reparent``: move a node and its subtree under another node;
- ``hide``: soft-delete a node and its subtree into the recycle bin;
- ``restore``: take a node back out of the recycle bin;
- ``attach``: move a question under an answer, or (no parent) to a new branch
  under the root: where the attachment rule (``bonsai.core.history.attach``) put it.

``fork`` at :data:`ROOT` makes the next question start a new branch under the
root (a question with no parent: the model sees only that branch).

A target that is an answer with tool calls (or one of its results) means the
end of that step, its last result: a question never lands between a call and
its result. Tool results move and hide with their call, never alone. The
**active path** (root → active leaf) is what the model sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bonsai.domain import Message, StoredMessage

NodeKind = Literal["question", "answer", "tool_result", "system"]
OpKind = Literal["fork", "reparent", "hide", "restore", "jump", "attach"]
OP_KINDS: tuple[OpKind, ...] = ("fork", "reparent", "hide", "restore", "jump", "attach")
ROOT = "@root"  # fork target: the next question starts a new branch under the root


class TreeOp(BaseModel):
    """One recorded operation; it applies after the message with seq ``after_seq``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: OpKind
    node_id: str = Field(min_length=1)
    parent_id: str | None = None  # reparent; attach (None: under the root)
    after_seq: int = Field(ge=0)


@dataclass
class TreeNode:
    id: str
    seq: int
    kind: NodeKind
    parent: str | None
    message: Message
    head: str | None = None  # a tool result: the answer whose call it answers


@dataclass
class Tree:
    nodes: dict[str, TreeNode] = field(default_factory=dict)  # in log order
    active: str | None = None
    fork: str | None = None
    hidden: list[str] = field(default_factory=list)  # the recycle bin, in hiding order
    skipped: list[str] = field(default_factory=list)  # ops that no longer apply, and why
    last_result: dict[str, str] = field(default_factory=dict)  # answer id -> its last result
    call_owner: dict[str, str] = field(default_factory=dict)  # tool call id -> answer id

    def node(self, node_id: str) -> TreeNode:
        found = self.nodes.get(node_id)
        if found is None:
            raise KeyError(f"no node {node_id!r} in this session's tree")
        return found

    def ancestors(self, node_id: str | None) -> list[str]:
        """``node_id`` and its ancestors, leaf first (cycle-safe)."""
        out: list[str] = []
        seen: set[str] = set()
        while node_id is not None and node_id in self.nodes and node_id not in seen:
            out.append(node_id)
            seen.add(node_id)
            node_id = self.nodes[node_id].parent
        return out

    def path(self, leaf: str | None) -> list[str]:
        """Root → ``leaf``."""
        return list(reversed(self.ancestors(leaf)))

    def active_path(self) -> list[str]:
        return self.path(self.active)

    def is_hidden(self, node_id: str) -> bool:
        bin_ = set(self.hidden)
        return any(i in bin_ for i in self.ancestors(node_id))

    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for node in self.nodes.values():
            if node.parent is not None:
                out.setdefault(node.parent, []).append(node.id)
        return out

    def subtree(self, node_id: str) -> set[str]:
        kids = self.children()
        out, todo = set(), [node_id]
        while todo:
            current = todo.pop()
            if current not in out:
                out.add(current)
                todo.extend(kids.get(current, []))
        return out

    def step_end(self, node_id: str) -> str:
        """Where a message may attach under ``node_id``: after its step's last result."""
        node = self.node(node_id)
        head = node.head if node.kind == "tool_result" and node.head else node.id
        if not self.nodes[head].message.tool_calls:
            return node.id
        return self.last_result.get(head, head)


def node_kind(message: Message) -> NodeKind:
    return {"user": "question", "assistant": "answer", "tool": "tool_result"}.get(
        message.role, "system"
    )  # type: ignore[return-value]


# ------------------------------------------------------------------ building
def derive(
    log: Sequence[StoredMessage], ops: Sequence[TreeOp], excluded: Iterable[str] = ()
) -> Tree:
    """The tree of ``log`` (in seq order) with ``ops`` replayed at their positions.
    ``excluded`` messages (cancelled turns, interrupted replies) are not nodes: a
    cancelled turn leaves the tree as it was. Ops that no longer apply are skipped."""
    tree = Tree()
    skip = set(excluded)
    pending = sorted(enumerate(ops), key=lambda pair: (pair[1].after_seq, pair[0]))
    at = 0
    for stored in log:
        while at < len(pending) and pending[at][1].after_seq < stored.seq:
            _replay(tree, pending[at][1])
            at += 1
        if stored.message_id not in skip:
            attach(tree, stored)
    for _, op in pending[at:]:
        _replay(tree, op)
    return tree


def _replay(tree: Tree, op: TreeOp) -> None:
    try:
        apply_op(tree, op)
    except (KeyError, ValueError) as error:
        tree.skipped.append(f"{op.kind} {op.node_id}: {str(error).strip(chr(39))}")


def attach(tree: Tree, stored: StoredMessage) -> None:
    """Add one message of the log to the tree."""
    message = stored.message
    kind = node_kind(message)
    head = tree.call_owner.get(message.tool_call_id or "") if kind == "tool_result" else None
    if head is not None and _follows_call(tree, head):
        parent = tree.active  # the usual case: results follow their call
    elif head is not None:
        parent = tree.last_result.get(head, head)  # a late result on another branch
    elif kind == "question" and tree.fork is not None:
        parent, tree.fork = (None if tree.fork == ROOT else tree.fork), None
    else:
        parent = tree.active
    node = TreeNode(stored.message_id, stored.seq, kind, parent, message, head)
    tree.nodes[node.id] = node
    if head is not None:
        tree.last_result[head] = node.id
    for call in message.tool_calls:
        tree.call_owner[call.id] = node.id
    if head is None or parent == tree.active:  # a late result elsewhere leaves it be
        tree.active = node.id


def _follows_call(tree: Tree, head: str) -> bool:
    """Is the active leaf the call ``head`` or below it (checked cheaply first)?"""
    if tree.active in (head, tree.last_result.get(head)):
        return True
    return head in tree.ancestors(tree.active)


# ------------------------------------------------------------------ operations
def apply_op(tree: Tree, op: TreeOp) -> None:
    """Apply ``op`` to ``tree``. ``KeyError`` names an unknown node; ``ValueError``
    says why the operation is refused. A refused operation changes nothing."""
    if op.kind == "fork" and op.node_id == ROOT:
        tree.fork = ROOT
        return
    node = tree.node(op.node_id)
    if op.kind == "restore":
        if node.id not in tree.hidden:
            raise ValueError(f"{node.id} is not in the recycle bin")
        tree.hidden.remove(node.id)
        return
    if tree.is_hidden(node.id):
        raise ValueError(f"{node.id} is hidden; restore it first")
    if op.kind == "fork":
        tree.fork = tree.step_end(node.id)
    elif op.kind == "jump":
        tree.active, tree.fork = tree.step_end(node.id), None
    elif op.kind == "hide":
        _hide(tree, node)
    elif op.kind == "attach":
        _attach(tree, node, op.parent_id)
    else:
        _reparent(tree, node, op.parent_id)


def _moves_alone(node: TreeNode, verb: str) -> None:
    if node.kind == "tool_result":
        raise ValueError(
            f"{node.id} is a tool result: it cannot {verb} without its call; "
            f"{verb} the answer {node.head} instead"
        )


def _hide(tree: Tree, node: TreeNode) -> None:
    _moves_alone(node, "be hidden")
    gone = tree.subtree(node.id)
    tree.hidden.append(node.id)
    if tree.active in gone:
        tree.active = node.parent
    if tree.fork in gone:
        tree.fork = None


def _reparent(tree: Tree, node: TreeNode, parent_id: str | None) -> None:
    _moves_alone(node, "move")
    if parent_id is None:
        raise ValueError("reparent needs a parent node")
    target = tree.node(parent_id)
    if tree.is_hidden(target.id):
        raise ValueError(f"{target.id} is hidden; restore it first")
    anchor = tree.step_end(target.id)
    if anchor in tree.subtree(node.id):
        raise ValueError(f"{target.id} is inside the subtree of {node.id}: that would be a cycle")
    node.parent = anchor


def _attach(tree: Tree, node: TreeNode, parent_id: str | None) -> None:
    if node.kind != "question":
        raise ValueError(f"{node.id} is not a question: only questions attach")
    if parent_id is None:
        node.parent = None
        return
    _reparent(tree, node, parent_id)


# ------------------------------------------------------------------ reading
def branch_tokens(tree: Tree, tokens: dict[str, int]) -> dict[str, int]:
    """Node id → tokens of the branch root → node (what sending that path costs)."""
    out: dict[str, int] = {}
    for node_id in tree.nodes:
        chain: list[str] = []
        current: str | None = node_id
        while current is not None and current not in out and current not in chain:
            chain.append(current)
            current = tree.nodes[current].parent if current in tree.nodes else None
        total = out.get(current, 0) if current is not None else 0
        for step in reversed(chain):
            total += tokens.get(step, 0)
            out[step] = total
    return out


def hidden_ids(tree: Tree) -> set[str]:
    """Every node in the recycle bin or under one that is."""
    out: set[str] = set()
    for node_id in tree.hidden:
        out |= tree.subtree(node_id)
    return out


@dataclass(frozen=True)
class Comparison:
    ancestor: str | None  # the last node both branches share
    a: list[str]  # a's own nodes after the ancestor, in order
    b: list[str]


def compare(tree: Tree, a: str, b: str) -> Comparison:
    """Two branches side by side: what each holds after their common ancestor."""
    path_a, path_b = tree.path(tree.node(a).id), tree.path(tree.node(b).id)
    shared = 0
    while shared < min(len(path_a), len(path_b)) and path_a[shared] == path_b[shared]:
        shared += 1
    ancestor = path_a[shared - 1] if shared else None
    return Comparison(ancestor, path_a[shared:], path_b[shared:])
