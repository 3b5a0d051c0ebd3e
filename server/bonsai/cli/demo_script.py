"""The demo's sample workspace and the scripted model that works on it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from bonsai.sim.script import Reply, Script, ToolCallSpec

CALC = '''"""Small statistics helpers."""


def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    return sum(values) / (len(values) + 1)
'''

TESTS = """import unittest

from calc import mean


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)


if __name__ == "__main__":
    unittest.main()
"""

README = "# stats\n\nTiny statistics helpers used by the bonsai demo.\n"
AGENTS = "Run the tests with `python -m unittest` after every change.\n"

MEDIAN = '''

def median(values):
    """Middle value of a non-empty sequence (mean of the two middles if even)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''

MEDIAN_TEST = """

class MedianTest(unittest.TestCase):
    def test_odd_and_even(self):
        self.assertEqual(median([3, 1, 2]), 2)
        self.assertEqual(median([4, 1, 3, 2]), 2.5)
"""

TASKS = [
    "mean() gives wrong results. Find the bug, fix it and run the tests.",
    "Now add a median() function with a test, and run the tests again.",
]


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TESTS)
    (root / "README.md").write_text(README)
    (root / "AGENTS.md").write_text(AGENTS)
    return root


def _call(name: str, **arguments: object) -> ToolCallSpec:
    return ToolCallSpec(name=name, arguments=dict(arguments))


def demo_script() -> Script:
    test_cmd = f"{shlex.quote(sys.executable)} -m unittest -q"
    steps = [
        Reply(
            text="Let me find where `mean` is defined.",
            tool_calls=[
                _call("set_session_title", title="Fix mean()", episode_action="new_topic"),
                _call("grep", pattern="def mean"),
            ],
        ),
        Reply(tool_calls=[_call("read_file", path="calc.py")]),
        Reply(
            text="The denominator is off by one: it divides by `len(values) + 1`.",
            tool_calls=[
                _call(
                    "edit_file",
                    path="calc.py",
                    old_string="    return sum(values) / (len(values) + 1)",
                    new_string="    return sum(values) / len(values)",
                )
            ],
        ),
        Reply(tool_calls=[_call("bash", command=test_cmd)]),
        Reply(text="Fixed `mean()` in calc.py: it divided by `len(values) + 1`. Tests pass."),
        Reply(
            text="I'll add `median()` next to `mean()`.",
            tool_calls=[
                _call("set_session_title", title="Add median()", episode_action="new_topic"),
                _call("read_file", path="test_calc.py"),
            ],
        ),
        Reply(
            tool_calls=[
                _call(
                    "edit_file",
                    path="calc.py",
                    old_string="    return sum(values) / len(values)\n",
                    new_string="    return sum(values) / len(values)\n" + MEDIAN,
                ),
                _call(
                    "edit_file",
                    path="test_calc.py",
                    old_string="from calc import mean\n",
                    new_string="from calc import mean, median\n",
                ),
                _call(
                    "edit_file",
                    path="test_calc.py",
                    old_string='\n\nif __name__ == "__main__":',
                    new_string=MEDIAN_TEST.rstrip("\n") + '\n\n\nif __name__ == "__main__":',
                ),
            ]
        ),
        Reply(tool_calls=[_call("bash", command=test_cmd)]),
        Reply(text="Added `median()` with a test for odd and even lengths; all tests pass."),
    ]
    return Script(steps=steps, latency_ms=4)
