"""A small recorded session in OpenAI chat format, written by the tests themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILES = {
    f"src/mod{n}.py": "\n".join(f"def f{n}_{k}(x):\n    return x + {k}" for k in range(60))
    for n in range(6)
}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def recording() -> list[dict[str, Any]]:
    """System prompt, a task, then reads (one repeated unchanged), a failing run,
    an edit and more reads: enough bulk to need management in a small window."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful coding agent. Use the tools."},
        {
            "role": "user",
            "content": "Find why f3_7 returns the wrong value and fix it. Do not touch tests.",
        },
    ]
    plan = [("read_file", {"path": p}) for p in FILES]
    plan.insert(3, ("read_file", {"path": "src/mod1.py"}))  # an unchanged re-read
    plan += [
        ("bash", {"command": "pytest -q"}),
        ("edit_file", {"path": "src/mod3.py", "old": "7", "new": "8"}),
    ]
    plan += [("read_file", {"path": "src/mod3.py"}), ("bash", {"command": "pytest -q"})]
    for n, (name, args) in enumerate(plan):
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {n}: {name}.",
                "tool_calls": [_call(n, name, args)],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{n}", "content": _result(name, args, n)}
        )
    messages.append({"role": "assistant", "content": "Fixed: f3_7 now adds 8."})
    return messages


def _result(name: str, args: dict[str, Any], n: int) -> str:
    if name == "read_file":
        text = FILES[args["path"]]
        return text.replace("+ 7", "+ 8") if args["path"] == "src/mod3.py" and n > 8 else text
    if name == "bash":
        return "1 failed, 4 passed" if n < 9 else "5 passed"
    return "The file src/mod3.py has been edited."


def write_recording(directory: Path) -> Path:
    path = directory / "session.json"
    path.write_text(json.dumps(recording(), indent=1), encoding="utf-8")
    return path
