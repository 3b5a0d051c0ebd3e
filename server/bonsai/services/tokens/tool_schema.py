"""Render tool definitions into the text a provider's prompt carries.

OpenAI turns function schemas into a TypeScript-like namespace inside the
system prompt; the rendering below follows that shape, which counts closer to
the bill than raw JSON. Other families receive the schema as JSON, rendered
canonically (sorted keys, compact) so the same tools always give the same text.
"""

from __future__ import annotations

import json
from typing import Any

from bonsai.services.tokens.types import Family

ToolSpec = tuple[str, str, dict[str, Any]]


def normalize_tool(tool: dict[str, Any], index: int) -> ToolSpec:
    """``(name, description, parameters)`` of an OpenAI- or Anthropic-shaped tool."""
    if not isinstance(tool, dict):
        raise ValueError(f"tool #{index} must be a dict, got {type(tool).__name__}")
    function = tool.get("function")
    body: dict[str, Any] = function if isinstance(function, dict) else tool
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool #{index} has no name")
    description = body.get("description") or ""
    params = body.get("parameters", body.get("input_schema")) or {}
    if not isinstance(description, str) or not isinstance(params, dict):
        raise ValueError(f"tool {name!r}: description must be text and parameters an object")
    return name, description, params


def render_tools(family: Family, tools: list[dict[str, Any]]) -> list[str]:
    """One rendered text per tool, in the order given."""
    specs = [normalize_tool(tool, i) for i, tool in enumerate(tools)]
    if family == "openai":
        return [_render_typescript(spec) for spec in specs]
    return [_render_json(spec) for spec in specs]


def _render_json(spec: ToolSpec) -> str:
    name, description, params = spec
    payload = {"name": name, "description": description, "parameters": params}
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _render_typescript(spec: ToolSpec) -> str:
    name, description, params = spec
    lines = [f"// {line}" for line in description.splitlines() if line.strip()]
    properties = params.get("properties") or {}
    if not properties:
        lines.append(f"type {name} = () => any;")
        return "\n".join(lines)
    required = set(params.get("required") or [])
    lines.append(f"type {name} = (_: {{")
    for prop, schema in properties.items():
        schema = schema if isinstance(schema, dict) else {}
        if schema.get("description"):
            lines.append(f"// {schema['description']}")
        optional = "" if prop in required else "?"
        lines.append(f"{prop}{optional}: {_ts_type(schema)},")
    lines.append("}) => any;")
    return "\n".join(lines)


def _ts_type(schema: dict[str, Any]) -> str:
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"{_ts_type(items if isinstance(items, dict) else {})}[]"
    if kind == "object":
        props = schema.get("properties") or {}
        fields = [f"{k}: {_ts_type(v if isinstance(v, dict) else {})}" for k, v in props.items()]
        inner = ", ".join(fields)
        return f"{{ {inner} }}" if inner else "object"
    if kind == "integer":
        return "number"
    if isinstance(kind, str):
        return kind
    return "any"
