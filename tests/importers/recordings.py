"""Small recordings in every supported format, written from each agent's
documented format by the tests themselves (a plain module, not a conftest).

Each covers every record kind its importer reads, and some it skips."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

PR = (
    "<pr_description>\nConsider the following PR description:\n"
    "Separability matrix is wrong for nested models\nMore text follows.\n</pr_description>"
)


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def mini_swe_v1() -> str:
    """mini-swe-agent 1.x: text actions in ```bash fences, observations as user turns."""
    return json.dumps(
        {
            "info": {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n"},
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": PR},
                {
                    "role": "assistant",
                    "content": "THOUGHT: look.\n\n```bash\ncat src/a.py\n```",
                    "extra": {"response": {"id": "r1"}},
                },
                {
                    "role": "user",
                    "content": "<returncode>0</returncode>\n<output>\nx = 1\n</output>",
                },
                {
                    "role": "assistant",
                    "content": "Two at once:\n```bash\nls\n```\n```bash\npwd\n```",
                },
                {"role": "user", "content": "Please always provide EXACTLY ONE action."},
                {
                    "role": "assistant",
                    "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
                },
                {"role": "user", "content": "diff --git a/x b/x\n"},
            ],
            "trajectory_format": "mini-swe-agent-1",
            "instance_id": "astropy__astropy-1",
        },
        indent=1,
    )


def mini_swe_v11() -> str:
    """mini-swe-agent 2.x (``mini-swe-agent-1.1``): tool calls, ``role: tool``, an exit record."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "cat src/a.py"})},
    }
    return json.dumps(
        {
            "info": {"mini_version": "2.0.0", "exit_status": "Submitted"},
            "messages": [
                {"role": "system", "content": "You can run bash."},
                {"role": "user", "content": "Fix the parser crash on empty input. Details: …"},
                {"role": "assistant", "content": "", "tool_calls": [call], "extra": {"cost": 1}},
                {"role": "tool", "tool_call_id": "call_1", "content": "x = 1\n"},
                {"type": "reasoning", "summary": []},
                {"role": "assistant", "content": "Done."},
                {
                    "role": "exit",
                    "content": "the patch",
                    "extra": {"exit_status": "Submitted", "submission": "the patch"},
                },
                {"role": "user", "content": "after the exit"},
            ],
            "trajectory_format": "mini-swe-agent-1.1",
        }
    )


def claude_code() -> str:
    """A Claude Code transcript: a rewind branch, streamed assistant blocks, a
    subagent sidechain, a compaction, and entry kinds the importer skips."""
    base = {"sessionId": "s1", "cwd": "/w", "version": "2.0.1", "userType": "external"}

    def entry(uuid: str, parent: str | None, kind: str, message: Any, **extra: Any) -> dict:
        return {
            **base,
            "uuid": uuid,
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "message": message,
            **extra,
        }

    read = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/a.py"}}
    task = {"type": "tool_use", "id": "toolu_2", "name": "Task", "input": {"prompt": "find tests"}}
    return _lines(
        [
            {"type": "summary", "summary": "Fix the flaky test", "leafUuid": "u9"},
            {"type": "summary", "summary": "from another session", "leafUuid": "elsewhere"},
            {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}},
            entry("u1", None, "user", {"role": "user", "content": "Fix the flaky test in a.py"}),
            entry(
                "a0",
                "u1",
                "assistant",
                {
                    "id": "msg_0",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "rewound"}],
                },
            ),
            entry(
                "a1",
                "u1",
                "assistant",
                {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}],
                },
            ),
            entry(
                "a2",
                "a1",
                "assistant",
                {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Reading."}],
                },
            ),
            entry("a3", "a2", "assistant", {"id": "msg_1", "role": "assistant", "content": [read]}),
            entry(
                "u2",
                "a3",
                "user",
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": "     1\tx = 1\n",
                        }
                    ],
                },
                toolUseResult={"type": "text"},
            ),
            entry("a4", "u2", "assistant", {"id": "msg_2", "role": "assistant", "content": [task]}),
            {
                **entry("s1", None, "user", {"role": "user", "content": "find tests"}),
                "isSidechain": True,
            },
            {
                **entry(
                    "s2",
                    "s1",
                    "assistant",
                    {
                        "id": "msg_s",
                        "role": "assistant",
                        "content": [{"type": "text", "text": "tests/"}],
                    },
                ),
                "isSidechain": True,
            },
            entry(
                "u3",
                "a4",
                "user",
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_2",
                            "content": [{"type": "text", "text": "tests/"}],
                        }
                    ],
                },
            ),
            {"type": "queue-operation", "operation": "enqueue", "sessionId": "s1"},
            {
                **base,
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c1",
                "parentUuid": None,
                "logicalParentUuid": "u3",
                "isSidechain": False,
                "content": "Conversation compacted",
            },
            entry(
                "u8",
                "c1",
                "user",
                {"role": "user", "content": "This session is being continued. Summary: …"},
                isCompactSummary=True,
            ),
            entry(
                "u9",
                "u8",
                "assistant",
                {
                    "id": "msg_3",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Fixed."}],
                },
            ),
            {"type": "progress", "data": {}},
        ]
    )


def codex() -> str:
    """A Codex CLI rollout: meta, context, messages, calls, outputs, a compaction."""

    def row(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-10-29T00:59:38.317Z", "type": kind, "payload": payload}

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return row("response_item", payload)

    def text(role: str, kind: str, value: str) -> dict[str, Any]:
        return item({"type": "message", "role": role, "content": [{"type": kind, "text": value}]})

    shell = {"command": ["bash", "-lc", "cat src/a.py"]}
    return _lines(
        [
            row("session_meta", {"id": "019a", "cwd": "/w", "cli_version": "0.46.0"}),
            text(
                "user", "input_text", "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"
            ),
            text("user", "input_text", "Make the CLI print its version. Then add a test."),
            row(
                "event_msg", {"type": "user_message", "message": "Make the CLI print its version."}
            ),
            row("turn_context", {"cwd": "/w", "model": "gpt-5-codex"}),
            item({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            text("assistant", "output_text", "Looking at the source."),
            item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps(shell),
                    "call_id": "call_1",
                }
            ),
            item({"type": "function_call_output", "call_id": "call_1", "output": "x = 1\n"}),
            row("compacted", {"message": "Summary: the CLI lives in src/a.py."}),
            item(
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "input": "*** Begin Patch\n*** End Patch",
                    "call_id": "call_2",
                }
            ),
            item(
                {
                    "type": "function_call_output",
                    "call_id": "call_2",
                    "output": {"content": "patch rejected", "success": False},
                }
            ),
            item({"type": "web_search_call", "status": "completed", "action": {"type": "search"}}),
            {"timestamp": "2025-10-29T01:00:00Z", "type": "something_new", "payload": {}},
            text("assistant", "output_text", "Done."),
        ]
    )


def openhands_events() -> str:
    """An OpenHands event stream (the exported trajectory: a JSON array of events)."""
    return json.dumps(
        [
            {
                "id": 0,
                "source": "agent",
                "action": "system",
                "args": {"content": "You are OpenHands."},
            },
            {"id": 1, "source": "user", "action": "message", "args": {"content": "Add a README"}},
            {
                "id": 2,
                "source": "agent",
                "action": "run",
                "args": {"command": "ls", "thought": "Look first."},
            },
            {
                "id": 3,
                "source": "agent",
                "observation": "run",
                "cause": 2,
                "content": "a.py",
                "extras": {"exit_code": 0},
            },
            {"id": 4, "source": "agent", "action": "finish", "args": {"thought": "Done."}},
        ]
    )


def swe_agent() -> str:
    """A classic SWE-agent ``.traj`` (text actions in ``history[]``)."""
    return json.dumps(
        {
            "trajectory": [{"action": "ls", "observation": "a.py", "thought": "look"}],
            "history": [
                {"role": "system", "content": "SWE-agent system"},
                {"role": "user", "content": "<issue>\nCrash on start\n</issue>"},
                {"role": "assistant", "content": "Look.\n```\nls\n```", "action": "ls\n"},
                {"role": "user", "content": "a.py"},
            ],
            "info": {"exit_status": "submitted"},
        }
    )


def aider() -> str:
    """Three aider sessions; the second ends a reply inside an unclosed fence."""
    return (
        "# aider chat started at 2024-05-01 10:00:00\n\n"
        "> Aider v0.50.0  \n\n"
        "#### add a greeting  \n\n"
        "hello.py\n```python\nprint('hi')\n```\n\n"
        "> Applied edit to hello.py  \n\n"
        "# aider chat started at 2024-05-02 09:00:00\n\n"
        "#### refactor main  \n\n"
        "main.py\n```python\ndef main():\n\n"
        "#### are you done?  \n\n"
        "Yes.\n\n"
        "# aider chat started at 2024-05-03 09:00:00\n\n"
        "#### thanks  \n\n"
        "You're welcome.\n"
    )


def openai_chat() -> str:
    return json.dumps(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "# Rename foo to bar\nIn every file."},
            {"role": "assistant", "content": "Done."},
        ]
    )


def anthropic() -> str:
    """An Anthropic Messages request body."""
    return json.dumps(
        {
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "You are a coding agent."}],
            "messages": [
                {"role": "user", "content": "List the files, please."},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "…", "signature": "x"},
                        {"type": "text", "text": "Listing."},
                        {
                            "type": "tool_use",
                            "id": "toolu_9",
                            "name": "bash",
                            "input": {"command": "ls"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "a.py\nb.py"},
                        {"type": "text", "text": "Now read a.py."},
                        {"type": "document", "source": {}},
                    ],
                },
                {"role": "assistant", "content": "It holds x = 1."},
            ],
        }
    )


ALL_FORMATS: dict[str, Callable[[], str]] = {
    "mini-swe-agent": mini_swe_v1,
    "claude-code": claude_code,
    "codex": codex,
    "openhands": openhands_events,
    "swe-agent": swe_agent,
    "aider": aider,
    "openai": openai_chat,
    "anthropic": anthropic,
}
