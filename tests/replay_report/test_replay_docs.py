"""docs/replay.md documents every JSON field of the report, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from bonsai.core.replay.report import PricedCost, ReplayReport, ReplayTurn

DOC = Path(__file__).resolve().parents[2] / "docs" / "replay.md"


def _aliases(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def _documented(section: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", body, re.MULTILINE))


def test_every_report_field_is_documented() -> None:
    assert _documented("Report fields") == _aliases(ReplayReport)


def test_every_turn_field_is_documented() -> None:
    assert _documented("Turn fields") == _aliases(ReplayTurn)


def test_every_priced_field_is_documented() -> None:
    assert _documented("Priced costs") == _aliases(PricedCost)
