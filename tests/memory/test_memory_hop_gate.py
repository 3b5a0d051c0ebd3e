"""The per-turn relevance gate judges a second-hop hit by the path that found
it: an entry reached through a name shared with a relevant entry is injected
even when it shares no word with the message, and one reached from an entry
the gate turns down is not. Over the real per-turn injection (its 3-entry /
~500-token cap unchanged), BM25-only so the outcome is exact."""

from __future__ import annotations

from bonsai.services.memory import InjectionState


def words(text: str) -> int:
    return len(text.split())


def _seed(service) -> None:
    service.add("Ana Costa works as a technical writer at Lumen Grid.", name="ana-job")
    service.add("Ana now lives in Porto and works remotely from there.", name="ana-home")
    service.add("Bo Lind works as a data analyst at Quarry Labs.", name="bo-job")
    service.add("Cy Park plays the cello in a community orchestra.", name="cy-hobby")
    service.add("Release builds are signed with the project key before upload.", name="signing")


def test_an_entry_found_through_a_relevant_entry_is_injected(make_service) -> None:
    service = make_service(model=False)
    _seed(service)
    message = "Which city did the technical writer from Lumen Grid relocate to?"
    found = [hit.name for hit in service.search(message, 5).results]
    assert found[:2] == ["ana-job", "ana-home"]  # the second hop, through "Ana"
    result = service.recall_for_turn(message, InjectionState(), words)
    assert [e.name for e in result.entries] == ["ana-job", "ana-home"]
    assert result.text is not None and "Porto" in result.text


def test_an_entry_found_through_an_irrelevant_entry_is_not(make_service) -> None:
    service = make_service(model=False)
    _seed(service)
    message = "Lumen is a unit of light, right?"  # one shared word with ana-job
    assert "ana-home" in [hit.name for hit in service.search(message, 5).results]
    result = service.recall_for_turn(message, InjectionState(), words)
    assert result.text is None
    assert result.entries == ()


def test_the_cap_still_holds_with_hop_hits(make_service) -> None:
    service = make_service(model=False, max_entries_per_turn=1)
    _seed(service)
    message = "Which city did the technical writer from Lumen Grid relocate to?"
    result = service.recall_for_turn(message, InjectionState(), words)
    assert [e.name for e in result.entries] == ["ana-job"]
    later = service.recall_for_turn(message, result.state, words)
    assert [e.name for e in later.entries] == ["ana-home"]  # once per conversation
