"""The demo's sample project and the scripted model that works on it.

The project is a small statistics package with a real bug (``mean`` divides by
``len + 1``) and a verbose test suite, so test runs have the bulky output real
ones have. The scripted model works through three tasks: fix the bug (grep,
reads, a failing and a passing test run, a re-read of an unchanged file), add
``median`` (a new task: the first episode closes), then answer a question
about the first task's failure, which only ``recall`` can still see.
"""

from __future__ import annotations

from pathlib import Path

from bonsai.sim.script import Reply, Script, ToolCallSpec

MODEL = "bonsai-demo-8k"

_HELPERS = [
    ("minimum", "Smallest value of a non-empty sequence.", "min(values)"),
    ("maximum", "Largest value of a non-empty sequence.", "max(values)"),
    ("spread", "Largest minus smallest value.", "max(values) - min(values)"),
    ("total", "Sum of the values.", "sum(values)"),
    ("count_above", "How many values exceed the threshold.", "sum(1 for v in values if v > t)"),
    ("count_below", "How many values are under the threshold.", "sum(1 for v in values if v < t)"),
    ("clamp_all", "Every value clamped into [lo, hi].", "[min(max(v, lo), hi) for v in values]"),
    ("normalise", "Values scaled so they sum to one.", "[v / sum(values) for v in values]"),
]


def _calc() -> str:
    parts = ['"""Small statistics helpers used by the reports."""\n\n']
    parts.append(
        "\ndef mean(values):\n"
        '    """Arithmetic mean of a non-empty sequence."""\n'
        "    return sum(values) / (len(values) + 1)\n\n"
    )
    parts.append(
        "\ndef variance(values):\n"
        '    """Population variance (uses mean)."""\n'
        "    centre = mean(values)\n"
        "    return sum((v - centre) ** 2 for v in values) / len(values)\n\n"
    )
    for name, doc, body in _HELPERS:
        args = "values"
        if " t)" in body:
            args = "values, t"
        elif "lo" in body:
            args = "values, lo, hi"
        parts.append(f'\ndef {name}({args}):\n    """{doc}"""\n    return {body}\n\n')
    return "".join(parts).rstrip() + "\n"


def _tests() -> str:
    lines = ["import unittest", "", "from calc import *  # noqa: F403", "", ""]
    lines.append("class MeanTest(unittest.TestCase):")
    for i, values in enumerate(([1, 2, 3], [4, 4], [10], [2, 4, 6, 8], [-1, 1])):
        expected = sum(values) / len(values)
        lines += [
            f"    def test_mean_{i}(self):",
            f"        self.assertAlmostEqual(mean({values}), {expected})",
            "",
        ]
    lines.append("    def test_variance(self):")
    lines.append("        self.assertAlmostEqual(variance([1, 2, 3, 4]), 1.25)")
    lines += ["", ""]
    lines.append("class HelperTest(unittest.TestCase):")
    for i in range(12):
        values = [i, i + 1, i + 3]
        lines += [
            f"    def test_helpers_{i:02}(self):",
            f"        self.assertEqual(minimum({values}), {min(values)})",
            f"        self.assertEqual(maximum({values}), {max(values)})",
            f"        self.assertEqual(spread({values}), {max(values) - min(values)})",
            "",
        ]
    lines += ["", 'if __name__ == "__main__":', "    unittest.main()", ""]
    return "\n".join(lines)


README = (
    "# stats\n\nTiny statistics helpers used by the bonsai demo. "
    "Run the tests with `python -m unittest -v`.\n"
)
AGENTS = "Run the tests with `python -m unittest -v` after every change.\n"

MEDIAN = '''

def median(values):
    """Middle value of a non-empty sequence (mean of the two middles if even)."""
    ordered = list(values)
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
    "The test suite fails. Find the bug in the statistics helpers, fix it, and run the tests.",
    "Now add a median() function with a test, and run the tests again.",
    "Before the fix, which tests failed and with what error? Quote the failure.",
]


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(_calc())
    (root / "test_calc.py").write_text(_tests())
    (root / "README.md").write_text(README)
    (root / "AGENTS.md").write_text(AGENTS)
    return root


def _call(name: str, **arguments: object) -> ToolCallSpec:
    return ToolCallSpec(name=name, arguments=dict(arguments))


def demo_script() -> Script:
    test_cmd = "python -m unittest -v"  # the demo puts its own python first on PATH
    steps = [
        # task 1: the bug
        Reply(
            text="Let me run the tests first to see what fails.",
            tool_calls=[
                _call("set_session_title", title="Fix mean()", episode_action="new_topic"),
                _call("bash", command=test_cmd),
            ],
        ),
        Reply(
            text="The mean tests fail. Let me find where `mean` is defined and used.",
            tool_calls=[_call("grep", pattern="mean\\(")],
        ),
        Reply(tool_calls=[_call("read_file", path="calc.py")]),
        Reply(tool_calls=[_call("read_file", path="test_calc.py")]),
        Reply(
            text="Let me look at `variance` too: it calls `mean`.",
            tool_calls=[_call("grep", pattern="variance|centre")],
        ),
        Reply(
            text="Let me check the expected values once more.",
            tool_calls=[_call("read_file", path="test_calc.py")],
        ),
        Reply(
            text="The denominator is off by one: `mean` divides by `len(values) + 1`.",
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
        Reply(text="Fixed `mean()` in calc.py: it divided by `len(values) + 1`. All tests pass."),
        # task 2: a new feature (a new episode)
        Reply(
            text="I'll add `median()` next to `mean()`.",
            tool_calls=[
                _call("set_session_title", title="Add median()", episode_action="new_topic"),
                _call("grep", pattern="^def ", path="calc.py"),
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
                    old_string='\n\nif __name__ == "__main__":',
                    new_string=MEDIAN_TEST.rstrip("\n") + '\n\n\nif __name__ == "__main__":',
                ),
            ]
        ),
        Reply(tool_calls=[_call("bash", command=test_cmd + " test_calc.MedianTest")]),
        Reply(
            text="The median test fails: the values are never sorted. Let me look.",
            tool_calls=[_call("read_file", path="calc.py")],
        ),
        Reply(
            tool_calls=[
                _call(
                    "edit_file",
                    path="calc.py",
                    old_string="    ordered = list(values)\n",
                    new_string="    ordered = sorted(values)\n",
                )
            ]
        ),
        Reply(tool_calls=[_call("bash", command=test_cmd)]),
        Reply(text="Added `median()` with a test for odd and even lengths; all tests pass."),
        # task 3: a question about archived work
        Reply(
            text="That run is archived; let me recall it.",
            tool_calls=[_call("recall", query="FAIL: test_mean_0 AssertionError: 1.5 != 2.0")],
        ),
        Reply(
            text="And the assertions those tests make:",
            tool_calls=[_call("grep", pattern="assert", path="test_calc.py")],
        ),
        Reply(
            text="Before the fix five tests failed (`FAILED (failures=5)`), each with "
            "`AssertionError`: four `MeanTest` cases and `test_variance`, e.g. "
            "`test_mean_0`: `1.5 != 2.0`, because `mean` divided by `len(values) + 1`."
        ),
    ]
    return Script(steps=steps, latency_ms=2, models=[MODEL, "gpt-4o-mini"])
