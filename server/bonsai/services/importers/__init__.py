"""Importers for recorded agent sessions: mini-swe-agent, Claude Code, Codex
CLI, OpenHands, SWE-agent, aider, OpenAI chat and Anthropic messages, all turned into
``bonsai.domain.Message`` lists with typed tool calls, results and evidence.

See ``docs/importers.md`` for the formats, detection and what is kept.
"""

from bonsai.services.importers.api import import_file, import_runs, parse_text
from bonsai.services.importers.detect import detect_format
from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.model import FORMATS, FormatName, ImportedSession

__all__ = [
    "FORMATS",
    "FormatName",
    "ImportFormatError",
    "ImportedSession",
    "detect_format",
    "import_file",
    "import_runs",
    "parse_text",
]
