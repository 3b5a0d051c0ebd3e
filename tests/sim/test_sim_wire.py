"""Request validation as strict as the real APIs, usage shapes, and the
offline tokenizer the usage figures rest on."""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

import bonsai.sim
from bonsai.sim import _tok, anthropic_wire, openai_wire
from bonsai.sim._tok import encode, tokenizer_name
from bonsai.sim.frames import ReplyUsage, text_pieces
from bonsai.sim.prompt import anthropic_prompt, openai_prompt

CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}


def oai(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages), **extra}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "model parameter"),
        (oai(), "non-empty array"),
        (oai({"role": "robot", "content": "x"}), "'messages[0].role'"),
        (oai({"role": "tool", "tool_call_id": "c1", "content": "x"}), "must be a response"),
        (
            oai(
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "user", "content": "x"},
            ),
            "c1",
        ),
        (
            oai({"role": "user", "content": "x"}, stream_options={"include_usage": True}),
            "only allowed when 'stream'",
        ),
        (
            {"model": "o3", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
            "max_completion_tokens",
        ),
        (oai({"role": "user", "content": "x"}, tools=[{"type": "function"}]), "tools[0]"),
    ],
)
def test_openai_validation_rejects_what_the_api_rejects(
    body: dict[str, Any], fragment: str
) -> None:
    error = openai_wire.validate(body)
    assert error is not None and fragment in error


def test_openai_validation_accepts_a_proper_tool_round_trip() -> None:
    body = oai(
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "x"}]},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
    )
    assert openai_wire.validate(body) is None


VERSION = {"anthropic-version": "2023-06-01"}


def ant(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": list(messages), **extra}


USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (ant({"role": "system", "content": "x"}), "messages.0.role"),
        (ant({"role": "user", "content": [{"type": "text", "text": "  "}]}), "non-whitespace"),
        (
            ant({"role": "user", "content": "x"}, USE, {"role": "user", "content": "next"}),
            "without `tool_result`",
        ),
        (
            ant({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}),
            "unexpected `tool_use_id`",
        ),
        (
            ant(
                {"role": "user", "content": "x"},
                USE,
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "a"},
                        {"type": "tool_result", "tool_use_id": "t1"},
                    ],
                },
            ),
            "must come first",
        ),
        ({"model": "m", "messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
        (
            ant(
                {"role": "user", "content": "x"},
                system=[
                    {"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}}
                    for i in range(5)
                ],
            ),
            "A maximum of 4 blocks",
        ),
    ],
)
def test_anthropic_validation_rejects_what_the_api_rejects(
    body: dict[str, Any], fragment: str
) -> None:
    error = anthropic_wire.validate(body, VERSION, counting=False)
    assert error is not None and fragment in error


def test_count_tokens_needs_no_max_tokens() -> None:
    assert (
        anthropic_wire.validate(
            {"model": "m", "messages": [{"role": "user", "content": "x"}]}, VERSION, counting=True
        )
        is None
    )


def test_usage_shapes_for_each_wire() -> None:
    usage = ReplyUsage(prompt=3000, cached=2048, cache_written=500, completion=7)
    assert anthropic_wire.usage_json(usage) == {
        "input_tokens": 452,
        "cache_creation_input_tokens": 500,
        "cache_read_input_tokens": 2048,
        "output_tokens": 7,
    }
    openai = openai_wire.usage_json(ReplyUsage(3000, 2048, 0, 7), "gpt-4o")
    assert (
        openai["prompt_tokens_details"]["cached_tokens"] == 2048
        and "prompt_cache_hit_tokens" not in openai
    )
    deepseek = openai_wire.usage_json(ReplyUsage(3000, 2048, 0, 7), "deepseek-chat")
    assert (deepseek["prompt_cache_hit_tokens"], deepseek["prompt_cache_miss_tokens"]) == (
        2048,
        952,
    )


def test_tiktoken_o200k_loads_offline() -> None:
    assert tokenizer_name() == "o200k_base"
    assert len(encode("hello world")) == 2


def test_prompt_tokens_are_prefix_stable_and_breakpoints_land_after_blocks() -> None:
    short = oai({"role": "user", "content": "hello"})
    longer = oai({"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"})
    a, b = openai_prompt(short), openai_prompt(longer)
    assert b[: len(a)] == a and len(b) > len(a)
    body = ant(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x " * 50, "cache_control": {"type": "ephemeral"}}
            ],
        }
    )
    tokens, breakpoints = anthropic_prompt(body)
    assert breakpoints == [len(tokens) - 1]  # just before the end-of-message marker


@pytest.mark.parametrize("text", ["", "one", "Hello there,  friend.\n\nNext line ", "  leading"])
def test_text_chunking_is_lossless(text: str) -> None:
    assert "".join(text_pieces(text)) == text


def test_the_simulator_shares_no_code_with_the_clients_it_checks() -> None:
    package = Path(bonsai.sim.__file__).parent
    imported: set[str] = set()
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert not [name for name in imported if name.startswith("bonsai.services")]


def test_seeding_writes_the_file_tiktoken_looks_for_and_repairs_it(tmp_path: Path) -> None:
    target = tmp_path / hashlib.sha1(_tok.BLOB_URL.encode()).hexdigest()
    _tok._seed(tmp_path)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == _tok.SHA256
    target.write_bytes(b"corrupt")
    _tok._seed(tmp_path)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == _tok.SHA256


def test_the_cache_directory_is_set_only_while_tiktoken_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with _tok._tiktoken_cache(tmp_path):
        assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
