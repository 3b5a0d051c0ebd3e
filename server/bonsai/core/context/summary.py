"""The rolling structured summary: fixed headings, identifiers quoted verbatim.

The deterministic builder needs no model. A previous summary is *updated*:
its entries are parsed back and merged with what the newly folded span adds;
the span it already covers is never read again. The same headings are asked
of the fast model in provider mode (see ``summary_prompt``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bonsai.core.context.candidates import failed
from bonsai.core.context.harness import is_harness_note
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.text import call_summary, one_line

HEADINGS = (
    "Current goal",
    "Decisions",
    "Constraints",
    "Files touched",
    "Tool findings",
    "Open tasks",
    "Risks",
    "Seen in",
)
KEEP = {
    "Current goal": 2,
    "Decisions": 8,
    "Constraints": 6,
    "Files touched": 20,
    "Tool findings": 10,
    "Open tasks": 5,
    "Risks": 6,
    "Seen in": 8,
}
TRIM_ORDER = (
    "Seen in",
    "Tool findings",
    "Decisions",
    "Files touched",
    "Risks",
    "Constraints",
    "Open tasks",
)
NONE = "(none)"
Sections = dict[str, list[str]]

_CONSTRAINT = re.compile(
    r"\b(must|must not|do not|don't|never|always|only|should not|shouldn't|without)\b", re.I
)
_TODO = re.compile(
    r"^\s*(?:[-*]\s*\[ \]|TODO\b|next\b|then\b|i need to\b|i will\b|i'll\b|let me\b|let's\b)", re.I
)
_RISK = re.compile(r"(Traceback|\bError\b|\bFAILED\b|\bexception\b)", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s")
_FILE_ENTRY = re.compile(r"^`(?P<path>[^`]+)` \((?P<acts>[^)]*)\)$")
_ACTIONS = {
    "read": "read",
    "edit": "edited",
    "write": "written",
    "list": "listed",
    "search": "searched",
}


def empty_sections() -> Sections:
    return {h: [] for h in HEADINGS}


def render_sections(sections: Sections) -> str:
    blocks = []
    for heading in HEADINGS:
        entries = sections.get(heading) or [NONE]
        blocks.append(f"## {heading}\n" + "\n".join(f"- {e}" for e in entries))
    return "\n\n".join(blocks)


def parse_sections(text: str) -> Sections:
    """Entries per heading of a summary text; lines under no known heading go to Decisions."""
    sections = empty_sections()
    current = "Decisions"
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            name = line[3:].strip()
            current = name if name in sections else "Decisions"
            continue
        entry = line[2:].strip() if line.startswith(("- ", "* ")) else line
        if entry and entry != NONE:
            sections[current].append(entry)
    return sections


def _first_sentence(text: str, limit: int = 200) -> str:
    flat = one_line(text, 2_000)
    return one_line(_SENTENCE.split(flat, maxsplit=1)[0], limit) if flat else ""


def _merge(old: list[str], new: Iterable[str], keep: int) -> list[str]:
    out = [e for e in old]
    for entry in new:
        if entry and entry in out:
            out.remove(entry)
        if entry:
            out.append(entry)
    return out[-keep:]


def _files(old: list[str], span: list[Item]) -> list[str]:
    acts: dict[str, list[str]] = {}
    for entry in old:
        match = _FILE_ENTRY.match(entry)
        if match:
            acts[match["path"]] = [a.strip() for a in match["acts"].split(",") if a.strip()]
    for item in span:
        ev = item.message.evidence
        if ev is None or not ev.path or not ev.ok:
            continue
        done = acts.pop(ev.path, [])
        action = _ACTIONS.get(ev.kind, ev.kind)
        acts[ev.path] = [*[a for a in done if a != action], action]
    entries = [f"`{path}` ({', '.join(a)})" for path, a in acts.items()]
    return entries[-KEEP["Files touched"] :]


_RISK_WORDS = ("traceback", "error", "failed", "exception")


def _risky(text: str) -> bool:
    """``_RISK.search(text)``, skipped when ASCII text holds none of its words in
    any case (the case-insensitive search tries every branch at every position)."""
    if text.isascii():
        low = text.lower()
        if not any(word in low for word in _RISK_WORDS):
            return False
    return _RISK.search(text) is not None


def _finding(item: Item, calls: dict[str, tuple[str, str]]) -> str:
    message = item.message
    name, args = calls.get(message.tool_call_id or "", (message.name or "tool", ""))
    what = call_summary(name, args, message.evidence, 100)
    lines = [ln for ln in message.content.splitlines() if ln.strip()]
    verdict = "failed: " if failed(message) else ""
    ev = message.evidence
    if ev is not None and ev.kind == "read" and ev.ok:
        return f"{what} → read, {len(lines):,} lines"
    if not lines:
        return f"{what} → {verdict}(no output)"
    first = one_line(lines[0], 120)
    if len(lines) == 1:
        return f"{what} → {verdict}{first}"
    return f"{what} → {verdict}{first} … {one_line(lines[-1], 120)} ({len(lines):,} lines)"


def _span_entries(
    span: list[Item], calls: dict[str, tuple[str, str]], memo: AssemblyMemo | None = None
) -> Sections:
    new = empty_sections()
    assistants = [i for i in span if i.message.role == "assistant" and i.message.content.strip()]
    for item in span:
        for heading, entry in _item_entries(item, calls, memo):
            new[heading].append(entry)
    for item in assistants[-3:]:
        for line in item.message.content.splitlines():
            if _TODO.match(line):
                new["Open tasks"].append(one_line(line.strip(" -*"), 200))
    return new


def _item_entries(
    item: Item, calls: dict[str, tuple[str, str]], memo: AssemblyMemo | None
) -> tuple[tuple[str, str], ...]:
    """(heading, entry) of one message: they depend on the message and the call
    it answers only, so the session's memo keeps them (a fold is planned again on
    many calls over mostly the same span)."""
    message = item.message
    call = calls.get(message.tool_call_id or "") if message.role == "tool" else None
    if memo is not None:
        hit = memo.summary_entries.get(item.id, message)
        if hit is not None and hit[0] == call:
            return hit[1]  # type: ignore[no-any-return]
    out: list[tuple[str, str]] = []
    if message.role == "assistant" and message.content.strip():
        out.append(("Decisions", _first_sentence(message.content)))
    elif message.role == "user" and not is_harness_note(message.content):
        for sentence in _SENTENCE.split(one_line(message.content, 4_000)):
            if _CONSTRAINT.search(sentence):
                out.append(("Constraints", one_line(sentence, 200)))
    elif message.role == "tool":
        finding = _finding(item, calls)
        out.append(("Tool findings", finding))
        if failed(message) or _risky(message.content[:2_000]):
            out.append(("Risks", finding))
    entries = tuple(out)
    if memo is not None:
        memo.summary_entries.put(item.id, message, (call, entries))
    return entries


def update_summary(
    previous: str | None,
    span: list[Item],
    calls: dict[str, tuple[str, str]],
    *,
    goal: str,
    max_chars: int,
    task: str = "",
    traces: Iterable[str] = (),
    trace_chars: int = 0,
    memo: AssemblyMemo | None = None,
) -> str:
    """The summary after folding ``span``: ``previous`` merged with the span's entries.

    ``goal`` is the latest user request and ``task`` the first one (both quoted
    under Current goal when set and different); ``memo``: the session's, which
    keeps each message's entries. ``traces`` are the folded views'
    entries (``core/context/trace.py``) for Seen in, which takes up to
    ``trace_chars`` of ``max_chars`` (its oldest entries go first; the other
    headings fit the rest)."""
    old = parse_sections(previous) if previous else empty_sections()
    new = _span_entries(span, calls, memo)
    merged: Sections = {}
    for heading in HEADINGS:
        merged[heading] = _merge(old[heading], new[heading], KEEP[heading])
    merged["Files touched"] = _files(old["Files touched"], span)
    seen = _merge(old["Seen in"], traces, KEEP["Seen in"])
    while seen and sum(len(e) + 3 for e in seen) > trace_chars:
        seen = seen[1:]
    merged["Seen in"] = []
    if goal:
        merged["Current goal"] = [one_line(goal, 300)]
    if task and one_line(task, 300) not in merged["Current goal"]:
        merged["Current goal"].insert(0, "task: " + one_line(task, 300))
    room = max_chars - sum(len(e) + 3 for e in seen)
    text = _fit(merged, room)
    if not seen:
        return text
    empty = f"## Seen in\n- {NONE}"
    if not text.endswith(empty):  # cut short: the other headings lose their end, not the traces
        body = render_sections(merged)[: -len(empty) - 2]
        text = body[: max(0, room - len(empty) - 3)] + "…\n\n" + empty
    return text[: -len(empty)] + "## Seen in\n" + "\n".join(f"- {e}" for e in seen)


def _fit(sections: Sections, max_chars: int) -> str:
    text = render_sections(sections)
    while len(text) > max_chars:
        heading = next((h for h in TRIM_ORDER if len(sections[h]) > 1), None)
        if heading is None:
            return text[: max(0, max_chars - 1)] + "…"
        sections[heading] = sections[heading][1:]
        text = render_sections(sections)
    return text


def open_tasks(summary_text: str) -> list[str]:
    return parse_sections(summary_text)["Open tasks"]
