"""The tag cache: warm starts parse nothing, a touch costs a hash, an edit
re-parses only the edited file."""

from __future__ import annotations

import os
from pathlib import Path

from repomap_helpers import ServiceFactory

from bonsai.services.repomap import cache as cache_module
from bonsai.services.repomap.cache import TagCache


def _bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_warm_start_parses_nothing(repo: Path, tmp_path: Path, make_service: ServiceFactory):
    db = tmp_path / "tags.db"
    cold = make_service(repo, db).build()
    assert cold.parsed == cold.files == 64  # 60 modules, core, __init__, leaf, README
    warm = make_service(repo, db).build()
    assert (warm.parsed, warm.hashed, warm.trusted) == (0, 0, cold.files)


def test_touch_is_a_hash_not_a_parse(repo: Path, tmp_path: Path, make_service: ServiceFactory):
    db = tmp_path / "tags.db"
    service = make_service(repo, db)
    service.build()
    target = repo / "pkg" / "mod_007.py"
    _bump_mtime(target)
    stats = service.update_paths([target])
    assert (stats.parsed, stats.hashed) == (0, 1)
    # and a fresh process sees the new mtime as trusted (the row was updated)
    assert make_service(repo, db).build().trusted == 64


def test_content_change_reparses_only_that_file(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    db = tmp_path / "tags.db"
    make_service(repo, db).build()
    target = repo / "pkg" / "mod_011.py"
    target.write_text(target.read_text() + "\n\ndef brand_new_function():\n    pass\n")
    _bump_mtime(target)
    service = make_service(repo, db)
    stats = service.build()
    assert (stats.parsed, stats.trusted) == (1, 63)
    names = {d.name for d in service.tags["pkg/mod_011.py"].definitions}
    assert "brand_new_function" in names


def test_update_paths_edit_delete_create(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.build()
    edited = repo / "pkg" / "mod_003.py"
    edited.write_text("def replaced_entirely():\n    return 1\n")
    _bump_mtime(edited)
    (repo / "pkg" / "mod_004.py").unlink()
    (repo / "pkg" / "fresh.py").write_text("class FreshClass:\n    pass\n")
    stats = service.update_paths(
        [edited, repo / "pkg" / "mod_004.py", "pkg/fresh.py", "/outside/the/workspace.py"]
    )
    assert (stats.parsed, stats.removed) == (2, 1)
    tags = service.tags
    assert [d.name for d in tags["pkg/mod_003.py"].definitions] == ["replaced_entirely"]
    assert "pkg/mod_004.py" not in tags
    assert [d.name for d in tags["pkg/fresh.py"].definitions] == ["FreshClass"]


def test_binary_and_unknown_files(repo: Path, make_service: ServiceFactory):
    (repo / "pkg" / "blob.py").write_bytes(b"def x():\n\x00\x01\x02")
    service = make_service(repo)
    service.build()
    assert "pkg/blob.py" not in service.tags
    readme = service.tags["README.md"]
    assert readme.language is None and readme.definitions == ()


def test_changed_queries_empty_the_cache(tmp_path: Path, monkeypatch):
    db = tmp_path / "tags.db"
    first = TagCache(db)
    first.put_many("ws", [])
    from bonsai.services.repomap.cache import CachedFile, CacheRow

    first.put_many("ws", [CacheRow("a.py", CachedFile(1, 2, "h", "tags", "[null,[],{}]"))])
    assert list(first.load("ws")) == ["a.py"]
    first.close()
    monkeypatch.setattr(cache_module, "SCHEMA_VERSION", cache_module.SCHEMA_VERSION + 1)
    second = TagCache(db)
    assert second.load("ws") == {}
    second.close()


def test_touch_after_a_warm_start_is_a_hash_and_keeps_the_tags(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    """A warm start reads cached rows without their tags; a touched file must
    still be hashed (not parsed) and keep its tags, in memory and on disk."""
    db = tmp_path / "tags.db"
    make_service(repo, db).build()
    before_start = repo / "pkg" / "mod_005.py"
    _bump_mtime(before_start)
    warm = make_service(repo, db)
    assert (warm.build().hashed, warm.last_stats.parsed) == (1, 0)
    during = repo / "pkg" / "mod_006.py"
    _bump_mtime(during)
    assert (warm.update_paths([during]).hashed, warm.last_stats.parsed) == (1, 0)
    for path in ("pkg/mod_005.py", "pkg/mod_006.py"):
        assert {d.name for d in warm.tags[path].definitions} >= {f"Widget{path[-6:-3]}"}
    warm.stop()
    third = make_service(repo, db)
    assert third.build().trusted == 64
    assert "Widget006" in {d.name for d in third.tags["pkg/mod_006.py"].definitions}
