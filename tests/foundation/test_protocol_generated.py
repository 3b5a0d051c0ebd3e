"""The protocol is defined once; every derived file must match the generator."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from pydantic import BaseModel, RootModel

from bonsai.protocol import codegen
from bonsai.protocol.methods import METHODS
from bonsai.protocol.models import Wire

ROOT = Path(__file__).resolve().parents[2]


def test_generated_files_are_fresh() -> None:
    stale = codegen.stale(ROOT)
    assert stale == [], f"run `bonsai dev gen-protocol`: stale {stale}"


def test_every_method_is_bonsai_area_verb_and_unique() -> None:
    names = [m.name for m in METHODS]
    assert len(names) == len(set(names))
    for name in names:
        parts = name.split("/")
        assert parts[0] == "bonsai" and len(parts) == 3, name


def test_every_request_has_a_handler() -> None:
    import bonsai.daemon.handlers  # noqa: F401
    from bonsai.daemon.rpc import HANDLERS

    missing = [m.name for m in METHODS if m.direction == "request" and m.name not in HANDLERS]
    assert missing == []


def _members(*models: type[BaseModel] | None) -> list[type[BaseModel]]:
    """The models themselves, or a union's members (chat events: one model per kind)."""
    out: list[type[BaseModel]] = []
    for model in models:
        if model is not None and issubclass(model, RootModel):
            union = get_args(model.model_fields["root"].annotation)
            assert union, f"{model.__name__} is a union of wire models"
            out += union
        elif model is not None:
            out.append(model)
    return out


def test_wire_models_are_camel_case_and_strict() -> None:
    from bonsai.protocol.models import SessionCreateParams

    assert SessionCreateParams.model_validate({"workspace": "/w"}).dump() == {"workspace": "/w"}
    for method in METHODS:
        for model in _members(method.params, method.result):
            assert issubclass(model, Wire)
            for alias in model.model_json_schema(by_alias=True).get("properties", {}):
                assert "_" not in alias, f"{model.__name__}.{alias} is not camelCase"


def test_typescript_and_lua_name_every_method() -> None:
    ts = codegen.typescript()
    lua = codegen.lua()
    for method in METHODS:
        assert f'"{method.name}"' in ts
        assert f'"{method.name}"' in lua
