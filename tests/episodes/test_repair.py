"""Resume repair: inconsistent episode state is fixed conservatively and reported."""

from __future__ import annotations

from episode_helpers import items_of, kinds, make_input, topic

from bonsai.core.context import ContextState, assemble
from bonsai.core.context.context_state import EpisodeState


def two_archived() -> tuple[list, ContextState]:
    messages = [
        *topic("alpha", 5, 3_000),
        *topic("beta", 5, 3_000),
        *topic("gamma", 1, 500, done=False),
    ]
    items = items_of(messages)
    state = assemble(make_input(items)).state
    assert state.episodes is not None and len(state.episodes.archives) == 2
    return items, state


def with_archives(state: ContextState, **changes: object) -> ContextState:
    assert state.episodes is not None
    return state.model_copy(update={"episodes": state.episodes.model_copy(update=changes)})


def test_an_archive_that_no_longer_matches_is_undone_and_blocked() -> None:
    items, state = two_archived()
    assert state.episodes is not None
    alpha, beta = sorted(state.episodes.archives.items(), key=lambda kv: kv[1].number)
    broken = beta[1].model_copy(update={"ids": [*beta[1].ids, "m_gone"]})
    loaded = ContextState.model_validate_json(
        with_archives(state, archives={alpha[0]: alpha[1], beta[0]: broken}).model_dump_json()
    )
    assembly = assemble(make_input(items, state=loaded, window=400_000))
    [repair] = [r for r in assembly.records if r.kind == "episode-repair"]
    assert repair.node_id == "ep:2" and "no longer match" in repair.detail
    assert [e.state for e in assembly.episodes] == ["archived", "closed", "open"]
    assert not assembly.episodes[1].archivable and "not archivable" in assembly.episodes[1].note
    assert assembly.state.episodes is not None
    assert list(assembly.state.episodes.archives) == [alpha[0]], "the consistent one is kept"
    assert any("<beta2>" in m.content for m in assembly.messages), "beta is sent in full again"


def test_repair_is_final_beta_is_not_archived_again_under_pressure() -> None:
    items, state = two_archived()
    assert state.episodes is not None
    key = next(k for k, v in state.episodes.archives.items() if v.number == 2)
    broken = state.episodes.archives[key].model_copy(update={"number": 7})
    loaded = with_archives(state, archives={**state.episodes.archives, key: broken})
    first = assemble(make_input(items, state=loaded))
    assert "episode-repair" in kinds(first)
    second = assemble(make_input(items, state=first.state, turn=2))
    assert "episode-repair" not in kinds(second) and "archive" not in kinds(second)
    assert second.episodes[1].state == "closed" and not second.episodes[1].archivable


def test_an_archive_covering_the_open_episode_is_undone() -> None:
    items, state = two_archived()
    assert state.episodes is not None
    beta_ids = next(v.ids for v in state.episodes.archives.values() if v.number == 2)
    cut = items[: items.index(next(i for i in items if i.id == beta_ids[-1])) + 1]
    assembly = assemble(make_input(cut, state=state, window=400_000))
    [repair] = [r for r in assembly.records if r.kind == "episode-repair"]
    assert "open episode" in repair.detail
    assert assembly.episodes[-1].state == "open"


def test_archives_of_another_branch_wait_untouched() -> None:
    _, state = two_archived()
    other = items_of(topic("elsewhere", 1, 100, done=False))
    other = [i.model_copy(update={"id": f"x{i.id}"}) for i in other]
    assembly = assemble(make_input(other, state=state))
    assert "episode-repair" not in kinds(assembly)
    assert assembly.state.episodes == state.episodes


def test_unknown_restored_and_blocked_keys_are_harmless() -> None:
    items, _ = two_archived()
    state = ContextState(episodes=EpisodeState(restored=["nope"], blocked={"nah": "old"}))
    assembly = assemble(make_input(items, state=state))
    assert kinds(assembly).count("archive") == 2


def test_pinning_an_archived_message_brings_its_episode_back_for_good() -> None:
    items, state = two_archived()
    assert state.episodes is not None
    alpha = next(v for v in state.episodes.archives.values() if v.number == 1)
    pinned = state.model_copy(update={"pins": [alpha.ids[3]]})
    assembly = assemble(make_input(items, state=pinned, turn=2))
    [record] = [r for r in assembly.records if r.kind == "restore"]
    assert record.node_id == "ep:1" and alpha.ids[3] in record.detail
    assert [e.state for e in assembly.episodes][:2] == ["restored", "archived"]
