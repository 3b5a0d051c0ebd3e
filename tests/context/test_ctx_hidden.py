"""Recall ranks what the model's window lacks first."""

from __future__ import annotations

from bonsai.core.context.context_state import ContextState, StubEntry, SummaryState
from bonsai.core.context.hidden import hidden_first, hidden_ids


def test_stubbed_folded_and_dropped_messages_are_hidden() -> None:
    stub = StubEntry(text="[stub]", reason="old", origin="gc", tokens_before=500, turn=1)
    summary = SummaryState(
        text="s", through_seq=3, folded=["m1", "m2"], mode="deterministic", revision=1, turn=1
    )
    state = ContextState(stubs={"m5": stub}, summary=summary, drops=["m7"], pins=["m9"])
    assert hidden_ids(state) == {"m1", "m2", "m5", "m7"}


def test_hidden_hits_come_first_in_their_search_order() -> None:
    hits = ["m9", "m2", "m8", "m5", "m1"]
    assert hidden_first(hits, {"m1", "m5"}.__contains__) == ["m5", "m1", "m9", "m2", "m8"]
