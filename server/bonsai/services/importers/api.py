"""The two entry points: ``import_file`` and ``parse_text``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bonsai.services.importers import aider, openai_fmt, openhands, swe_agent
from bonsai.services.importers.detect import HEAD_BYTES, detect_format
from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.jsonread import decode
from bonsai.services.importers.model import FORMATS, FormatName, ImportedSession

Parser = Callable[[str, str, int], ImportedSession]
PARSERS: dict[FormatName, Parser] = {
    "openai": openai_fmt.parse,
    "swe-agent": swe_agent.parse,
    "openhands": openhands.parse,
    "aider": aider.parse,
}


def import_file(path: Path, fmt: str = "auto", run: int = 0) -> ImportedSession:
    """Import run ``run`` of the recorded session at ``path``.

    ``fmt`` is one of ``openai``, ``swe-agent``, ``openhands``, ``aider`` or
    ``auto``. Returns the whole session or raises :class:`ImportFormatError`
    (also for an unreadable file); nothing is ever half imported."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFormatError(source, f"cannot read the file: {exc.strerror or exc}") from None
    name = detect_format(Path(path), data[:HEAD_BYTES]) if fmt == "auto" else _check(fmt, source)
    return PARSERS[name](decode(data, source), source, run)


def parse_text(text: str, fmt: str, run: int = 0, source: str = "<text>") -> ImportedSession:
    """Import from text already in memory (tests, editors). ``fmt`` may be
    ``auto``; ``source`` names the text in errors and helps detection."""
    text = text.removeprefix("\ufeff")
    if fmt == "auto":
        name = detect_format(Path(source), text[:HEAD_BYTES].encode("utf-8", "surrogatepass"))
    else:
        name = _check(fmt, source)
    return PARSERS[name](text, source, run)


def _check(fmt: str, source: str) -> FormatName:
    for name in FORMATS:
        if fmt == name:
            return name
    raise ImportFormatError(
        source, f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}"
    )
