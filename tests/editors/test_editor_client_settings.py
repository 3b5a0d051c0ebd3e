"""The editors send the same provider variables as ``bonsai chat`` (issue 20).

The VS Code extension and the Neovim plugin each list the variables they read;
a provider or variable added on the daemon side must be added there too, or
that editor silently stops sending it.
"""

from __future__ import annotations

import re
from pathlib import Path

from bonsai.cli.client_settings import FIELDS
from bonsai.services.providers.factory import KEY_ENV

ROOT = Path(__file__).resolve().parents[2]
VSCODE = ROOT / "extensions" / "vscode" / "src" / "session" / "clientSettings.ts"
NEOVIM = ROOT / "extensions" / "neovim" / "lua" / "bonsai" / "client_settings.lua"


def _vscode() -> tuple[dict[str, str], dict[str, str]]:
    text = VSCODE.read_text(encoding="utf-8")
    fields = dict(re.findall(r"^\s+(BONSAI_\w+): \"(\w+)\",$", text, re.M))
    keys = dict(re.findall(r"^\s+\"?([\w-]+)\"?: \"(\w+_API_KEY)\",$", text, re.M))
    return fields, keys


def _neovim() -> tuple[dict[str, str], dict[str, str]]:
    text = NEOVIM.read_text(encoding="utf-8")
    fields = dict(re.findall(r'\{ "(BONSAI_\w+)", "(\w+)" \}', text))
    keys = dict(re.findall(r'\{ "([\w-]+)", "(\w+_API_KEY)" \}', text))
    return fields, keys


def test_vscode_reads_the_variables_bonsai_chat_reads() -> None:
    assert _vscode() == (FIELDS, KEY_ENV)


def test_neovim_reads_the_variables_bonsai_chat_reads() -> None:
    assert _neovim() == (FIELDS, KEY_ENV)
