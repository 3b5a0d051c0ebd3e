"""``language_for_path`` reads the extension by string operations; it must say
what ``PurePosixPath(path).suffix`` says for any path (dots, hidden files,
trailing slashes, ``.`` and ``..`` parts, case)."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from bonsai.services.repomap.languages import EXTENSIONS, language_for_path

_PIECES = st.sampled_from(["a", "B", ".", "..", "/", "py", "PY", "tsx", "x.", ".py", "", "c"])


def _pathlib(path: str) -> str | None:
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@given(st.lists(_PIECES, max_size=8).map("".join))
def test_the_same_language_as_pathlib_for_any_path(path: str) -> None:
    assert language_for_path(path) == _pathlib(path)


def test_the_edge_cases_by_name() -> None:
    for path in ("", ".", "/", ".py", "a/.py", "a.py/", "a.py/.", "a/..", "x.", "a.PY", "a.b.ts"):
        assert language_for_path(path) == _pathlib(path), path
    assert language_for_path("pkg/mod.py") == "python"
    assert language_for_path("pkg/.hidden") is None
