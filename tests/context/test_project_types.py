"""Project types, detected from the marker files at the workspace root, in marker order."""

from __future__ import annotations

from pathlib import Path

from bonsai.services.project_context import environment_part, project_types


def test_markers_are_reported_in_their_order_and_only_files_count(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("all:\n")
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "Cargo.toml").mkdir()  # a folder named like a marker is not one
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "go.mod").write_text("module x\n")
    (tmp_path / "go.mod").symlink_to(tmp_path / "elsewhere" / "go.mod")  # a link to a file is
    (tmp_path / "Gemfile").symlink_to(tmp_path / "missing")  # a dangling link is not
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "setup.py").write_text("")  # below the root: not looked at
    assert project_types(tmp_path) == [
        "python (pyproject.toml)",
        "node (package.json)",
        "go (go.mod)",
        "make (Makefile)",
    ]


def test_a_dotnet_project_is_found_by_its_suffix_and_a_missing_workspace_detects_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "App.sln").write_text("")
    assert project_types(tmp_path) == [".NET (*.csproj/*.sln)"]
    (tmp_path / "App.sln").unlink()
    (tmp_path / "Tool.csproj").mkdir()  # the glob it replaced matched folders too
    assert project_types(tmp_path) == [".NET (*.csproj/*.sln)"]
    gone = tmp_path / "gone"
    assert project_types(gone) == []
    assert "- Project type: not detected" in environment_part(gone, None).text
