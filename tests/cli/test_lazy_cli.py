"""The lazy CLI: every subcommand still offers its full help, and the client
commands (`--version`, `status`, `ctx`) import none of the heavy modules."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from bonsai.cli.main import _GROUPS, build_parser, main

HEAVY = ("numpy", "pydantic", "httpx", "tiktoken", "bonsai.services.providers", "bonsai.core")


def _full_help() -> dict[str, str]:
    parser = build_parser()  # every subcommand configured in full
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p.format_help() for name, p in sub.choices.items()}


@pytest.mark.parametrize("name", [n for group in _GROUPS for n in group.names])
def test_every_subcommand_offers_its_full_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([name, "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert shown == _full_help()[name]
    assert shown.startswith(f"usage: bonsai {name}")


def test_the_top_level_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    main([])
    shown = capsys.readouterr().out
    for group in _GROUPS:
        for name in group.names:
            assert f"    {name}" in shown


CLIENT = """
import json, sys
from bonsai.cli.main import build_parser
for argv in (["--version"], ["status"], ["ctx"]):
    build_parser(argv)
import bonsai.cli.status, bonsai.cli.chat, bonsai.cli.client
heavy = %r
# a None entry is an import refused (bonsai/__init__.py: httpx._main), not a module loaded
print(json.dumps(sorted(m for m, mod in sys.modules.items() if m.startswith(heavy) and mod is not None)))
"""


def test_the_client_commands_import_no_heavy_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT % (HEAVY,)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []
