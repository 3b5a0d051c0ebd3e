"""The skills index (``.bonsai/skills/*/SKILL.md``) and the subagents index
(``.bonsai/agents/*.md``): name and description from each file's front matter,
sorted, so the part is byte-stable. A broken file gets a note, never a crash.

The files come with the repository: each is opened through the confined
workspace (``services/fs/confined.py``), so one that links out of it, a FIFO
or a device is noted and never read, and only its first ``MAX_READ_BYTES``
(where the front matter is) are read.
"""

from __future__ import annotations

from pathlib import Path

import frontmatter

from bonsai.core.context import SystemPart
from bonsai.core.context.text import one_line
from bonsai.services.fs.confined import ConfinementError, Workspace, read_fd

MAX_READ_BYTES = 64 * 1024


def _read(workspace: Path, path: Path) -> str:
    """The head of one index file, opened without leaving the workspace."""
    with Workspace(workspace) as ws:
        fd, _ = ws.open_file(path.relative_to(workspace).as_posix())
        data = read_fd(fd, MAX_READ_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if len(data) < MAX_READ_BYTES:
            raise
        return data.decode("utf-8", "ignore")  # cut inside a character at the cap


def _meta(workspace: Path, path: Path, default_name: str) -> tuple[str, str]:
    """(name, description) of one file, or (name, a note saying what is wrong)."""
    try:
        post = frontmatter.loads(_read(workspace, path))
    except ConfinementError as exc:
        return default_name, f"[bonsai: not read: {one_line(str(exc), 200)}]"
    except UnicodeDecodeError:
        return default_name, "[bonsai: not valid UTF-8]"
    except OSError as exc:
        return default_name, f"[bonsai: could not be read: {exc.strerror or exc}]"
    except Exception as exc:  # malformed YAML front matter: report it, keep going
        return default_name, f"[bonsai: front matter is not valid YAML: {one_line(str(exc), 120)}]"
    name = str(post.get("name") or default_name)
    description = str(post.get("description") or "[bonsai: no description in the front matter]")
    return one_line(name, 80), one_line(description, 300)


def skills_part(workspace: Path) -> SystemPart | None:
    root = workspace / ".bonsai" / "skills"
    files = sorted(root.glob("*/SKILL.md")) if root.is_dir() else []
    if not files:
        return None
    lines = ["## Skills", "Read a skill's SKILL.md before a task its description matches."]
    for path in files:
        name, description = _meta(workspace, path, path.parent.name)
        rel = path.relative_to(workspace).as_posix()
        lines.append(f"- {name}: {description} ({rel})")
    return SystemPart(id="sys:skills", label="skills index", text="\n".join(lines))


def subagents_part(workspace: Path) -> SystemPart | None:
    root = workspace / ".bonsai" / "agents"
    files = sorted(root.glob("*.md")) if root.is_dir() else []
    if not files:
        return None
    lines = ["## Subagents", "Delegate to a subagent when its description matches the work."]
    for path in files:
        name, description = _meta(workspace, path, path.stem)
        rel = path.relative_to(workspace).as_posix()
        lines.append(f"- {name}: {description} ({rel})")
    return SystemPart(id="sys:subagents", label="subagents index", text="\n".join(lines))
