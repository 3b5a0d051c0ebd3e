"""Where each question belongs: the attachment rule over a session's tree.

``tree.attach`` = ``suggest`` (default) computes a decision for every question,
shown by ``bonsai/tree/get``; ``topic`` also applies it when a question arrives
(an ``attach`` tree op, so it replays); ``off`` computes nothing. Similarity
comes from the memory embedding model (model2vec) when one is installed, else
from the lexical score of ``bonsai.core.history.attach``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np

from bonsai.core.history.attach import AttachNode, Decision, Vocabulary, candidates, decide
from bonsai.core.history.tree import Tree, TreeNode, TreeOp, hidden_ids
from bonsai.domain import StoredMessage
from bonsai.protocol import models as m
from bonsai.services.retrieval.embedder import Embedder
from bonsai.services.store.tree import TreeStore
from bonsai.session.history_embedder import history_embedder
from bonsai.session.host import Host
from bonsai.settings import Settings

log = logging.getLogger("bonsai.attach")
UNIT_CHARS = 2_000
DATA_NAMES = ("memory", "reflection")  # user-side data blocks, not questions


def is_question(node: TreeNode) -> bool:
    return node.kind == "question" and node.message.name not in DATA_NAMES


def _asked(tree: Tree, node: TreeNode) -> str | None:
    """The question an answer replies to (skipping data blocks between them)."""
    parent = node.parent
    while parent is not None and parent in tree.nodes:
        above = tree.nodes[parent]
        if is_question(above):
            return above.id
        if above.kind != "question":
            return None
        parent = above.parent
    return None


def _walk(tree: Tree) -> Iterator[tuple[TreeNode, AttachNode]]:
    """Visible nodes in log order, as the attachment rule sees them."""
    gone = hidden_ids(tree)
    for node in tree.nodes.values():
        if node.id in gone or node.kind == "system":
            continue
        if node.kind == "question":
            if is_question(node):
                yield node, AttachNode(node.id, "question", node.message.content)
        elif node.kind == "answer":
            asked = _asked(tree, node)
            yield node, AttachNode(node.id, "answer", node.message.content, parent=asked)
        else:
            yield node, AttachNode(node.id, "tool_result", node.message.content, answer=node.head)


class Semantic:
    """Cosine similarity through the embedding model, with vectors cached per text."""

    def __init__(self, daemon: Host, settings: Settings) -> None:
        self.tree_texts: dict[str, str] = {}
        self.embedder = _embedder(daemon, settings)
        self.cache: dict[str, np.ndarray] = daemon.hub.attach_vectors

    def scores(self, question: str, answers: list[str]) -> dict[str, float] | None:
        if self.embedder is None:
            return None
        texts = [question, *(self.tree_texts.get(a, "") for a in answers)]
        vectors = self._encode(texts)
        return {a: float(np.dot(vectors[0], vectors[i + 1])) for i, a in enumerate(answers)}

    def _encode(self, texts: list[str]) -> list[np.ndarray]:
        assert self.embedder is not None
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            if len(self.cache) > 20_000:
                self.cache.clear()
            for text, row in zip(missing, self.embedder.encode(missing), strict=True):
                self.cache[text] = row
        return [self.cache[t] for t in texts]


def _embedder(daemon: Host, settings: Settings) -> Embedder | None:
    try:
        return history_embedder(daemon, settings)
    except Exception:
        log.exception("no embedding model for the attachment rule; lexical similarity")
        return None


def decisions(
    daemon: Host, settings: Settings, tree: Tree, only: str | None = None
) -> dict[str, Decision]:
    """Question id → its decision against the visible nodes before it; with ``only``,
    that question's alone (the nodes after it are not read)."""
    if settings.tree.attach == "off":
        return {}
    semantic = Semantic(daemon, settings)
    vocab = Vocabulary()
    out: dict[str, Decision] = {}
    for node, item in _walk(tree):
        if item.role == "question" and only in (None, node.id):
            out[node.id] = _decide(item.text, vocab, semantic)
            if only is not None:
                break
        elif item.role == "answer":
            asked = tree.nodes[item.parent].message.content if item.parent else ""
            semantic.tree_texts[node.id] = f"{asked}\n{item.text}"[:UNIT_CHARS]
        vocab.add(item)
    return out


def _decide(question: str, vocab: Vocabulary, semantic: Semantic) -> Decision:
    found = list(candidates(question, vocab))
    try:
        scores = semantic.scores(question, found) if found else None
    except Exception:
        log.exception("embedding similarity failed; lexical similarity")
        scores = None
    return decide(question, vocab, scores)


def info(tree: Tree, node_id: str, decision: Decision) -> m.TreeAttachInfo:
    target = decision.target
    anchor = tree.step_end(target) if target is not None else None
    return m.TreeAttachInfo(
        target=target,
        score=decision.score,
        reason=decision.reason,
        term=decision.term,
        similarity=decision.similarity,
        placed=tree.nodes[node_id].parent == anchor,
    )


def apply_on_arrival(
    daemon: Host, session_id: str, settings: Settings, tree: Tree, question: StoredMessage
) -> TreeOp | None:
    """``topic`` mode: record an ``attach`` op for a question that just arrived,
    unless the user chose where it goes (a fork) or it already sits there."""
    if settings.tree.attach != "topic" or question.message_id not in tree.nodes:
        return None
    decision = decisions(daemon, settings, tree, only=question.message_id).get(question.message_id)
    if decision is None or info(tree, question.message_id, decision).placed:
        return None
    op = TreeOp(
        kind="attach",
        node_id=question.message_id,
        parent_id=decision.target,
        after_seq=question.seq,
    )
    TreeStore(daemon.db).add(session_id, op)
    return op
