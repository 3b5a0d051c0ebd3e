"""A cold build of many files gives a first map from the files that matter most
(those the chat holds and the task names, then the most imported) before the
rest is parsed; the map after the build is the one a build without it gives."""

from __future__ import annotations

from pathlib import Path

from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap.discovery import IgnoreRules, discover
from bonsai.services.repomap.first_map import (
    FIRST_MIN_FILES,
    FirstRequest,
    first_count,
    module_key,
    priority_files,
)
from bonsai.services.repomap.records import RepoMap
from bonsai.settings import RepoMapSettings

MODULES = 240  # + core, __init__, the leaf and the README: a cold build of 244 files
TASK = "tools/leaf_utility.py: obscure_checksum_routine returns the wrong sum for empty data"


def _repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo", modules=MODULES)


def test_a_cold_build_hands_over_a_first_map_of_the_named_and_most_imported_files(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = _repo(tmp_path)
    service = make_service(root, tmp_path / "a.db", RepoMapSettings(workers=2))
    events: list[tuple[str, RepoMap | None]] = []
    stats = service.build(first=FirstRequest(lambda m: events.append(("first", m)), (), TASK, 512))
    events.append(("built", None))
    assert stats.parsed == MODULES + 4
    assert [e for e, _ in events] == ["first", "built"]
    first = events[0][1]
    assert first is not None
    shown = [f.path for f in first.files]
    assert shown[0] == "tools/leaf_utility.py"  # named by the task: parsed first, ranked first
    assert "obscure_checksum_routine" in first.text
    assert "pkg/core.py" in shown  # imported by every module
    chosen = priority_files(root, discover(service.rules).files, first_count(MODULES + 4), (), TASK)
    assert len(chosen) < (MODULES + 4) // 4
    assert set(shown) <= set(chosen)  # made of the files parsed first only
    assert 0 < first.tokens <= 512
    assert first.reason.startswith("first map")


def test_the_map_after_a_first_map_is_the_map_without_one(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = _repo(tmp_path)
    with_first = make_service(root, tmp_path / "a.db", RepoMapSettings(workers=2))
    seen: list[RepoMap] = []
    with_first.build(first=FirstRequest(seen.append, (), TASK, 1024))
    plain = make_service(root, tmp_path / "b.db", RepoMapSettings(workers=2))
    plain.build()
    assert len(seen) == 1
    after, without = with_first.get(1024, (), TASK), plain.get(1024, (), TASK)
    assert after.text == without.text
    assert [f.path for f in after.files] == [f.path for f in without.files]
    assert seen[0].text != after.text  # the first map was of fewer files


def test_a_warm_build_or_a_small_repository_gives_no_first_map(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = _repo(tmp_path)
    seen: list[RepoMap] = []
    make_service(root, tmp_path / "a.db").build(first=FirstRequest(seen.append, (), TASK))
    assert len(seen) == 1
    make_service(root, tmp_path / "a.db").build(first=FirstRequest(seen.append, (), TASK))
    assert len(seen) == 1  # warm: nothing to parse, the whole map comes as soon
    small = write_repo(tmp_path / "small", modules=FIRST_MIN_FILES // 2)
    make_service(small, tmp_path / "c.db").build(first=FirstRequest(seen.append, (), TASK))
    assert len(seen) == 1


def test_a_failing_receiver_of_the_first_map_does_not_break_the_build(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = _repo(tmp_path)

    def broken(_: RepoMap) -> None:
        raise RuntimeError("receiver gone")

    service = make_service(root, tmp_path / "a.db")
    stats = service.build(first=FirstRequest(broken, (), TASK, 1024))
    assert stats.parsed == MODULES + 4
    plain = make_service(root, tmp_path / "b.db")
    plain.build()
    assert service.get(1024, (), TASK).text == plain.get(1024, (), TASK).text


def test_priority_is_chat_files_then_named_files_then_the_most_imported(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "models.py").write_text("class Model:\n    pass\n")
    (root / "app" / "views.py").write_text("from app.models import Model\nimport util\n")
    (root / "app" / "forms.py").write_text("from app.models import Model\n")
    (root / "util.py").write_text("def helper():\n    pass\n")
    (root / "zeta.py").write_text("x = 1  # import models is prose here, not an import line\n")
    (root / "notes.py").write_text("import os\n")
    files = discover(IgnoreRules(root, set(), 1 << 20)).files
    order = priority_files(root, files, 4, ["notes.py"], "the bug is in app/forms.py")
    assert order == ["notes.py", "app/forms.py", "app/__init__.py", "app/models.py"]
    # `app` and `models` are on two files' import lines, `util` on one
    assert priority_files(root, files, 3) == ["app/__init__.py", "app/models.py", "util.py"]
    # named files are kept even past the count
    assert priority_files(root, files, 1, ["zeta.py", "util.py"]) == ["util.py", "zeta.py"]
    assert module_key("pkg/__init__.py") == "pkg"
    assert module_key("src/lib.rs") == "src"
    assert module_key("a/b/widget.test.ts") == "widget"


def test_the_first_map_reads_the_task_without_its_environment_dump(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    """As the full map does (``issue_text.without_dumps``): a ``name: version``
    block naming modules neither picks the files parsed first nor ranks them."""
    root = _repo(tmp_path)
    dump = "\n\nVersions:\n" + "".join(f"mod_{k:03d}: 1.{k}.0\n" for k in range(100, 106))
    maps: list[RepoMap] = []
    for i, text in enumerate((TASK, TASK + dump)):
        service = make_service(root, tmp_path / f"{i}.db", RepoMapSettings(workers=2))
        service.build(first=FirstRequest(maps.append, (), text, 1024))
    assert len(maps) == 2
    assert maps[1].text == maps[0].text
    assert "pkg/mod_100.py" not in [f.path for f in maps[1].files]


def test_files_whose_path_the_task_speaks_of_are_parsed_first(tmp_path: Path) -> None:
    """Up to half of the first files are those whose path shares the task's
    words (a rarer word counts more), before the most imported ones."""
    root = tmp_path / "r"
    (root / "db" / "migrations").mkdir(parents=True)
    (root / "db" / "migrations" / "autodetector.py").write_text("class MigrationAutodetector:\n")
    (root / "db" / "migrations" / "writer.py").write_text("class MigrationWriter:\n")
    (root / "core.py").write_text("def helper():\n    pass\n")
    for k in range(6):
        (root / f"user_{k}.py").write_text("import core\n")
    files = discover(IgnoreRules(root, set(), 1 << 20)).files
    task = "The migration autodetector crashes on a renamed model"
    order = priority_files(root, files, 4, (), task)
    # autodetector.py has both words, writer.py only the commoner one; then `core`,
    # imported by six files
    assert order[:3] == ["db/migrations/autodetector.py", "db/migrations/writer.py", "core.py"]
    assert priority_files(root, files, 2, (), task) == ["db/migrations/autodetector.py", "core.py"]
    assert priority_files(root, files, 2)[0] == "core.py"  # no text: the most imported
