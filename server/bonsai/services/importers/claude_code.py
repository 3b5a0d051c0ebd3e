"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Every line is an entry with a ``type``. ``user`` and ``assistant`` entries
carry an Anthropic ``message`` (see :mod:`anthropic_blocks`) and link to the
entry before them through ``parentUuid``; the conversation is the chain from
the last entry back to its root, so branches abandoned by a rewind are left
out. A compaction starts a new root (a ``system`` entry of subtype
``compact_boundary`` whose ``logicalParentUuid`` names the last entry before
it); the chain is followed across it, so the run holds the history before the
compaction, then the compaction summary (a user entry marked
``isCompactSummary``) as the user message the model was sent, then what came
after.

Streaming writes one assistant entry per content block; consecutive entries
of one API message (the same ``message.id``) are one assistant message.

Subagents (the Task tool) write sidechains (``isSidechain: true``), in the
same file for older versions and in their own ``agent-*.jsonl`` for newer
ones: run 0 is the main conversation and every sidechain is a further run, in
the order they start. ``summary`` entries give the title (the one whose
``leafUuid`` is in the file); ``file-history-snapshot``, ``queue-operation``,
other ``system`` entries and unknown kinds are left out and counted. Claude
Code's own notices written as assistant rows (``isApiErrorMessage``, model
``<synthetic>``: "API Error: 529 …", "You've hit your limit") were never the
model's words nor sent to it: each is left out with a warning naming its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.importers.anthropic_blocks import assistant_message, user_messages
from bonsai.services.importers.common import check_run, task_title, title_from
from bonsai.services.importers.jsonread import Loc, as_dict, load_jsonl
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.skipped import Skipped
from bonsai.services.importers.stamps import Stamps, record_time

CHAT = frozenset({"user", "assistant"})


@dataclass(frozen=True)
class _Entry:
    line: int
    record: dict[str, Any]

    @property
    def uuid(self) -> str | None:
        value = self.record.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent(self) -> str | None:
        for key in ("parentUuid", "logicalParentUuid"):
            value = self.record.get(key)
            if isinstance(value, str):
                return value
        return None

    @property
    def sidechain(self) -> bool:
        return self.record.get("isSidechain") is True


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    entries: list[_Entry] = []
    skipped = Skipped(source)
    summaries: dict[str, str] = {}
    lines = load_jsonl(text, source)
    for line, value in lines.rows:
        record = as_dict(value, Loc(source, line), "$")
        kind = record.get("type")
        if kind in CHAT or (kind == "system" and record.get("subtype") == "compact_boundary"):
            entries.append(_Entry(line, record))
        elif kind == "summary" and isinstance(record.get("summary"), str):
            summaries[str(record.get("leafUuid"))] = record["summary"]
        else:
            label = f"system/{record.get('subtype')}" if kind == "system" else str(kind)
            skipped.add(label)
    chains = _chains(entries)
    check_run(run, len(chains), source)
    warnings: list[str] = []
    chain = chains[run]
    stamps = Stamps()
    messages = _messages(chain, source, skipped, warnings, stamps)
    if not messages:
        raise Loc(source).error("$", "the transcript holds no user or assistant message")
    skipped.report(warnings)
    lines.report(warnings)
    messages = link_tool_results(messages, source, warnings)
    uuids = {e.uuid for e in entries}
    title = next((t for leaf, t in summaries.items() if leaf in uuids), None) if run == 0 else None
    return ImportedSession(
        format="claude-code",
        title=task_title(title) if title else title_from(messages, source),
        messages=messages,
        runs=len(chains),
        run=run,
        source=source,
        warnings=warnings,
        times=stamps.result(messages),
    )


def _chains(entries: list[_Entry]) -> list[list[_Entry]]:
    """The main chain (from the last main-thread entry back to its root), then one
    chain per sidechain root, each ending at that sidechain's last entry."""
    by_uuid: dict[str | None, _Entry] = {e.uuid: e for e in entries if e.uuid}
    main = [e for e in entries if not e.sidechain]
    chains: list[list[_Entry]] = []
    if main:
        chains.append(_walk(main[-1], by_uuid))
    leaves: dict[str, _Entry] = {}
    for entry in entries:
        if entry.sidechain:
            leaves[_root(entry, by_uuid)] = entry  # the last entry seen for each root
    chains.extend(_walk(leaf, by_uuid) for leaf in leaves.values())
    return chains


def _root(entry: _Entry, by_uuid: dict[str | None, _Entry]) -> str:
    seen: set[str] = set()
    while entry.parent in by_uuid and entry.parent not in seen:
        seen.add(entry.parent or "")
        parent = by_uuid[entry.parent]
        if parent.sidechain != entry.sidechain:
            break
        entry = parent
    return entry.uuid or f"line-{entry.line}"


def _walk(leaf: _Entry, by_uuid: dict[str | None, _Entry]) -> list[_Entry]:
    chain = [leaf]
    seen = {leaf.uuid}
    entry = leaf
    while entry.parent in by_uuid and entry.parent not in seen:
        entry = by_uuid[entry.parent]
        if entry.sidechain != leaf.sidechain:
            break
        seen.add(entry.uuid)
        chain.append(entry)
    chain.reverse()
    return chain


def _messages(
    chain: list[_Entry], source: str, skipped: Skipped, warnings: list[str], stamps: Stamps
) -> list[Message]:
    messages: list[Message] = []
    calls: dict[str, ToolCall] = {}
    last_api_id: str | None = None
    for entry in chain:
        record, loc = entry.record, Loc(source, entry.line)
        stamps.record(messages, record_time(record))
        if record.get("type") == "system":
            warnings.append(f"{source}:{entry.line}: the session was compacted here")
            last_api_id = None
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            skipped.add(f"{record.get('type')} without a message")
            continue
        content = message.get("content")
        if _own_notice(record, message):
            warnings.append(
                f"{source}:{entry.line}: left out Claude Code's own notice "
                f"(not the model's reply): {_said(content)}"
            )
            last_api_id = None
            continue
        if record["type"] == "assistant":
            api_id = message.get("id")
            reply = assistant_message(content, loc, "message.content", skipped)
            calls.update((call.id, call) for call in reply.tool_calls)
            if api_id is not None and api_id == last_api_id and messages:
                messages[-1] = _merge(messages[-1], reply)
            else:
                messages.append(reply)
            last_api_id = api_id if isinstance(api_id, str) else None
        else:
            last_api_id = None
            messages.extend(user_messages(content, loc, "message.content", skipped, calls))
    return messages


def _own_notice(record: dict[str, Any], message: dict[str, Any]) -> bool:
    """An assistant row Claude Code wrote itself (an API error, a usage limit), which
    it never sends to the model: ``isApiErrorMessage``, or the model ``<synthetic>``."""
    if record.get("type") != "assistant":
        return False
    return record.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>"


def _said(content: Any) -> str:
    """A notice's text in one line, at most 200 characters."""
    blocks = content if isinstance(content, list) else [{"text": content}]
    text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return " ".join(text.split())[:200]


def _merge(first: Message, more: Message) -> Message:
    return first.model_copy(
        update={
            "content": first.content + more.content,
            "tool_calls": (*first.tool_calls, *more.tool_calls),
        }
    )
