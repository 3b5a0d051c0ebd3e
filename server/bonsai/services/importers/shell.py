"""Evidence for a shell command line: search, list, plain read, write or command.

A heuristic over the command's words, never over its output. Leading ``cd``/
``export``/``source`` segments are ignored; a search tool anywhere in the
pipeline makes it a search; ``cat FILE``, ``sed -n 'A,Bp' FILE`` and
``head -n N FILE`` alone are reads; ``ls``/``tree`` alone are listings;
``cat``/``echo``/``printf`` redirected into a file, or ``tee FILE``, are writes.
"""

from __future__ import annotations

import re

from bonsai.domain import Evidence

SEARCH_VERBS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate"})
LIST_VERBS = frozenset({"ls", "tree", "dir"})
SKIP_VERBS = frozenset({"cd", "export", "source", ".", "set", "pushd", "popd"})
WRITE_VERBS = frozenset({"cat", "echo", "printf"})
OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
LEX_LIMIT = 2_000
# shell words (quotes kept together) and the control operators between them, as
# POSIX shlex with punctuation_chars=";&|" splits them, but in one regex pass
TOKEN = re.compile(r"""(?:[^\s;&|'"\\]+|'[^']*'|"(?:\\.|[^"\\])*"|\\.)+|\|\||&&|;;|\|&|[;&|]+""")
UNQUOTE = re.compile(r"""'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)""")
SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


def shell_evidence(command: str, *, ok: bool = True) -> Evidence:
    segments = [seg for seg in _segments(command) if seg and seg[0] not in SKIP_VERBS]
    if any(_is_search(seg) for seg in segments):
        return Evidence(kind="search", ok=ok)
    if len(segments) == 1:
        found = _single(segments[0], ok)
        if found is not None:
            return found
    return Evidence(kind="command", ok=ok)


def _segments(command: str) -> list[list[str]]:
    text = command.split("\n", 1)[0] if "<<" in command else command
    text = text[:LEX_LIMIT]  # the verbs are near the start; a long script is not lexed whole
    segments: list[list[str]] = [[]]
    for token in TOKEN.findall(text):
        if token in OPERATORS:
            segments.append([])
        else:
            segments[-1].append(UNQUOTE.sub(_unquoted, token))
    return segments


def _unquoted(match: re.Match[str]) -> str:
    return next((g for g in match.groups() if g is not None), "")


def _is_search(seg: list[str]) -> bool:
    if seg[0] in SEARCH_VERBS:
        return True
    return len(seg) > 1 and seg[0] == "git" and seg[1] == "grep"


def _single(seg: list[str], ok: bool) -> Evidence | None:
    verb, args = seg[0], seg[1:]
    target = _redirect_target(args)
    if target is not None and verb in WRITE_VERBS:
        return Evidence(kind="write", path=target, ok=ok)
    if verb == "tee" and _positional(args):
        return Evidence(kind="write", path=_positional(args)[0], ok=ok)
    if target is not None or "<" in args:
        return None
    if verb in LIST_VERBS:
        paths = _positional(args)
        return Evidence(kind="list", path=paths[0] if len(paths) == 1 else None, ok=ok)
    if verb == "cat" and len(args) == 1 and not args[0].startswith("-"):
        return Evidence(kind="read", path=args[0], ok=ok)
    if verb == "sed":
        return _sed_read(args, ok)
    if verb == "head":
        return _head_read(args, ok)
    return None


def _redirect_target(args: list[str]) -> str | None:
    for index, token in enumerate(args):
        if token in (">", ">>") and index + 1 < len(args):
            return args[index + 1]
        if token.startswith(">") and token.strip(">"):
            return token.lstrip(">")
    return None


def _positional(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _sed_read(args: list[str], ok: bool) -> Evidence | None:
    if len(args) != 3 or args[0] != "-n":
        return None
    match = SED_RANGE.match(args[1])
    if match is None:
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    return Evidence(kind="read", path=args[2], start_line=start, end_line=end, ok=ok)


def _head_read(args: list[str], ok: bool) -> Evidence | None:
    count: int | None = None
    rest = list(args)
    if len(rest) >= 2 and rest[0] == "-n" and rest[1].isdigit():
        count, rest = int(rest[1]), rest[2:]
    elif rest and re.fullmatch(r"-(?:n)?\d+", rest[0]):
        count, rest = int(rest[0].lstrip("-n")), rest[1:]
    if len(rest) != 1 or rest[0].startswith("-"):
        return None
    return Evidence(kind="read", path=rest[0], start_line=1, end_line=count or 10, ok=ok)
