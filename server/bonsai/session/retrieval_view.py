"""What retrieval brings back to the model, shared by ``recall {query}`` and reinjection.

Each hit is served by size (``core.long_content``: as is, a verbatim excerpt,
or a pointer line), counted with the session's counter — the ledger's. A hit
that answers something (an assistant message or a tool result) comes with
the user question it answered, the nearest question above it in the
conversation tree (``retrieval.mandatory_context``). After the hits come the
current text of related files the session read (``retrieval.file_region``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.agent.tools.base import ToolFailure
from bonsai.agent.tools.paths import read_confined
from bonsai.core.history.pages import describe, fetch_call
from bonsai.core.history.tree import Tree
from bonsai.core.retrieval.file_regions import (
    CurrentText,
    ReadRegion,
    read_regions,
    region_lines,
    related_regions,
    render_region,
)
from bonsai.core.retrieval.long_content import Count, Limits, serve
from bonsai.domain import StoredMessage, content_hash
from bonsai.services.providers.registry import lookup_model
from bonsai.services.store.tree import load_tree
from bonsai.session.base import counter_for
from bonsai.session.host import Host
from bonsai.settings import RetrievalSettings, Settings

MAX_FILE_BYTES = 2 * 1024 * 1024  # larger files are not read back
MAX_CANDIDATES = 50  # the most recently read files considered for file regions
SKIPPED_NAMES = ("recall", "memory")  # copies of history and background notes


@dataclass
class RetrievalView:
    """One session's log, tree, counter and retrieval settings, for one retrieval."""

    daemon: Host
    session_id: str
    settings: RetrievalSettings
    workspace: Path
    count: Count
    history: list[StoredMessage]
    _tree: Tree | None = field(default=None, repr=False)

    @property
    def limits(self) -> Limits:
        return Limits(self.settings.excerpt_above_tokens, self.settings.pointer_above_tokens)

    @property
    def tree(self) -> Tree:
        if self._tree is None:
            self._tree = load_tree(self.daemon.db, self.session_id, self.history)
        return self._tree


def view_for(
    daemon: Host,
    session_id: str,
    settings: Settings | None = None,
    history: list[StoredMessage] | None = None,
) -> RetrievalView:
    row = daemon.store.get(session_id)
    settings = settings or daemon.settings(row.workspace).settings
    return RetrievalView(
        daemon=daemon,
        session_id=session_id,
        settings=settings.retrieval,
        workspace=Path(row.workspace),
        count=session_count(daemon, settings),
        history=history if history is not None else daemon.store.messages(session_id),
    )


def session_count(daemon: Host, settings: Settings) -> Count:
    """Token counts by the session's counter (the estimator the ledger uses)."""
    providers = settings.providers
    counter = counter_for(daemon, providers, lookup_model(providers.model, providers.models).info)
    return lambda text: counter.count_text(text).tokens


def worth_showing(stored: StoredMessage) -> bool:
    message = stored.message
    return bool(message.content.strip()) and message.name not in SKIPPED_NAMES


# ------------------------------------------------------------------ hits
def render_hits(
    view: RetrievalView, hits: Sequence[tuple[StoredMessage, str]], query: str
) -> list[str]:
    """Each hit (message, detail for its heading) served by size, with its question."""
    blocks: list[str] = []
    shown_questions: set[str] = set()
    for stored, detail in hits:
        head = f"--- {stored.message.role} {stored.message_id}"
        if stored.message.name:
            head += f" ({stored.message.name})"
        lines = [f"{head}, {detail}" if detail else head]
        question = question_of(view, stored) if view.settings.mandatory_context else None
        if question is not None:
            lines.append(question_block(view, question, query, shown_questions))
        lines.append(served(view, stored, query))
        blocks.append("\n".join(lines))
    return blocks


def served(view: RetrievalView, stored: StoredMessage, query: str) -> str:
    return serve(
        stored.message.content,
        what=describe(stored),
        query=query,
        fetch=fetch_call(stored.message_id),
        count=view.count,
        limits=view.limits,
    ).text


def question_block(
    view: RetrievalView, question: StoredMessage, query: str, shown: set[str]
) -> str:
    qid = question.message_id
    if qid in shown:
        return f"[answering user {qid}, the question shown above]"
    shown.add(qid)
    return f"[answering user {qid}:]\n{served(view, question, query)}\n[answer:]"


def question_of(view: RetrievalView, stored: StoredMessage) -> StoredMessage | None:
    """The user question an answer or tool result answered: the nearest question
    above it in the tree (by log order when it is not a tree node)."""
    if stored.message.role not in ("assistant", "tool"):
        return None
    by_id = {s.message_id: s for s in view.history}
    tree = view.tree
    if stored.message_id in tree.nodes:
        for node_id in tree.ancestors(stored.message_id)[1:]:
            if tree.nodes[node_id].kind == "question" and _is_question(by_id.get(node_id)):
                return by_id[node_id]
        return None
    earlier = [s for s in view.history if s.seq < stored.seq and _is_question(s)]
    return earlier[-1] if earlier else None


def _is_question(stored: StoredMessage | None) -> bool:
    return stored is not None and stored.message.role == "user" and not stored.message.name


# ------------------------------------------------------------------ file regions
def file_regions(view: RetrievalView, query: str, hit_ids: set[str]) -> list[str]:
    """The current text of the related files this session read (none when ``off``)."""
    mode = view.settings.file_region
    if mode == "off":
        return []
    regions = read_regions(view.history)[-MAX_CANDIDATES:]
    current = {r.path: current_text(view.workspace, r) for r in regions}
    texts = {path: "\n".join(c.lines or []) for path, c in current.items()}
    chosen = related_regions(regions, query, hit_ids, texts)
    return [render_region(r, current[r.path], mode, view.count, view.limits) for r in chosen]


def current_text(workspace: Path, region: ReadRegion) -> CurrentText:
    """The region's lines as the file holds them now, confined to the workspace."""
    try:
        data = read_confined(workspace, region.path, MAX_FILE_BYTES + 1)
    except ToolFailure:
        return CurrentText(None)
    if len(data) > MAX_FILE_BYTES:
        return CurrentText(None)
    if b"\0" in data[:8192]:
        return CurrentText(None)
    raw = data.splitlines(keepends=True)
    first, chosen = region_lines(region, raw)
    whole = region.start is None and region.end is None
    digest = content_hash(data if whole else b"".join(chosen))
    changed = None if region.content_hash is None else digest != region.content_hash
    lines = [line.decode("utf-8", errors="replace").rstrip("\r\n") for line in chosen]
    return CurrentText(lines, first, len(raw), changed)
