"""Settings: precedence, clear problems with defaults, hot reload announced to clients."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bonsai.services.config import load_settings, write_override
from bonsai.settings import ContextSettings
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, start_client


def test_project_beats_user_and_environment_beats_both(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home).mkdir()
    (ws / ".bonsai").mkdir(parents=True)
    (home / "config.json").write_text(
        json.dumps({"providers": {"model": "user-model"}, "context": {"gcTrigger": 0.6}})
    )
    (ws / ".bonsai" / "config.json").write_text(json.dumps({"providers": {"model": "proj"}}))
    loaded = load_settings(home, ws, env={})
    assert loaded.settings.providers.model == "proj"
    assert loaded.settings.context.gc_trigger == 0.6, "camelCase keys are accepted"
    loaded = load_settings(home, ws, env={"BONSAI_MODEL": "env-model", "BONSAI_EPISODES": "0"})
    assert loaded.settings.providers.model == "env-model"
    assert loaded.settings.episodes.enabled is False
    assert loaded.problems == []


def test_invalid_key_is_named_and_falls_back(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps({"context": {"gc_trigger": "lots", "compact_trigger": 0.9}, "nonsense": 1})
    )
    loaded = load_settings(tmp_path, None, env={})
    assert loaded.settings.context.gc_trigger == ContextSettings().gc_trigger  # the default
    assert loaded.settings.context.compact_trigger == 0.9, "valid keys still apply"
    text = "\n".join(loaded.problems)
    assert "context.gc_trigger" in text
    assert "nonsense" in text


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{broken")
    loaded = load_settings(tmp_path, None, env={})
    assert "cannot be read as JSON" in loaded.problems[0]
    assert loaded.settings.context.gc_trigger == ContextSettings().gc_trigger


def test_write_override_sets_and_clears(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    write_override(path, "context.gcTrigger", 0.5)
    assert json.loads(path.read_text()) == {"context": {"gc_trigger": 0.5}}
    write_override(path, "context.gc_trigger", None)
    assert json.loads(path.read_text()) == {"context": {}}


async def test_edit_is_picked_up_without_restart(home: Path) -> None:
    client = await start_client([*BONSAI, "connect"], bonsai_env(home))
    try:
        before = await rpc(client, "bonsai/config/get")
        assert before["effective"]["context"]["preset"] == "balanced"
        (home / "config.json").write_text(json.dumps({"context": {"preset": "save"}}))
        await events_of(client).wait_for("bonsai/config/changed")
        after = await rpc(client, "bonsai/config/get")
        assert after["effective"]["context"]["preset"] == "save"
        (home / "config.json").write_text(json.dumps({"context": {"preset": "huge"}}))
        changed = await events_of(client).wait_for(
            "bonsai/config/changed", lambda p: p.get("problems")
        )
        assert "context.preset" in changed["problems"][0]
    finally:
        await close_client(client)


async def test_reading_the_config_is_not_a_change(home: Path) -> None:
    """Reads of config.json (every settings load opens it) must not reload the settings:
    that reloaded forever, several times a second, each time telling every client."""
    (home / "config.json").write_text(json.dumps({"context": {"preset": "balanced"}}))
    client = await start_client([*BONSAI, "connect"], bonsai_env(home))
    try:
        for _ in range(3):
            await rpc(client, "bonsai/config/get")
        (home / "config.json").read_text()
        await asyncio.sleep(1.5)  # the watcher's debounce is 0.15 s: a loop would show by now
        assert events_of(client).of("bonsai/config/changed") == []
        (home / "config.json").write_text(json.dumps({"context": {"preset": "save"}}))
        await events_of(client).wait_for("bonsai/config/changed")
        await asyncio.sleep(1.0)
        assert len(events_of(client).of("bonsai/config/changed")) == 1, "one edit, one reload"
    finally:
        await close_client(client)
