"""A folded view's trace: which file, which lines, and the distinctive names they held.

When a fold removes a view of a file's lines (a read, or a command printing
numbered lines such as ``nl -ba f | sed -n 'A,Bp'`` or ``cat -n f``), the
summary keeps a line ``seen in `path`:A-B: name1, name2`` so that the agent
still knows where what it read was, and can write the names it goes on to use
(measured: most of what folds remove and the agent needs later are such views,
half of it names alone). Names are identifiers with an underscore, an inner
capital or a dot, at least 5 characters, not the language's own; the names the
agent wrote after the view (before the fold: ``core/context/pointed.py``) come
first, then those a line of the view defines, then the rarest in the session so
far. A name the request still holds after the fold is left out: the agent can
read it there, and the room goes to one it cannot.
"""

from __future__ import annotations

import builtins
import json
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.pointed import said_after, said_names

NAMES_PER_VIEW = 6
MIN_VIEW_LINES = 3
MAX_CANDIDATES = 40  # names per view whose rarity is counted, first seen first
RARITY_CHARS = 200_000  # rarity is counted over the latest messages' text
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|:|\|)")
_NAME = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\b")
_DEFINES = re.compile(
    r"^\s*(?:\d+(?:\t|:|\|))?\s*(?:async\s+)?(?:def|class|fn|func|function)\s+(\w+)"
)
_CAMEL = re.compile(r"[a-z][A-Z]")
_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{1,5})(?![\w/])")
_GENERAL = frozenset(dir(builtins)) | frozenset(keyword.kwlist)
_COMMON = frozenset({"self", "cls", "None", "True", "False"})
WORD_TRIES = 8  # occurrences of a name checked by hand before the regular expression


@dataclass(frozen=True, slots=True)
class Trace:
    path: str
    start: int | None
    end: int | None
    names: tuple[str, ...]

    def entry(self) -> str:
        where = f"`{self.path}`"
        if self.start is not None and self.end is not None:
            where += f":{self.start}-{self.end}"
        return f"seen in {where}: " + ", ".join(f"`{n}`" for n in self.names)


def _distinct(name: str) -> bool:
    if len(name) < 5 or name in _GENERAL or name in _COMMON:
        return False
    if name.startswith("__") and name.endswith("__"):
        return False
    return "_" in name.strip("_") or "." in name or bool(_CAMEL.search(name))


def _defined_name(name: str) -> bool:
    """A name a line defines, worth a trace: not a dunder (every class has ``__init__``)."""
    return len(name) >= 4 and not (name.startswith("__") and name.endswith("__"))


def _word_char(ch: str) -> bool:
    """What ``\\w`` matches in a ``str`` pattern: a Unicode letter or digit, or ``_``."""
    return ch.isalnum() or ch == "_"


def _written(name: str, text: str) -> bool:
    """``name`` in ``text`` as a whole word (not inside a longer name, nor after a dot):
    the first few occurrences checked by hand, the rest by one regular expression, so a
    name written many times inside longer names costs no loop in Python."""
    at = text.find(name)
    for _ in range(WORD_TRIES):
        if at < 0:
            return False
        end = at + len(name)
        before = text[at - 1] if at else ""
        starts = not (before == "." or (before and _word_char(before)))
        if starts and (end >= len(text) or not _word_char(text[end])):
            return True
        at = text.find(name, at + 1)
    if at < 0:
        return False
    whole = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])")
    return whole.search(text, at) is not None


def _command(arguments: str) -> str:
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return arguments
    if isinstance(args, dict):
        return " ".join(str(v) for v in args.values() if isinstance(v, str))
    return str(args)


def _where(item: Item, arguments: str) -> tuple[str, int | None, int | None] | None:
    """The file and line range a tool output shows, or ``None`` when it is no view."""
    message = item.message
    lines = [ln for ln in message.content.splitlines() if ln.strip()]
    if len(lines) < MIN_VIEW_LINES:
        return None
    ev = message.evidence
    numbers = [int(m.group(1)) for ln in lines if (m := _NUMBERED.match(ln))]
    numbered = len(numbers) * 2 >= len(lines)
    if ev is not None and ev.kind == "read" and ev.ok and ev.path:
        if numbered:
            return ev.path, numbers[0], numbers[-1]
        start = ev.start_line or 1
        return ev.path, start, ev.end_line or start + len(message.content.splitlines()) - 1
    if not numbered:
        return None
    files = _FILE.findall(_command(arguments))
    if not files:
        return None
    return files[-1], numbers[0], numbers[-1]


def view_where(item: Item, arguments: str) -> tuple[str, int | None, int | None] | None:
    """The file and line range a tool output shows (``arguments``: its call's), or
    ``None`` when it is no view of a file's lines."""
    return _where(item, arguments)


def _names(
    text: str, rarity: dict[str, int], said: frozenset[str], held: frozenset[str]
) -> tuple[str, ...]:
    """The view's names for its trace: those the agent wrote after the view, then
    those its lines define, then the rarest in the session; none of ``held``
    (the names the request still holds)."""
    defined: list[str] = []
    seen: dict[str, int] = {}
    for k, line in enumerate(text.splitlines()):
        match = _DEFINES.match(line)
        if match and _defined_name(match.group(1)) and match.group(1) not in defined:
            defined.append(match.group(1))
        for found in _NAME.finditer(_NUMBERED.sub("", line)):
            name = found.group(0)
            if _distinct(name):
                seen.setdefault(name, k)
    pointed = [n for n in seen if n in said and n not in held]
    first = [*pointed, *(n for n in defined if n not in pointed and n not in held)]
    rest = sorted(
        (n for n in seen if n not in first and n not in held),
        key=lambda n: (rarity.get(n, 0), seen[n]),
    )
    return tuple([*first, *rest][:NAMES_PER_VIEW])


def view_traces(
    span: Sequence[Item],
    calls: dict[str, tuple[str, str]],
    session: Sequence[Item],
    held: str = "",
) -> list[str]:
    """The trace entries of the views in ``span`` (oldest first); rarity is counted
    over ``session`` (the messages so far); a name in ``held`` (the text the
    request keeps after the fold) needs no trace."""
    views = []
    for item in span:
        if item.message.role != "tool":
            continue
        _, arguments = calls.get(item.message.tool_call_id or "", ("", ""))
        where = _where(item, arguments)
        if where is not None:
            views.append((item, where))
    if not views:
        return []
    corpus = "\n".join(i.message.content for i in session)[-RARITY_CHARS:]
    position = {i.id: k for k, i in enumerate(session)}
    out = []
    for item, (path, start, end) in views:
        content = item.message.content
        named = dict.fromkeys(m.group(0) for m in _NAME.finditer(content))
        kept = frozenset(n for n in named if _written(n, held))
        candidates = [n for n in named if _distinct(n) and n not in kept]
        rarity = {n: corpus.count(n) for n in candidates[:MAX_CANDIDATES]}
        at = position.get(item.id)
        said = said_names(said_after(session, at)) if at is not None else frozenset()
        names = _names(content, rarity, said, kept)
        if names:
            out.append(Trace(path, start, end, names).entry())
    return out
