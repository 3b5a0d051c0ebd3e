"""User-role messages that an agent harness wrote, not the person: recognised so
that they never displace the task statement.

Harnesses answer a malformed reply or a bad tool call with a note in the user
role (mini-swe-agent's format-error notice, SWE-agent's "Parameter … is
expected …", OpenHands' "Please continue working on the task …"). Counted as
user messages, two such notes were enough to push the task statement out of the
protected latest user messages, and a fold could swallow it. A harness note is a
user message that is not the session's first and opens with one of the
harnesses' fixed phrasings below; everything else in the user role is the
person's (a real request the agent must keep).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bonsai.core.context.pipeline_types import Item

_NOTES = re.compile(
    r"\A\s*(?:"
    r"Please always provide EXACTLY ONE action"  # mini-swe-agent: format error
    r"|The last command <command>.*?</command> timed out"  # mini-swe-agent: timeout
    r"|Your output was not formatted correctly"  # SWE-agent: format error
    r"|Your last output did not use any tool calls"  # SWE-agent: no function call
    r"|Your bash command contained syntax errors"  # SWE-agent: blocked action
    r"|Parameter '[^'\n]{1,80}' is (?:expected|required)"  # SWE-agent: bad tool parameter
    r"|Please continue working on the task on whatever approach"  # OpenHands: fake user
    r")",
    re.IGNORECASE | re.DOTALL,
)
_HEAD = 400  # the phrasings are at the start: never scan a long message whole


def is_harness_note(text: str) -> bool:
    """Whether a user message's text opens with a harness's fixed phrasing."""
    return _NOTES.match(text[:_HEAD]) is not None


def person_messages(items: Sequence[Item]) -> list[Item]:
    """The user messages the person wrote, in order: every user message but the
    harness notes (the first user message always counts: it is the task)."""
    users = [item for item in items if item.message.role == "user"]
    return users[:1] + [u for u in users[1:] if not is_harness_note(u.message.content)]
