"""After each model step: the session's ``last_usage`` and the counter's calibration.

With no usage from the server, the estimate is shown (``reported: false``) and
nothing is calibrated."""

from __future__ import annotations

from bonsai.services.providers.types import UsageReport
from bonsai.services.tokens import Count
from bonsai.session.steps.base import TurnScope, TurnStep


class UsageRecord(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def after_model(self, report: UsageReport | None, totals: dict[str, int]) -> None:
        bridge, store, sid = self.scope.bridge, self.scope.host.store, self.scope.session_id
        estimated = bridge.last.totals.used if bridge.last else 0
        totals["estimated"] = totals.get("estimated", 0) + estimated
        if report is None:
            unreported = {"input": 0, "cached": 0, "output": 0, "estimated": estimated}
            store.set_state(sid, "last_usage", {**unreported, "reported": False})
            return
        usage = {
            "input": report.input_tokens,
            "cached": report.cached_input_tokens,
            "output": report.output_tokens,
            "estimated": estimated,
        }
        store.set_state(sid, "last_usage", usage)
        if estimated and report.input_tokens:
            bridge.counter.observe_usage(
                Count(tokens=estimated, confidence="low"), report.input_tokens
            )
