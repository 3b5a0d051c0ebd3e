"""Finding 5 (issue 20): clear words — help for every option, configuration errors of their own kind."""

from __future__ import annotations

import argparse

from bonsai.cli.main import build_parser
from bonsai.cli.previews import preview
from bonsai.errors import BonsaiError, ConfigError


def _parsers(parser: argparse.ArgumentParser, name: str = "bonsai"):  # type: ignore[no-untyped-def]
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_cli_option_and_argument_has_help() -> None:
    missing = []
    for name, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_a_configuration_mistake_is_its_own_error_code() -> None:
    assert issubclass(ConfigError, BonsaiError)
    assert ConfigError.code not in {-32000, -32602, -32603, -32004, -32009, -32001}


def test_previews_show_the_useful_line() -> None:
    unittest_out = (
        "test_a (t.T.test_a) ... ok\n"
        "----------------------------------------------------------------------\n"
        "Ran 3 tests in 0.001s\n\nOK\n[exit code 0]"
    )
    assert preview("bash", {}, unittest_out) == ["Ran 3 tests in 0.001s", "OK", "[exit code 0]"]
    pytest_out = "....F\n=== 1 failed, 4 passed in 0.12s ===\n[exit code 1]"
    assert preview("bash", {}, pytest_out)[0] == "=== 1 failed, 4 passed in 0.12s ==="
    grep_out = "a.py:3: def mean(values):\nb.py:9:     centre = mean(values)"
    assert preview("grep", {}, grep_out) == grep_out.splitlines()
    edit_out = "edited a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    assert preview("edit_file", {}, edit_out) == ["edited a.py", "-x = 1", "+x = 2"]
    read_out = "     1\timport os\n     2\t\n     3\tprint(os.sep)"
    assert preview("read_file", {"path": "a.py"}, read_out)[0].startswith("a.py: lines 1-3")
