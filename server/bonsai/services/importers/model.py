"""The result of importing one recorded session."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bonsai.domain import Message

FormatName = Literal[
    "mini-swe-agent",
    "claude-code",
    "codex",
    "openhands",
    "swe-agent",
    "aider",
    "openai",
    "anthropic",
]
FORMATS: tuple[FormatName, ...] = get_args(FormatName)  # the same names, in that order


class ImportedSession(BaseModel):
    """One run of a recorded session, as provider-neutral messages.

    ``runs`` is how many runs the file holds (OpenHands JSONL lines, aider chat
    sessions); ``run`` is the 0-based one these messages come from. ``warnings``
    lists everything the importer had to guess, rename or leave out;
    ``outcome`` is what the run ended with when the recording says (a
    mini-swe-agent submission, an OpenHands patch). ``times`` are the messages'
    timestamps (epoch seconds, one per message) when the format records them
    (Claude Code, Codex CLI, OpenHands; see ``stamps``), else ``None``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: FormatName
    title: str
    messages: list[Message]
    runs: int = Field(ge=1)
    run: int = Field(default=0, ge=0)
    source: str
    warnings: list[str] = Field(default_factory=list)
    outcome: str | None = None
    times: list[float | None] | None = None

    @model_validator(mode="after")
    def _one_time_per_message(self) -> ImportedSession:
        if self.times is not None and len(self.times) != len(self.messages):
            raise ValueError(f"{len(self.times)} timestamps for {len(self.messages)} messages")
        return self
