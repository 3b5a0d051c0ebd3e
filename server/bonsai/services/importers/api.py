"""The entry points: ``import_file``, ``import_runs`` and ``parse_text``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bonsai.services.importers import (
    aider,
    anthropic_fmt,
    claude_code,
    codex,
    mini_swe,
    openai_fmt,
    openhands,
    swe_agent,
)
from bonsai.services.importers.detect import TAIL_BYTES, detect_format, detection_head
from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.jsonread import decode
from bonsai.services.importers.model import FORMATS, FormatName, ImportedSession
from bonsai.services.importers.recording_file import read_recording

Parser = Callable[[str, str, int], ImportedSession]
TOO_DEEP = "nested too deeply to import (JSON arrays or objects thousands of levels deep)"
PARSERS: dict[FormatName, Parser] = {
    "mini-swe-agent": mini_swe.parse,
    "claude-code": claude_code.parse,
    "codex": codex.parse,
    "openhands": openhands.parse,
    "swe-agent": swe_agent.parse,
    "aider": aider.parse,
    "openai": openai_fmt.parse,
    "anthropic": anthropic_fmt.parse,
}


def _read(path: Path, fmt: str) -> tuple[str, FormatName]:
    source = str(path)
    data = read_recording(Path(path))
    name = _detect(Path(path), data) if fmt == "auto" else _check(fmt, source)
    return decode(data, source), name


def import_file(path: Path, fmt: str = "auto", run: int = 0) -> ImportedSession:
    """Import run ``run`` of the recorded session at ``path``.

    ``fmt`` is one of :data:`FORMATS` or ``auto`` (detected from the content).
    Returns the whole run or raises :class:`ImportFormatError` (also for an
    unreadable file); nothing is ever half imported."""
    text, name = _read(path, fmt)
    return _parse(PARSERS[name], text, str(path), run)


def import_runs(path: Path, fmt: str = "auto") -> list[ImportedSession]:
    """Every run of the recording at ``path``, in order (the file is read once)."""
    text, name = _read(path, fmt)
    parser = PARSERS[name]
    first = _parse(parser, text, str(path), 0)
    return [first, *(_parse(parser, text, str(path), run) for run in range(1, first.runs))]


def parse_text(text: str, fmt: str, run: int = 0, source: str = "<text>") -> ImportedSession:
    """Import from text already in memory (tests, editors). ``fmt`` may be
    ``auto``; ``source`` names the text in errors."""
    text = text.removeprefix("\ufeff")
    if fmt == "auto":
        data = text.encode("utf-8", "surrogatepass")
        name = _detect(Path(source), data)
    else:
        name = _check(fmt, source)
    return _parse(PARSERS[name], text, source, run)


def _detect(path: Path, data: bytes) -> FormatName:
    try:
        return detect_format(path, detection_head(data), data[-TAIL_BYTES:])
    except RecursionError:
        raise ImportFormatError(str(path), TOO_DEEP) from None


def _parse(parser: Parser, text: str, source: str, run: int) -> ImportedSession:
    """``parser`` on ``text``; JSON nested deeper than Python's stack is an error
    naming the file, not a crash of the import (or of the daemon's request)."""
    try:
        return parser(text, source, run)
    except RecursionError:
        raise ImportFormatError(source, TOO_DEEP) from None


def _check(fmt: str, source: str) -> FormatName:
    for name in FORMATS:
        if fmt == name:
            return name
    raise ImportFormatError(
        source, f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}"
    )
