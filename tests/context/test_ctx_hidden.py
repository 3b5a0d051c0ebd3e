"""Recall ranks what the model's window lacks first."""

from __future__ import annotations

from bonsai.core.context.context_state import ContextState, StubEntry, SummaryState
from bonsai.core.context.hidden import hidden_ids, recall_order


def test_stubbed_folded_and_dropped_messages_are_hidden() -> None:
    stub = StubEntry(text="[stub]", reason="old", origin="gc", tokens_before=500, turn=1)
    summary = SummaryState(
        text="s", through_seq=3, folded=["m1", "m2"], mode="deterministic", revision=1, turn=1
    )
    state = ContextState(stubs={"m5": stub}, summary=summary, drops=["m7"], pins=["m9"])
    assert hidden_ids(state) == {"m1", "m2", "m5", "m7"}


def test_hidden_observations_come_first_then_the_agents_hidden_words() -> None:
    hits = ["m9", "m2", "m8", "m5", "m1", "m4"]
    hidden = {"m1", "m4", "m5"}.__contains__
    observation = {"m1", "m5", "m9"}.__contains__  # m4 is the agent's own message
    assert recall_order(hits, hidden, observation) == ["m5", "m1", "m4", "m9", "m2", "m8"]
