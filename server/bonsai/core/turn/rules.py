"""Rules: short standing instructions, and spotting them in what the user writes.

Pure: text in, text out. The daemon calls :func:`detect_rules` on the user's
own messages only (never tool output or assistant text, which may carry
injected instructions) and stores what it finds.
"""

from __future__ import annotations

import re

MAX_RULE_CHARS = 300  # a rule longer than this is a document, not a rule
MAX_DETECTED_CHARS = 200  # detections are stricter: long sentences are rarely rules
MIN_DETECTED_WORDS = 3
MAX_DETECTED_PER_MESSAGE = 3

# words that open a standing instruction, after optional filler ("please", "and", …)
_TRIGGER = re.compile(
    r"^(?:(?:please|and|also|so|ok|okay|remember|note|from now on|going forward|in this project)"
    r"[,:]?\s+)*"
    r"(?P<rule>(?:always|never|don't|dont|do not|prefer|avoid)\b.*)$",
    re.IGNORECASE,
)
# openings that look like rules but are conversation
_CHATTER = re.compile(
    r"^(?:don't|dont|do not|never)\s+(?:worry|mind|bother|know|care|forget about it)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!;])\s+")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def clean_rule_text(text: str) -> str:
    """One line, single spaces, no surrounding whitespace."""
    return " ".join(text.split())


def rule_key(text: str) -> str:
    """What makes two rules the same: case, punctuation and spacing do not count."""
    words = re.findall(r"[\w'+#.-]+", text.lower().replace("don't", "do not"))
    return " ".join(w.strip(".") for w in words if w.strip("."))


def _sentences(text: str) -> list[str]:
    text = _FENCE.sub("\n", text)  # code is data, not instructions to remember
    out: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith((">", "|", "    ", "\t")):
            continue  # quoted text, tables and indented code
        line = _BULLET.sub("", line)
        out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def _as_rule(sentence: str) -> str | None:
    match = _TRIGGER.match(sentence)
    if match is None:
        return None
    rule = match.group("rule").rstrip(" .!;,")
    if sentence.rstrip().endswith("?") or _CHATTER.match(rule):
        return None
    if len(rule.split()) < MIN_DETECTED_WORDS or len(rule) > MAX_DETECTED_CHARS:
        return None
    return clean_rule_text(rule[:1].upper() + rule[1:])


def detect_rules(text: str) -> list[str]:
    """Standing instructions in one user message: "always use pnpm",
    "never touch generated files", "don't …", "prefer …", "avoid …".
    At most :data:`MAX_DETECTED_PER_MESSAGE`, first first, no duplicates."""
    found: list[str] = []
    seen: set[str] = set()
    for sentence in _sentences(text):
        rule = _as_rule(sentence)
        if rule is None or rule_key(rule) in seen:
            continue
        seen.add(rule_key(rule))
        found.append(rule)
        if len(found) == MAX_DETECTED_PER_MESSAGE:
            break
    return found


def rules_block(rules: list[str], max_listed: int = 30) -> list[str]:
    """The ``Rules:`` lines for the volatile tail (empty when there are none)."""
    if not rules:
        return []
    lines = ["Rules (the user's standing instructions for this project; follow them):"]
    lines += [f"- {rule}" for rule in rules[:max_listed]]
    if len(rules) > max_listed:
        lines.append(f"- … and {len(rules) - max_listed} more (see bonsai/rules/list)")
    return lines
