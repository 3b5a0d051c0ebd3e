"""The last PageRank of a graph is reused when a request's personalization is
the same (the graph keeps the array and compares it; ``graph.LastRank``), and
across processes through the snapshot, whose key is the personalization's hash:
a warm start asking what the last session asked ranks nothing. A user would
notice a stale ranking reused for other inputs (a wrong map) or a ranking
redone for the same ones (a slower first map)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap.graph import personalization_key

TASK = "function_007_two returns the wrong value for core_helper"
OTHER = "Widget012 renders nothing when load_settings fails"


def test_the_same_personalization_reuses_the_ranks_another_ranks_again(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=40)
    service = make_service(root)
    first = service.get(tokens=512, mentions=TASK)
    graph = service._state.current_graph()
    ranks = graph.last_ranks
    assert ranks is not None
    service.forget_previous()
    assert service.get(tokens=512, mentions=TASK).text == first.text
    assert graph.last_ranks is ranks  # compared, not ranked again
    service.forget_previous()
    other = service.get(tokens=512, mentions=OTHER)
    assert graph.last_ranks is not ranks and not np.array_equal(graph.last_ranks, ranks)
    assert other.text != first.text


def test_a_warm_start_reuses_the_saved_ranks_for_the_same_inputs_only(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=40)
    db = tmp_path / "shared.db"
    first = make_service(root, db)
    text = first.get(tokens=512, mentions=TASK).text
    saved = first._state.current_graph().last_rank
    assert saved is not None
    first.stop()  # saves the snapshot with its last ranking, keyed by the hash
    warm = make_service(root, db)
    warm.build()
    graph = warm._state.current_graph()
    assert warm.graph_origin == "loaded"
    loaded = graph.last_rank
    assert loaded is not None and loaded[0] == saved[0]
    assert loaded[1].tobytes() == saved[1].tobytes()
    assert warm.get(tokens=512, mentions=TASK).text == text
    assert graph.last_ranks is loaded[1]  # the key matched: nothing ranked
    warm.forget_previous()
    warm.get(tokens=512, mentions=OTHER)
    again = graph.last_rank
    assert again is not None and again[1] is not loaded[1] and again[0] != saved[0]
    # the key a later snapshot gets is the hash of the personalization it was for
    assert graph._last is not None and graph._last.personalization is not None
    assert again[0] == personalization_key(graph._last.personalization)
