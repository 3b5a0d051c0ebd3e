"""Where bonsai keeps its state: ``$BONSAI_HOME``, else ``~/.bonsai`` (a leaf: cheap to import)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def bonsai_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = env.get("BONSAI_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".bonsai"
