"""Loading settings: user file, project file, environment; hot reload.

Precedence (later wins): defaults < ``$BONSAI_HOME/config.json`` <
``<workspace>/.bonsai/config.json`` < ``BONSAI_*`` environment variables.
An invalid value is reported with its file and dotted key, and that key falls
back to its default; the rest of the file still applies.

The project file comes with the repository, and a repository may be hostile:
it cannot say where your key and your code are sent (``providers.base_url``,
``providers.api_key``), approve a tool for you (a ``tools.policy`` of
``allow``) or start a download (``memory.allow_download``). Those keys are
dropped from it, each reported with where to set it instead
(:func:`read_project_file`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bonsai.env_names import ENV_KEYS as ENV_KEYS
from bonsai.home import bonsai_home as bonsai_home
from bonsai.services.fs.atomic import atomic_write
from bonsai.settings import Settings

Json = dict[str, Any]


def user_config_path(home: Path) -> Path:
    return home / "config.json"


def project_config_path(workspace: Path) -> Path:
    return workspace / ".bonsai" / "config.json"


@dataclass
class LoadedSettings:
    settings: Settings
    overrides: Json = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {_snake(str(k)): _normalise(v) for k, v in value.items()}
    return value


def deep_merge(base: Json, top: Json) -> Json:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def set_dotted(data: Json, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    if value is None:
        node.pop(leaf, None)
    else:
        node[leaf] = value


def _drop_dotted(data: Json, path: tuple[Any, ...]) -> bool:
    node: Any = data
    for part in path[:-1]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    if isinstance(node, dict) and path and path[-1] in node:
        del node[path[-1]]
        return True
    return False


def read_json_file(path: Path, problems: list[str]) -> Json:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        problems.append(f"{path}: cannot be read as JSON ({error}); using defaults for it")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: must hold a JSON object; using defaults for it")
        return {}
    return _normalise(data)


# (section, key): why a repository's own file may not set it
PROJECT_REFUSED: dict[tuple[str, str], str] = {
    ("providers", "base_url"): "it would send your key and code to a server the repository names",
    ("providers", "api_key"): "it would send your code to an account the repository names",
    ("memory", "allow_download"): "a repository cannot start a download",
    ("context", "operator_suffix"): (
        "it would put the repository's text in the system prompt as your own instructions"
    ),
}
# (section, key, value): a value a repository may not choose (others it may)
PROJECT_REFUSED_VALUES: dict[tuple[str, str, str], str] = {
    ("memory", "promotion", "auto"): (
        "it would write what the repository's text says into your memory unasked "
        "(your user memory reaches every project); it may ask for 'suggest'"
    ),
}


def _without(data: Json, section: str, key: str) -> Json:
    """``data`` with ``section.key`` left out (``data[section]`` is a dict)."""
    return {**data, section: {k: v for k, v in data[section].items() if k != key}}


def read_project_file(workspace: Path, problems: list[str]) -> Json:
    """The workspace's ``.bonsai/config.json`` without what a repository may not set."""
    path = project_config_path(workspace)
    data = read_json_file(path, problems)
    where = "~/.bonsai/config.json ($BONSAI_HOME/config.json) or the environment"
    for (section, key), why in PROJECT_REFUSED.items():
        part = data.get(section)
        if isinstance(part, dict) and key in part:
            data = _without(data, section, key)
            problems.append(f"{path}: {section}.{key} ignored: {why}; set it in {where}")
    for (section, key, value), why in PROJECT_REFUSED_VALUES.items():
        part = data.get(section)
        if isinstance(part, dict) and part.get(key) == value:
            data = _without(data, section, key)
            problems.append(
                f"{path}: {section}.{key} ignored ({value!r}): {why}; set it in {where}"
            )
    tools = data.get("tools")
    policy = tools.get("policy") if isinstance(tools, dict) else None
    if isinstance(tools, dict) and isinstance(policy, dict):
        granted = sorted(str(k) for k, v in policy.items() if v == "allow")
        if granted:
            kept = {k: v for k, v in policy.items() if v != "allow"}
            data = {**data, "tools": {**tools, "policy": kept}}
            problems.append(
                f"{path}: tools.policy 'allow' ignored for {', '.join(granted)}: a repository "
                f"cannot approve tools for you (it may ask or deny); set it in {where}"
            )
    return data


def _env_overrides(env: Mapping[str, str]) -> Json:
    out: Json = {}
    for name, dotted in ENV_KEYS.items():
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        value: Any = raw
        if dotted.endswith((".enabled", ".smol")):
            value = raw.strip().lower() not in ("0", "false", "off", "no")
        set_dotted(out, dotted, value)
    return out


def validate(data: Json, source: str, problems: list[str]) -> Settings:
    """Validate, dropping each invalid key (reported) until the rest is valid."""
    data = json.loads(json.dumps(data))
    for _ in range(50):
        try:
            return Settings.model_validate(data)
        except ValidationError as error:
            dropped = False
            for item in error.errors():
                path = tuple(item["loc"])
                key = ".".join(str(p) for p in path)
                problems.append(f"{source}: {key}: {item['msg']}; using the default")
                dropped = _drop_dotted(data, path) or dropped
            if not dropped:
                break
    problems.append(f"{source}: unusable settings; using all defaults")
    return Settings()


def load_settings(
    home: Path, workspace: Path | None = None, env: Mapping[str, str] | None = None
) -> LoadedSettings:
    env = os.environ if env is None else env
    problems: list[str] = []
    user = read_json_file(user_config_path(home), problems)
    project = read_project_file(workspace, problems) if workspace else {}
    merged = deep_merge(deep_merge(user, project), _env_overrides(env))
    settings = validate(merged, "settings", problems)
    return LoadedSettings(settings=settings, overrides=merged, problems=problems)


def write_override(path: Path, dotted: str, value: Any) -> None:
    """Set (or with ``None`` clear) one key in a config file, atomically."""
    problems: list[str] = []
    data = read_json_file(path, problems)
    if problems:
        raise ValueError(problems[0])
    set_dotted(data, _snake_dotted(dotted), value)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    atomic_write(path, text.encode("utf-8"), mode=0o600)


def _snake_dotted(dotted: str) -> str:
    return ".".join(_snake(part) for part in dotted.split("."))


# inotify reports opens and reads too; reloading on them reloaded forever (each reload
# opens the file, which is reported, which reloads ...), dropping the settings cache
# and telling every client "config changed" several times a second
IGNORED_EVENTS = frozenset({"opened", "closed_no_write"})


class ConfigWatcher:
    """Calls ``on_change`` (debounced) when a watched config file changes."""

    def __init__(self, paths: list[Path], on_change: Callable[[], None]) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        self._paths = {p.resolve() for p in paths}
        self._on_change = on_change
        self._timer: threading.Timer | None = None
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in IGNORED_EVENTS:  # reading the file is no change
                    return
                names = {str(event.src_path), str(getattr(event, "dest_path", "") or "")}
                if any(Path(n).resolve() in watcher._paths for n in names if n):
                    watcher._kick()

        self._observer = Observer()
        for directory in sorted({p.parent for p in self._paths}):
            directory.mkdir(parents=True, exist_ok=True)
            self._observer.schedule(Handler(), str(directory), recursive=False)
        self._observer.daemon = True
        self._observer.start()

    def _kick(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(0.15, self._on_change)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._observer.stop()
        with contextlib.suppress(RuntimeError):
            self._observer.join(timeout=2)
