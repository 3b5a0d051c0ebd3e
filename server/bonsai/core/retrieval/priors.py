"""Small score priors for memory entries: project tier and recency.

The date-match bonus (:mod:`bonsai.core.retrieval.dates`) is larger: it
applies only when the question names a span of time. The others are
tie-breakers (at most 0.02 together, against a fused score whose
keyword part alone spans 0..1), so a fresher or project-level entry wins only
between otherwise comparable matches. ``today`` is passed in: core reads no
clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bonsai.core.retrieval.dates import Span, date_prior


class PriorParams(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    project_tier: float = Field(0.01, ge=0.0)
    recency: float = Field(0.01, ge=0.0, description="bonus for an entry updated today")
    half_life_days: float = Field(90.0, gt=0.0)
    date_match: float = Field(
        0.3, ge=0.0, description="bonus when a date of the entry is in the question's window"
    )
    when_match: float = Field(
        0.2,
        ge=0.0,
        description="bonus for an entry whose text says when (a date, 'last Saturday') when "
        "the question asks when and names no span",
    )
    latest: float = Field(
        0.3,
        ge=0.0,
        description="recency bonus (halved every half_life_days) when the question asks for "
        "the latest",
    )


def recency_bonus(updated: date | None, today: date, params: PriorParams) -> float:
    """``params.recency`` halved every ``half_life_days`` of age (0 when unknown)."""
    if updated is None:
        return 0.0
    age = max((today - updated).days, 0)
    return params.recency * 0.5 ** (age / params.half_life_days)


def memory_prior(
    meta: Mapping[str, Any],
    today: date,
    params: PriorParams,
    window: Span | None = None,
    *,
    latest: bool = False,
    when: bool = False,
) -> float:
    """Prior for a memory document whose metadata has ``tier`` and ``updated``
    (an ISO date string), plus the date-match bonus when the question names a
    ``window`` (:func:`bonsai.core.retrieval.dates.query_window`) and a larger
    recency bonus when it asks for the ``latest``
    (:func:`bonsai.core.retrieval.dates.asks_latest`), and ``when_match`` for
    an entry whose text says when (``meta["timed"]``) when the question asks
    *when* and names no window (:func:`bonsai.core.retrieval.dates.asks_when`);
    unknown or malformed values contribute nothing."""
    bonus = params.project_tier if meta.get("tier") == "project" else 0.0
    bonus += date_prior(meta, window, params.date_match)
    if when and window is None and meta.get("timed") is True:
        bonus += params.when_match
    updated = _parse_date(meta.get("updated"))
    if latest and updated is not None and params.recency > 0:
        bonus += recency_bonus(updated, today, params) * params.latest / params.recency
    return bonus + recency_bonus(updated, today, params)


def _parse_date(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None
