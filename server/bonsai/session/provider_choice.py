"""Each session's provider: what its client sent, over the daemon's own settings.

A daemon outlives the shell that started it, so a key exported or a
``BONSAI_PROVIDER`` set afterwards never reaches its environment. Clients
therefore send their own provider settings (``ClientSettings``) with
``bonsai/session/create`` and ``bonsai/chat/send``, and the session uses them
from that turn on. Precedence, later wins: defaults < ``$BONSAI_HOME/config.json``
< the project's ``.bonsai/config.json`` < the daemon's environment (as it was
started) < the client's settings. Each send replaces what the previous one sent.
Keys follow the providers' rule: ``providers.api_key`` in a settings file wins
over any environment, the client's included.

The non-secret part (provider, model, base URL, fast model, who sent them) is
kept in the session's state, so its ledger shows the same model after a
restart; API keys live in this process's memory only, for that session, and
reach nothing but the provider request.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import SecretStr

from bonsai.errors import ConfigError
from bonsai.protocol import models as m
from bonsai.services.config import (
    ENV_KEYS,
    deep_merge,
    project_config_path,
    read_json_file,
    read_project_file,
    user_config_path,
    validate,
)
from bonsai.services.providers.factory import KEY_ENV, KEY_REQUIRED, base_url_for
from bonsai.services.store.sessions import UnknownSession
from bonsai.session.host import Host
from bonsai.settings import ProviderName, Settings

STATE_KEY = "client_settings"
_FIELDS = ("provider", "model", "base_url", "fast_model")
_ENV_FOR = {dotted.split(".", 1)[1]: name for name, dotted in ENV_KEYS.items()}
PROVIDERS: tuple[str, ...] = get_args(ProviderName)


def _memory(daemon: Host) -> dict[str, m.ClientSettings]:
    return daemon.hub.client_settings


def check_client(client: m.ClientSettings) -> None:
    """A provider name bonsai does not know cannot apply: say which setting to fix."""
    if client.provider is not None and client.provider not in PROVIDERS:
        where = next((n for n in client.names if "provider" in n.lower()), "provider")
        raise ConfigError(
            f"unknown provider {client.provider!r} ({where}, from {client.source}): "
            f"use one of {', '.join(PROVIDERS)}"
        )


def remember(daemon: Host, session_id: str, client: m.ClientSettings) -> None:
    """Use ``client`` for this session from now on (replacing what came before)."""
    check_client(client)
    _memory(daemon)[session_id] = client
    daemon.store.set_state(session_id, STATE_KEY, client.model_dump(exclude={"api_keys"}))


def client_of(daemon: Host, session_id: str) -> m.ClientSettings | None:
    """The session's client settings: this process's copy (with keys), else the stored part."""
    held = _memory(daemon).get(session_id)
    if held is not None:
        return held
    raw = daemon.store.get_state(session_id, STATE_KEY)
    if not isinstance(raw, dict):
        return None
    try:
        return m.ClientSettings.model_validate(raw)
    except ValueError:
        return None


def merged(daemon: Host, workspace: str | None, client: m.ClientSettings | None) -> Settings:
    """The settings of a session in ``workspace`` whose client sent ``client``."""
    loaded = daemon.settings(workspace)
    if client is None:
        return loaded.settings
    top: dict[str, Any] = {f: getattr(client, f) for f in _FIELDS if getattr(client, f)}
    settings = validate(deep_merge(loaded.overrides, {"providers": top}), "client", [])
    key = client.api_keys.get(settings.providers.provider)
    if key and settings.providers.api_key is None:  # a key in the settings wins, as documented
        providers = settings.providers.model_copy(update={"api_key": SecretStr(key)})
        settings = settings.model_copy(update={"providers": providers})
    return settings


def session_settings(daemon: Host, session_id: str, workspace: str) -> Settings:
    return served_model(daemon, merged(daemon, workspace, client_of(daemon, session_id)))


def served_model(daemon: Host, settings: Settings) -> Settings:
    """An ``openai-compatible`` session whose model nobody chose uses the one model the
    server serves (learnt by discovery), never the OpenAI default name."""
    providers = settings.providers
    if providers.provider != "openai-compatible" or "model" in providers.model_fields_set:
        return settings
    facts = daemon.hub.server_facts.peek(base_url_for(providers), providers.model)
    if facts is None or not facts.served_model:
        return settings
    chosen = providers.model_copy(update={"model": facts.served_model})
    return settings.model_copy(update={"providers": chosen})


def check_ready(daemon: Host, settings: Settings, env: Mapping[str, str]) -> None:
    """Raise a ``ConfigError`` naming the fix when a turn with ``settings`` cannot start."""
    providers = settings.providers
    if providers.provider not in KEY_REQUIRED:
        return
    if providers.api_key is not None and providers.api_key.get_secret_value():
        return
    var = KEY_ENV[providers.provider]
    if env.get(var, "").strip():
        return
    config = user_config_path(daemon.home)
    raise ConfigError(
        f"no API key for provider {providers.provider}: export {var} (then run the "
        f"command again) or set providers.api_key in {config}"
    )


def choice(
    daemon: Host,
    settings: Settings,
    client: m.ClientSettings | None,
    workspace: str | None,
    env: Mapping[str, str],
) -> m.ProviderChoice:
    """What ``settings`` use and where each figure came from."""
    files: list[tuple[str, dict[str, Any]]] = []
    if workspace:
        path = project_config_path(Path(workspace))
        files.append((str(path), read_project_file(Path(workspace), [])))
    path = user_config_path(daemon.home)
    files.append((str(path), read_json_file(path, [])))
    sources = {f: _source(f, client, env, files) for f in ("provider", "model", "base_url")}
    providers = settings.providers
    return m.ProviderChoice(
        provider=providers.provider,
        model=providers.model,
        base_url=providers.base_url,
        key=_key_source(settings, client, env, files),
        sources=sources,
    )


def _source(
    field: str,
    client: m.ClientSettings | None,
    env: Mapping[str, str],
    files: list[tuple[str, dict[str, Any]]],
) -> str:
    if client is not None and getattr(client, field):
        return client.source
    var = _ENV_FOR.get(field)
    if var and env.get(var):
        return f"the daemon's environment ({var}, as it was started)"
    for path, data in files:
        if (data.get("providers") or {}).get(field) is not None:
            return path
    return "default"


def _key_source(
    settings: Settings,
    client: m.ClientSettings | None,
    env: Mapping[str, str],
    files: list[tuple[str, dict[str, Any]]],
) -> str:
    name = settings.providers.provider
    var = KEY_ENV.get(name)
    for path, data in files:
        if (data.get("providers") or {}).get("api_key"):
            return f"providers.api_key in {path}"
    if client is not None and name in client.api_keys:
        return f"{client.source} ({var or 'key'})"
    if var and env.get(var, "").strip():
        return f"the daemon's environment ({var})"
    return "missing" if name in KEY_REQUIRED else "none needed"


def status_entries(daemon: Host, env: Mapping[str, str]) -> list[m.SessionProviderInfo]:
    """Every session whose client sent settings to this daemon."""
    out = []
    for session_id, client in sorted(_memory(daemon).items()):
        try:
            row = daemon.store.get(session_id)
        except UnknownSession:
            continue
        settings = merged(daemon, row.workspace, client)
        out.append(
            m.SessionProviderInfo(
                session_id=session_id,
                title=row.title or None,
                workspace=row.workspace,
                choice=choice(daemon, settings, client, row.workspace, env),
            )
        )
    return out


def forget(daemon: Host, session_id: str) -> None:
    _memory(daemon).pop(session_id, None)
