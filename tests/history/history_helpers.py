"""A long session built straight into a real store, and a real context bridge over it."""

from __future__ import annotations

from pathlib import Path

from bonsai.agent.context_bridge import ContextBridge
from bonsai.core.context import AssemblyMemo, ContextState
from bonsai.core.context.context_state import SummaryState
from bonsai.domain import Evidence, Message, StoredMessage, ToolCall
from bonsai.services.providers.registry import lookup_model
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.services.tokens import estimator_for
from bonsai.settings import Settings

MODEL = "gpt-4o-mini"


def open_store(home: Path) -> SessionStore:
    return SessionStore(open_database(home / "bonsai.db"))


TOPIC_EVERY = 10  # steps per task episode


def step(i: int, topics: bool = True) -> list[Message]:
    """One user request, a tool step reading a file, and the answer; with ``topics``
    every ``TOPIC_EVERY`` steps the step opens a new task episode (a titled topic)."""
    call = ToolCall(id=f"call_{i}", name="read_file", arguments=f'{{"path": "src/m{i % 50}.py"}}')
    evidence = Evidence(kind="read", path=f"src/m{i % 50}.py", content_hash=f"h{i}")
    titles: list[Message] = []
    calls = (call,)
    if topics and i % TOPIC_EVERY == 0 and i:
        args = f'{{"title": "bug batch {i}", "episode_action": "new_topic"}}'
        title = ToolCall(id=f"title_{i}", name="set_session_title", arguments=args)
        calls = (title, call)
        titles = [Message(role="tool", content="ok", tool_call_id=title.id, name=title.name)]
    return [
        Message(role="user", content=f"Request {i}: look at module m{i % 50} and fix bug {i}."),
        Message(role="assistant", content=f"Reading m{i % 50}.", tool_calls=calls),
        *titles,
        Message(
            role="tool",
            content="\n".join(f"line {n} of m{i % 50} (v{i})" for n in range(12)),
            tool_call_id=call.id,
            name="read_file",
            evidence=evidence,
        ),
        Message(role="assistant", content=f"Fixed bug {i} in `src/m{i % 50}.py`."),
    ]


def build_session(store: SessionStore, workspace: Path, messages: int, topics: bool = True) -> str:
    """A session of about ``messages`` messages, in batches of one transaction each."""
    sid = store.create(str(workspace), "long").session_id
    batch: list[Message] = []
    for i in range(messages // 4):
        batch.extend(step(i, topics))
        if len(batch) >= 4_000:
            store.append_many(sid, batch)
            batch = []
    if batch:
        store.append_many(sid, batch)
    return sid


def fold_all_but(store: SessionStore, sid: str, keep: int) -> list[StoredMessage]:
    """Persist a rolling summary folding every message but the last ``keep`` (whole
    steps), as a long session's compactions would have left it."""
    history = store.messages(sid)
    folded = history[: len(history) - keep]
    summary = SummaryState(
        text="## Current goal\n- keep fixing bugs\n\n## Files touched\n- `src/m1.py` (read)",
        through_seq=folded[-1].seq,
        folded=sorted(s.message_id for s in folded),
        mode="deterministic",
        revision=1,
        turn=1,
    )
    state = ContextState(summary=summary, compactions=1)
    store.set_state(sid, "context", state.model_dump(mode="json"))
    return history


def make_bridge(
    store: SessionStore,
    sid: str,
    workspace: Path,
    settings: Settings,
    window: int | None = None,
) -> ContextBridge:
    """The real bridge over ``MODEL`` (its window replaced by ``window`` when given)."""
    info = lookup_model(MODEL, settings.providers.models).info
    if window is not None:
        info = info.model_copy(update={"context_window": window})
    counter = estimator_for(
        info, cache_dir=workspace / ".tiktoken", tokenizer_path=None, model=MODEL
    )
    return ContextBridge(
        store=store,
        session_id=sid,
        workspace=workspace,
        settings=settings,
        model=MODEL,
        model_info=info,
        counter=counter,
        tools=[],
        memo=AssemblyMemo(),
    )
