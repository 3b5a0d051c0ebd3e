"""The provider settings a terminal client sends with its session and turns.

A running daemon cannot see what the user exported after it started, so the
CLI sends them: ``BONSAI_PROVIDER``, ``BONSAI_MODEL``, ``BONSAI_BASE_URL``,
``BONSAI_FAST_MODEL`` and each provider's key variable that is set (over the
0600 socket; the daemon keeps keys in memory for that session only). Settings
the daemon reads only when it starts are named with the fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from bonsai.cli.terminal_text import shown
from bonsai.env_names import ENV_KEYS, KEY_ENV

FIELDS = {
    "BONSAI_PROVIDER": "provider",
    "BONSAI_MODEL": "model",
    "BONSAI_BASE_URL": "baseUrl",
    "BONSAI_FAST_MODEL": "fastModel",
}
# read by the daemon when it starts (workspace-wide or daemon-wide), not per session
AT_START = ("BONSAI_PRESET", "BONSAI_SMOL", "BONSAI_EPISODES", "BONSAI_MEMORY_EMBEDDINGS")


def from_environment(command: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The wire ``ClientSettings`` of this process (every send carries them, even empty)."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {"source": f"{command} (pid {os.getpid()})"}
    names: list[str] = []
    for var, field in FIELDS.items():
        value = env.get(var, "").strip()
        if value:
            out[field] = value
            names.append(var)
    keys = {}
    for provider, var in KEY_ENV.items():
        value = env.get(var, "").strip()
        if value:
            keys[provider] = value
            names.append(var)
    out["apiKeys"] = keys
    out["names"] = names
    return out


def start_only_notes(status: dict[str, Any], env: Mapping[str, str] | None = None) -> list[str]:
    """Settings in this environment a running daemon cannot take on: why, and what to do."""
    env = os.environ if env is None else env
    present = [var for var in AT_START if env.get(var, "").strip()]
    if not present:
        return []
    names = ", ".join(present)
    keys = ", ".join(ENV_KEYS[var] for var in present)
    return [
        f"note: {names} {'is' if len(present) == 1 else 'are'} read when the daemon starts; "
        f"the running daemon (pid {status.get('pid')}, up {status.get('uptimeS', 0):.0f}s) "
        f"keeps what it started with. To apply, run `bonsai stop` and try again, or set "
        f"{keys} in the config file (reloaded live)."
    ]


def settings_problems(client: Any, workspace: str, command: str) -> list[str]:
    """What the daemon could not use in the settings files for ``workspace`` (a
    file that is not JSON, a bad value, a key a project file may not set), one
    line each, so a broken config is never ignored in silence."""
    got = client.request("bonsai/config/get", {"workspace": workspace})
    problems = got.get("problems") or []
    return [shown(f"{command}: settings: {p}", newlines=False) for p in problems]
