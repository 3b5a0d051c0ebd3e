"""The console script imports only the chosen subcommand, and still offers every help."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bonsai.cli import main as cli

ALL = [name for group in cli._GROUPS for name in group.names]


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        "from bonsai.cli import main as cli\n"
        f"cli.build_parser({argv!r}).parse_known_args({argv!r})\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("name", ALL)
def test_every_subcommand_offers_its_own_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main([name, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: bonsai {name}")


def test_top_level_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    for name in ALL:
        assert f"    {name} " in out or f"    {name}\n" in out


def test_status_does_not_import_heavy_subsystems() -> None:
    loaded = _modules_after(["status", "--no-start"])
    for heavy in ("bonsai.services.repomap.service", "bonsai.services.memory.service", "tiktoken"):
        assert heavy not in loaded, heavy
    assert "bonsai.settings" not in loaded


def test_version_imports_no_subcommand() -> None:
    loaded = _modules_after([])
    assert not any(m.startswith("bonsai.services") for m in loaded)
