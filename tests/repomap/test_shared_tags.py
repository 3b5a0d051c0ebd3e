"""A second checkout of a project is not a cold build: the tags of every file
whose bytes another checkout already indexed come from the user's tag cache
(``shared_tags.py``), and only the files that differ are parsed. The map is the
one a build from nothing gives, byte for byte; a damaged or malformed entry is
ignored (and the file parsed); entries are bounded, the oldest evicted."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import apsw
import pytest
from repomap_helpers import ServiceFactory

from bonsai.services.repomap.cache import TagCache
from bonsai.services.repomap.shared_tags import SharedTags, entry_check, wait_for_writes

TASK = "function_007_one returns the wrong widget"


def _checkout(repo: Path, name: str) -> Path:
    other = repo.parent / name
    shutil.copytree(repo, other)
    return other


def _fresh_map(make_service: ServiceFactory, root: Path, tmp_path: Path) -> str:
    service = make_service(root, tmp_path / f"fresh-{root.name}" / "repomap.db")
    stats = service.build()
    assert stats.shared == 0
    return service.get(tokens=1024, mentions=TASK).text


def test_a_second_checkout_parses_nothing_and_maps_the_same(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    first = make_service(repo).build()
    assert first.parsed == first.files and first.shared == 0
    other = _checkout(repo, "worktree")
    service = make_service(other)
    stats = service.build()
    assert stats.parsed == 0
    assert stats.shared == stats.files == first.files
    text = service.get(tokens=1024, mentions=TASK).text
    assert "function_007_one" in text
    assert text == _fresh_map(make_service, other, tmp_path)
    fresh = make_service(other, tmp_path / "fresh-tags" / "repomap.db")
    fresh.build()
    assert service.tags == fresh.tags


def test_a_checkout_at_another_version_parses_only_what_differs(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    make_service(repo).build()
    other = _checkout(repo, "next-version")
    (other / "pkg" / "mod_003.py").write_text("def renamed_in_the_next_version():\n    pass\n")
    (other / "pkg" / "brand_new.py").write_text("class BrandNewThing:\n    pass\n")
    (other / "pkg" / "mod_004.py").unlink()
    service = make_service(other)
    stats = service.build()
    assert stats.parsed == 2  # the changed file and the new one
    assert stats.shared == stats.files - 2
    text = service.get(tokens=1024, mentions=TASK).text
    assert text == _fresh_map(make_service, other, tmp_path)
    # the first checkout's next build is warm, and a third checkout of the
    # next version now parses nothing either
    assert make_service(repo).build().parsed == 0
    third = make_service(_checkout(other, "third"))
    assert third.build().parsed == 0


def test_same_path_other_bytes_is_parsed(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    """An entry serves only the bytes it was made from: a checkout whose file
    has the same path but other content gets that content's tags."""
    make_service(repo).build()
    other = _checkout(repo, "hostile")
    core = other / "pkg" / "core.py"
    core.write_text("def planted_instead(x):\n    return x\n")
    service = make_service(other)
    stats = service.build()
    assert stats.parsed == 1
    names = [d.name for d in service.tags["pkg/core.py"].definitions]
    assert names == ["planted_instead"]


def test_a_symlink_out_is_not_read_through_a_shared_entry(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    make_service(repo).build()
    other = _checkout(repo, "linked")
    outside = tmp_path / "outside.py"
    outside.write_bytes((repo / "pkg" / "core.py").read_bytes())  # the shared entry's bytes
    (other / "pkg" / "core.py").unlink()
    (other / "pkg" / "core.py").symlink_to(outside)
    service = make_service(other)
    service.build()
    assert "pkg/core.py" not in service.tags


def _damage(db: Path, path: str, sql: str) -> None:
    wait_for_writes(str(db))  # the build's entries are written on a thread of their own
    conn = apsw.Connection(str(db))
    with conn:
        conn.execute(sql, (path,))
    conn.close()


@pytest.mark.parametrize(
    ("how", "sql"),
    [
        (
            "bit rot",
            "UPDATE shared SET data = replace(data, 'core_helper', 'core_helpex') WHERE path=?",
        ),
        ("not json", "UPDATE shared SET data = '[nonsense' WHERE path=?"),
    ],
)
def test_a_damaged_entry_is_ignored_and_the_file_parsed(
    repo: Path,
    tmp_path: Path,
    make_service: ServiceFactory,
    caplog: pytest.LogCaptureFixture,
    how: str,
    sql: str,
) -> None:
    db = tmp_path / "cache" / "repomap.db"
    make_service(repo).build()
    _damage(db, "pkg/core.py", sql)
    other = _checkout(repo, "damaged")
    service = make_service(other)
    with caplog.at_level(logging.WARNING, logger="bonsai.services.repomap.shared_tags"):
        stats = service.build()
    assert stats.parsed == 1, how
    assert "pkg/core.py" in caplog.text
    assert [d.name for d in service.tags["pkg/core.py"].definitions] == [
        "CoreConfig",
        "load_settings",
        "core_helper",
    ]
    assert service.get(tokens=1024, mentions=TASK).text == _fresh_map(make_service, other, tmp_path)


def test_a_malformed_entry_with_a_good_check_is_ignored(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    """Tags of the wrong shape (what no extraction makes) are refused even when
    the entry's check matches its data."""
    db = tmp_path / "cache" / "repomap.db"
    make_service(repo).build()
    cache = TagCache(db)
    sha = SharedTags(cache).known(["pkg/core.py"])["pkg/core.py"]  # after the build's write
    (digest,) = sha
    bad = '["python",[["core_helper","function","not a line","def core_helper(value):",0]],{},[]]'
    cache.shared_put(
        [("pkg/core.py", digest, bad, entry_check("pkg/core.py", digest, bad))], [], 1 << 30
    )
    cache.close()
    service = make_service(_checkout(repo, "malformed"))
    assert service.build().parsed == 1
    lines = [d.line for d in service.tags["pkg/core.py"].definitions]
    assert lines == [1, 2, 6]


def test_entries_are_bounded_and_the_least_recently_used_go(tmp_path: Path) -> None:
    cache = TagCache(tmp_path / "repomap.db")
    data = '["python",[],{},[]]'
    shared = SharedTags(cache, max_bytes=10 * len(data))
    assert shared.known(["a.py"]) == {}

    def put(names: list[str]) -> None:
        cache.shared_put(
            [(n, "sha", data, entry_check(n, "sha", data)) for n in names], [], 10 * len(data)
        )

    put([f"old{i}.py" for i in range(6)])
    put([f"new{i}.py" for i in range(4)])
    assert len(shared.known([f"old{i}.py" for i in range(6)])) == 6  # at the bound: all kept
    put(["newest.py"])  # one over: the oldest go, down to nine tenths of the bound
    left = shared.known([*(f"old{i}.py" for i in range(6)), *(f"new{i}.py" for i in range(4))])
    assert sorted(left) == sorted(
        [*(f"old{i}.py" for i in range(2, 6)), *(f"new{i}.py" for i in range(4))]
    )
    assert shared.get("newest.py", "sha", 1, 1) is not None
    cache.close()


def test_another_extraction_version_empties_the_entries(tmp_path: Path) -> None:
    cache = TagCache(tmp_path / "repomap.db")
    data = '["python",[],{},[]]'
    assert cache.shared_open(lambda: "version-one")
    cache.shared_put([("a.py", "sha", data, entry_check("a.py", "sha", data))], [], 1 << 20)
    assert cache.shared_open(lambda: "version-one")
    assert cache.shared_hashes(["a.py"]) == {"a.py": frozenset({"sha"})}
    assert cache.shared_open(lambda: "version-two")
    assert cache.shared_hashes(["a.py"]) == {}
    cache.close()


def test_a_branch_switch_takes_the_other_checkouts_tags(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
) -> None:
    """Many files changed at once (a checkout of another branch, seen by the
    watcher) are looked up too; a one-file edit is not (it stays an edit)."""
    other = _checkout(repo, "branch")
    changed = [f"pkg/mod_{k:03d}.py" for k in range(20)]
    for rel in changed:
        (other / rel).write_text(f"def on_the_branch_{rel[8:11]}():\n    pass\n")
    make_service(other).build()
    service = make_service(repo)
    service.build()
    before = (repo / "pkg" / "mod_005.py").read_bytes()
    for rel in changed:
        (repo / rel).write_bytes((other / rel).read_bytes())
    stats = service.update_paths([repo / rel for rel in changed])
    assert (stats.parsed, stats.shared) == (0, 20)
    assert [d.name for d in service.tags["pkg/mod_007.py"].definitions] == ["on_the_branch_007"]
    text = service.get(tokens=1024, mentions=TASK).text
    assert text == _fresh_map(make_service, repo, tmp_path)
    (repo / "pkg" / "mod_005.py").write_bytes(before)  # bytes with an entry, but one file
    stats = service.update_paths([repo / "pkg" / "mod_005.py"])
    assert (stats.parsed, stats.shared) == (1, 0)  # an edit is parsed as before
