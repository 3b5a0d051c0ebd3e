"""bonsai/config/*"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bonsai.core.context.presets import preset_overrides
from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import InvalidParams
from bonsai.protocol import models as m
from bonsai.services.config import project_config_path, user_config_path, write_override
from bonsai.session.base import tools_for
from bonsai.settings import Settings


def _result(ctx: Ctx, workspace: str | None) -> m.ConfigGetResult:
    loaded = ctx.daemon.settings(workspace)
    effective = loaded.settings.model_dump(mode="json")
    effective["providers"].pop("api_key", None)
    overrides = dict(loaded.overrides)
    if isinstance(overrides.get("providers"), dict):
        overrides["providers"] = {k: v for k, v in overrides["providers"].items() if k != "api_key"}
    path = project_config_path(Path(workspace)) if workspace else user_config_path(ctx.daemon.home)
    tools = [tool.name for tool in tools_for(loaded.settings, include_hidden=True)]
    last = ctx.daemon.hub.last_assembly.get(workspace) if workspace else None
    return m.ConfigGetResult(
        effective=effective,
        overrides=overrides,
        path=str(path),
        problems=loaded.problems,
        available_tools=tools,
        last_assembly=last,
    )


@handles("bonsai/config/get", read_only=True)
async def get(ctx: Ctx, params: m.ConfigGetParams) -> m.ConfigGetResult:
    return _result(ctx, params.workspace)


def _config_file(ctx: Ctx, scope: str, workspace: str | None) -> Path:
    if scope == "project":
        if not workspace:
            raise InvalidParams("scope 'project' needs a workspace")
        return project_config_path(Path(workspace))
    return user_config_path(ctx.daemon.home)


def _apply(ctx: Ctx, path: Path, changes: dict[str, Any], workspace: str | None) -> None:
    for key, value in changes.items():
        if key.split(".")[0] not in Settings.model_fields:
            valid = ", ".join(sorted(Settings.model_fields))
            raise InvalidParams(f"unknown settings section in {key!r}; valid: {valid}")
        try:
            write_override(path, key, value)
        except ValueError as error:
            raise InvalidParams(str(error)) from None
    problems = ctx.daemon.reload_settings()
    ctx.daemon.broadcast_all("bonsai/config/changed", m.ConfigChangedParams(problems=problems))


@handles("bonsai/config/set", read_only=False)
async def set_(ctx: Ctx, params: m.ConfigSetParams) -> m.ConfigGetResult:
    path = _config_file(ctx, params.scope, params.workspace)
    _apply(ctx, path, {params.key: params.value}, params.workspace)
    return _result(ctx, params.workspace)


@handles("bonsai/config/preset", read_only=False)
async def preset(ctx: Ctx, params: m.ConfigPresetParams) -> m.ConfigGetResult:
    changes: dict[str, Any] = {}
    if params.preset is not None:
        changes.update(preset_overrides(params.preset))
    if params.smol is not None:
        changes["context.smol"] = params.smol
    _apply(ctx, user_config_path(ctx.daemon.home), changes, params.workspace)
    return _result(ctx, params.workspace)
