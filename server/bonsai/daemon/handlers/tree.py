"""bonsai/tree/*: the conversation tree and its operations (fork, reparent, hide,
restore, jump, attach, compare). Operations are stored as rows and replayed over
the log; each one recorded tells attached clients (``bonsai/tree/changed``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bonsai.core.context.text import message_label
from bonsai.core.history.tree import (
    OpKind,
    Tree,
    TreeOp,
    apply_op,
    branch_tokens,
    compare,
    hidden_ids,
)
from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import Conflict, InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.store.tree import TreeStore, load_tree
from bonsai.session.attach import decisions, info
from bonsai.session.base import bridge_for, runtime
from bonsai.session.host import Host
from bonsai.session.tree_events import tree_changed


def _tree(daemon: Host, session_id: str) -> Tree:
    daemon.store.get(session_id)
    return load_tree(daemon.db, session_id, daemon.store.messages(session_id))


def _tokens(daemon: Host, session_id: str, tree: Tree) -> dict[str, tuple[int, str]]:
    """Node id → (tokens, confidence), through the session's counter and its memo."""
    bridge = bridge_for(daemon, session_id)
    counts = bridge.memo.counts if bridge.memo is not None else None
    out: dict[str, tuple[int, str]] = {}
    for node in tree.nodes.values():
        hit = counts.get(node.id, node.message) if counts is not None else None
        if hit is None:
            count = bridge.counter.count_message(node.message)
            hit = (count.tokens, count.confidence)
            if counts is not None:
                counts.put(node.id, node.message, hit)
        out[node.id] = hit
    return out


def tree_result(daemon: Host, session_id: str, tree: Tree) -> m.TreeGetResult:
    settings = daemon.settings(daemon.store.get(session_id).workspace).settings
    attach = decisions(daemon, settings, tree)
    counts = _tokens(daemon, session_id, tree)
    tokens = {k: v[0] for k, v in counts.items()}
    branches = branch_tokens(tree, tokens)
    hidden = hidden_ids(tree)
    path = tree.active_path()
    on_path = set(path)
    calls = {c.id: (c.name, c.arguments) for n in tree.nodes.values() for c in n.message.tool_calls}
    nodes = [
        m.TreeNodeInfo(
            node_id=node.id,
            parent_id=node.parent,
            kind=node.kind,
            state="hidden" if node.id in hidden else "visible",
            label=message_label(node.message, calls.get(node.message.tool_call_id or "")),
            seq=node.seq,
            tokens=tokens[node.id],
            branch_tokens=branches[node.id],
            confidence=counts[node.id][1],  # type: ignore[arg-type]
            on_active_path=node.id in on_path,
            attach=info(tree, node.id, attach[node.id]) if node.id in attach else None,
        )
        for node in tree.nodes.values()
    ]
    return m.TreeGetResult(
        nodes=nodes,
        active_leaf=tree.active,
        fork_point=tree.fork,
        active_path=path,
        recycle_bin=list(tree.hidden),
        path_tokens=branches[path[-1]] if path else 0,
        attach_mode=settings.tree.attach,
    )


async def _operate(ctx: Ctx, params: m.TreeNodeParams, kind: OpKind) -> m.TreeGetResult:
    daemon, sid = ctx.daemon, params.session_id
    tree = _tree(daemon, sid)
    if not await runtime(daemon, sid).settled():
        raise Conflict("a turn is running in this session; wait for it or cancel it first")
    history = daemon.store.messages(sid)
    parent = (
        params.parent_id if isinstance(params, m.TreeReparentParams | m.TreeAttachParams) else None
    )
    op = TreeOp(
        kind=kind,
        node_id=params.node_id,
        parent_id=parent,
        after_seq=history[-1].seq if history else 0,
    )
    try:
        apply_op(tree, op)
    except KeyError as error:
        raise NotFound(str(error).strip("'\"")) from None
    except ValueError as error:
        raise InvalidParams(str(error)) from None
    TreeStore(daemon.db).add(sid, op)
    tree_changed(daemon, sid, kind)
    return await _view(ctx, sid)  # committed: the worker's snapshot holds the op


def _view(ctx: Ctx, session_id: str) -> Awaitable[m.TreeGetResult]:
    """The tree as the clients see it, built on the view worker (every node counted)."""
    return ctx.daemon.views.run(
        ctx.daemon, session_id, lambda host: tree_result(host, session_id, _tree(host, session_id))
    )


@handles("bonsai/tree/get", read_only=True)
async def get(ctx: Ctx, params: m.SessionRef) -> m.TreeGetResult:
    return await _view(ctx, params.session_id)


def _op_handler(kind: OpKind) -> Callable[[Ctx, m.TreeNodeParams], Awaitable[m.TreeGetResult]]:
    async def handler(ctx: Ctx, params: m.TreeNodeParams) -> m.TreeGetResult:
        return await _operate(ctx, params, kind)

    return handler


for _kind in ("fork", "reparent", "hide", "restore", "jump", "attach"):  # bonsai/tree/<op>
    handles(f"bonsai/tree/{_kind}", read_only=False)(_op_handler(_kind))  # type: ignore[arg-type]


def _side(tree: Tree, leaf: str, own: list[str], tokens: dict[str, int]) -> m.TreeCompareSide:
    messages = [
        m.TreeCompareMessage(
            node_id=node_id,
            kind=tree.nodes[node_id].kind,
            role=tree.nodes[node_id].message.role,
            text=tree.nodes[node_id].message.content,
            tokens=tokens[node_id],
        )
        for node_id in own
    ]
    return m.TreeCompareSide(
        leaf_id=leaf,
        messages=messages,
        tokens=sum(tokens[i] for i in own),
        path_tokens=sum(tokens[i] for i in tree.path(leaf)),
    )


@handles("bonsai/tree/compare", read_only=True)
async def compare_(ctx: Ctx, params: m.TreeCompareParams) -> m.TreeCompareResult:
    sid = params.session_id
    return await ctx.daemon.views.run(ctx.daemon, sid, lambda host: _compare(host, params))


def _compare(daemon: Host, params: m.TreeCompareParams) -> m.TreeCompareResult:
    sid = params.session_id
    tree = _tree(daemon, sid)
    try:
        result = compare(tree, params.a, params.b)
    except KeyError as error:
        raise NotFound(str(error).strip("'\"")) from None
    tokens = {k: v[0] for k, v in _tokens(daemon, sid, tree).items()}
    return m.TreeCompareResult(
        ancestor_id=result.ancestor,
        a=_side(tree, params.a, result.a, tokens),
        b=_side(tree, params.b, result.b, tokens),
    )
