"""Project context: the system parts gathered from disk and git.

``gather_parts`` returns, in order: the persona, the environment, steering
files (nearest first), the skills index, the subagents index, the repository
map, and the volatile tail. Everything before the tail is byte-stable: the
same workspace gives the same bytes across turns and restarts, an unrelated
file change changes nothing, and a steering-file change changes only its own
part. See ``docs/context.md``.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from bonsai.core.context import SystemPart
from bonsai.domain import Evidence
from bonsai.services.project_context.git import GitBaseline, git_root, take_baseline
from bonsai.services.project_context.indexes import skills_part, subagents_part
from bonsai.services.project_context.steering import steering_files, steering_parts
from bonsai.services.project_context.volatile import range_hash, volatile_part
from bonsai.settings import ContextSettings

# marker file → project type, in the order they are reported
PROJECT_MARKERS: tuple[tuple[str, str], ...] = (
    ("pyproject.toml", "python"),
    ("setup.py", "python"),
    ("requirements.txt", "python"),
    ("package.json", "node"),
    ("tsconfig.json", "typescript"),
    ("deno.json", "deno"),
    ("Cargo.toml", "rust"),
    ("go.mod", "go"),
    ("pom.xml", "java (maven)"),
    ("build.gradle", "java/kotlin (gradle)"),
    ("build.gradle.kts", "kotlin (gradle)"),
    ("Gemfile", "ruby"),
    ("composer.json", "php"),
    ("mix.exs", "elixir"),
    ("Package.swift", "swift"),
    ("pubspec.yaml", "dart"),
    ("CMakeLists.txt", "c/c++ (cmake)"),
    ("Makefile", "make"),
)
MARKER_NAMES = frozenset(marker for marker, _ in PROJECT_MARKERS)

__all__ = [
    "GitBaseline",
    "environment_part",
    "gather_parts",
    "project_types",
    "range_hash",
    "stable_parts",
    "steering_files",
    "take_baseline",
]


def project_types(workspace: Path) -> list[str]:
    """Project types detected from marker files at the workspace root (one listing of
    it: every request gathers this, a stat per marker and a glob cost more)."""
    files: set[str] = set()
    dotnet = False
    try:
        with os.scandir(workspace) as entries:
            for entry in entries:
                dotnet = dotnet or entry.name.endswith((".csproj", ".sln"))
                if entry.name in MARKER_NAMES and _is_file(entry):
                    files.add(entry.name)
    except OSError:  # gone or unreadable: nothing detected
        return []
    found = [f"{kind} ({marker})" for marker, kind in PROJECT_MARKERS if marker in files]
    if dotnet:
        found.append(".NET (*.csproj/*.sln)")
    return found


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()  # a symlink to a file counts, as Path.is_file has it
    except OSError:
        return False


def environment_part(workspace: Path, root: Path | None) -> SystemPart:
    """Workspace, platform, project type (markers at the workspace, then at the
    git root when that differs) and version control."""
    found = project_types(workspace)
    if root is not None and root != workspace:
        found += [f"{k} at the repository root" for k in project_types(root) if k not in found]
    kinds = ", ".join(found) or "not detected"
    repo = f"git repository at {root}" if root is not None else "not a git repository"
    lines = [
        "## Environment",
        f"- Workspace: {workspace}",
        f"- Platform: {platform.system()} {platform.machine()}",
        f"- Project type: {kinds}",
        f"- Version control: {repo}",
    ]
    return SystemPart(id="sys:env", label="environment", text="\n".join(lines))


def gather_parts(
    workspace: Path,
    *,
    settings: ContextSettings,
    repomap_text: str | None,
    baseline: GitBaseline | None,
    reads: list[Evidence],
    peers: list[str],
    persona: str,
) -> list[SystemPart]:
    """The system parts for one request. ``settings`` are effective (smol drops
    the indexes and the repo map and caps steering at its own limit)."""
    workspace = workspace.resolve()
    parts = stable_parts(workspace, settings=settings, repomap_text=repomap_text, persona=persona)
    return [*parts, volatile_part(workspace, baseline, reads, peers)]


def stable_parts(
    workspace: Path, *, settings: ContextSettings, repomap_text: str | None, persona: str
) -> list[SystemPart]:
    """Every part before the volatile tail: what the workspace's files and these
    arguments make (``workspace`` resolved)."""
    root = git_root(workspace)
    parts = [SystemPart(id="sys:persona", label="persona", text=persona)]
    parts.append(environment_part(workspace, root))
    parts += steering_parts(workspace, root, settings.steering_cap_bytes)
    if not settings.smol:
        parts += [p for p in (skills_part(workspace), subagents_part(workspace)) if p]
        if repomap_text:
            parts.append(
                SystemPart(
                    id="sys:repomap",
                    label="repository map",
                    text=f"## Repository map\n{repomap_text}",
                )
            )
    return parts
