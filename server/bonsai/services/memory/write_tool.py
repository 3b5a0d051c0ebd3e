"""The logic behind the agent's ``memory_write`` tool (and ``/remember``).

A write is planned first (:func:`plan_write`): the name is validated, the
target path is checked to stay inside one of the two memory folders, the
near-duplicate guard runs, and the new file text and a unified diff are
prepared. :func:`apply_plan` then writes the file atomically. The tool is
auto-approved because it can only touch those two folders and its diff is
shown to the user like any other file edit.

Near-duplicate guard: similarity is the Jaccard index of the two texts' sets
of stemmed content words (stop words removed, light suffix stemming), computed
over description + body. A save at or above 0.75 against any *other* entry is
refused with the name of that entry, so the model updates it instead.
"""

from __future__ import annotations

import difflib
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bonsai.core.retrieval.text import jaccard, stemmed_set
from bonsai.services.memory.entry import (
    BODY_MAX_BYTES,
    DESCRIPTION_MAX,
    EntryFile,
    EntryType,
    MemoryEntry,
    Tier,
    clip_text,
)
from bonsai.services.memory.frontmatter_edit import edit_entry, render_new
from bonsai.services.memory.naming import NAME_MAX, NAME_RE, name_problem
from bonsai.services.memory.store import MemoryStore, MemoryStoreError, StoreScan

DUPLICATE_THRESHOLD = 0.75
TOOL_NAME = "memory_write"

TOOL_DESCRIPTION = (
    "Save one durable fact to bonsai's persistent memory so it is recalled in later "
    "conversations. Use tier 'user' for the user's preferences and standing corrections "
    "(they follow the user across projects) and tier 'project' for goals, constraints and "
    "decisions about this project that the code itself does not record (stored in "
    ".bonsai/memory/ and shared through git). One fact per entry, a short kebab-case name, "
    "a one-line description. Writing an existing name replaces that entry.\n"
    "Do NOT store what the repository already records or what will not matter later: code "
    "structure, APIs or file layout (read the code instead), how a past bug was fixed (that "
    "is in git history), anything already in steering files such as AGENTS.md or "
    "CLAUDE.md, and details that only matter in the current conversation. Never store "
    "secrets. A save at least 75% similar to an existing entry is refused: update that "
    "entry by its name instead."
)


class MemoryWriteArgs(BaseModel):
    """Arguments of the ``memory_write`` tool."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        description="kebab-case file name of the entry, without .md",
        max_length=NAME_MAX,
        json_schema_extra={"pattern": NAME_RE.pattern},
    )
    fact: str = Field(min_length=1, description="the fact itself, in markdown (at most 4 KiB)")
    description: str | None = Field(
        None, max_length=DESCRIPTION_MAX, description="one line summarising the fact"
    )
    type: EntryType | None = Field(
        None, description="user | preference | project | reference (default: from the tier)"
    )
    tier: Tier = Field("project", description="'user' (follows you) or 'project' (this repo)")


def tool_schema() -> dict[str, object]:
    """The tool definition (name, description, JSON Schema of the arguments)."""
    return {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "parameters": MemoryWriteArgs.model_json_schema(),
    }


class WritePlan(BaseModel):
    """A validated write, ready for :func:`apply_plan`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tier: Tier
    name: str
    path: Path
    label: str
    created: bool
    new_text: str
    diff: str
    note: str
    entry_file: EntryFile


class MemoryWriteError(MemoryStoreError):
    """The write was refused; the message is shown to the model or user."""


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of stemmed content-word sets (see the module notes)."""
    return jaccard(stemmed_set(a), stemmed_set(b))


def near_duplicate(
    text: str, entries: list[MemoryEntry], *, skip: tuple[Tier, str] | None = None
) -> tuple[MemoryEntry, float] | None:
    """The most similar entry at or above the threshold (ties: by name)."""
    best: tuple[MemoryEntry, float] | None = None
    for entry in sorted(entries, key=lambda e: (e.tier, e.name)):
        if skip == (entry.tier, entry.name):
            continue
        score = similarity(text, f"{entry.description}\n{entry.body}")
        if score >= DUPLICATE_THRESHOLD and (best is None or score > best[1]):
            best = (entry, score)
    return best


def plan_write(
    args: MemoryWriteArgs,
    store: MemoryStore,
    scan: StoreScan,
    all_entries: list[MemoryEntry],
    today: date,
    label: str,
) -> WritePlan:
    """Validate ``args`` against ``store`` (the tier's store, freshly scanned as
    ``scan``) and prepare the write; ``all_entries`` feeds the duplicate guard."""
    fact, description = _validated_text(args)
    path = _target_path(store, args.name)
    _refuse_duplicates(f"{description}\n{fact}", all_entries, (store.tier, args.name))
    existing = _existing_file(path, scan)
    entry_type = args.type or ("user" if store.tier == "user" else "project")
    new_file = _new_file(existing, args.name, description, entry_type, fact, today)
    return WritePlan(
        tier=store.tier,
        name=args.name,
        path=path,
        label=label,
        created=existing is None,
        new_text=new_file.text,
        diff=unified_diff(existing.text if existing else None, new_file.text, label),
        note=f"remembered: {description} ({store.tier} memory: {label})",
        entry_file=new_file,
    )


def _validated_text(args: MemoryWriteArgs) -> tuple[str, str]:
    """The normalised fact and its description (raises MemoryWriteError)."""
    problem = name_problem(args.name)
    if problem:
        raise MemoryWriteError(f"invalid name: {problem}")
    fact = args.fact.replace("\r\n", "\n").strip()
    if not fact:
        raise MemoryWriteError("the fact is empty")
    if len(fact.encode("utf-8")) > BODY_MAX_BYTES:
        raise MemoryWriteError(f"the fact is longer than {BODY_MAX_BYTES} bytes; keep it short")
    return fact, _description(args.description, fact)


def _target_path(store: MemoryStore, name: str) -> Path:
    try:
        return store.path_for(name)
    except MemoryStoreError as exc:
        raise MemoryWriteError(str(exc)) from exc


def _refuse_duplicates(text: str, entries: list[MemoryEntry], skip: tuple[Tier, str]) -> None:
    duplicate = near_duplicate(text, entries, skip=skip)
    if duplicate:
        other, score = duplicate
        raise MemoryWriteError(
            f"refused: {score:.0%} similar to the existing {other.tier} entry {other.name!r} "
            f"({other.description}); update that entry by writing to its name instead"
        )


def apply_plan(plan: WritePlan, store: MemoryStore) -> None:
    store.write(plan.path, plan.entry_file)


def _description(given: str | None, fact: str) -> str:
    if given is not None and given.strip():
        text = " ".join(given.split())
        if len(text) > DESCRIPTION_MAX:
            raise MemoryWriteError(f"description is longer than {DESCRIPTION_MAX} characters")
        return text
    first = next(line for line in fact.splitlines() if line.strip())
    return clip_text(first.lstrip("#").strip(), DESCRIPTION_MAX)


def _existing_file(path: Path, scan: StoreScan) -> EntryFile | None:
    pair = scan.entries.get(path.stem)
    if pair is not None:
        return pair[0]
    if path.exists():
        raise MemoryWriteError(
            f"{path} exists but is not a readable memory entry; fix or remove it by hand"
        )
    return None


def _new_file(
    existing: EntryFile | None,
    name: str,
    description: str,
    entry_type: EntryType,
    fact: str,
    today: date,
) -> EntryFile:
    if existing is None:
        fields = {
            "name": name,
            "description": description,
            "type": entry_type,
            "created": today,
            "updated": today,
        }
        return render_new(fields, fact)
    changes = {"description": description, "type": entry_type}
    edited = edit_entry(existing, set_keys=changes, body=fact)
    if edited is existing:
        return existing
    return edit_entry(edited, set_keys={"updated": today})


def unified_diff(old_text: str | None, new_text: str, label: str) -> str:
    """A git-style unified diff of one memory file (``/dev/null`` when new)."""
    old_lines = (old_text or "").splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    a, b = ("", "") if label.startswith("/") else ("a/", "b/")
    before = "/dev/null" if old_text is None else f"{a}{label}"
    lines = difflib.unified_diff(old_lines, new_lines, fromfile=before, tofile=f"{b}{label}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
