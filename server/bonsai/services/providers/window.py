"""The window a session plans for, and where that figure came from.

Precedence, first that applies:

1. a ``providers.models`` row the user wrote that sets ``context_window``;
2. what the server said about the model (``discovery.ServerFacts``);
3. bonsai's built-in registry row for the model's name;
4. a small default for an unknown model (32k for hosted APIs, 8k for a local
   server that exposes nothing), with a visible note.

The output reserve (and so every request's ``max_tokens``) always fits inside
the window: it is the configured reserve, capped by a fraction of the window (a
quarter by default), so small windows get a proportional reserve.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bonsai.services.providers.discovery import ServerFacts, same_model
from bonsai.services.providers.registry import ModelRow, lookup_model
from bonsai.settings import ModelInfo, ProviderSettings

LOCAL_UNKNOWN_WINDOW = 8_192  # a local server that exposes nothing: the common small start
DEFAULT_RESERVE_FRACTION = 0.25


class WindowFacts(BaseModel):
    """The effective model row plus the provenance shown in the ledger header."""

    model_config = ConfigDict(frozen=True)

    row: ModelRow
    info: ModelInfo  # the row with the effective window applied
    window_source: str
    notes: tuple[str, ...] = ()
    server: ServerFacts | None = None

    @property
    def tools_unsupported(self) -> bool:
        return self.server is not None and self.server.tools is False


def _local(settings: ProviderSettings) -> bool:
    return settings.provider == "openai-compatible"


def resolve_window(
    settings: ProviderSettings, facts: ServerFacts | None, model: str | None = None
) -> WindowFacts:
    resolved = _resolve(settings, facts, model or settings.model)
    note = _unserved_note(facts, model or settings.model)
    return resolved.model_copy(update={"notes": (*resolved.notes, note)}) if note else resolved


def _unserved_note(facts: ServerFacts | None, name: str) -> str:
    """A server that lists several models, none of them the session's: say which to set."""
    if facts is None or len(facts.served_models) < 2:
        return ""
    if any(same_model(served, name) for served in facts.served_models):
        return ""
    shown = ", ".join(facts.served_models[:5])
    more = f" and {len(facts.served_models) - 5} more" if len(facts.served_models) > 5 else ""
    return (
        f"this server serves {len(facts.served_models)} models ({shown}{more}), "
        f"none named {name!r}: set BONSAI_MODEL or providers.model to one of them"
    )


def _resolve(settings: ProviderSettings, facts: ServerFacts | None, name: str) -> WindowFacts:
    row = lookup_model(name, settings.models)
    info = row.info
    server_note = (facts.note,) if facts is not None and facts.note else ()
    if row.source == "config" and "context_window" in info.model_fields_set:
        return WindowFacts(
            row=row,
            info=info,
            window_source=f"your config (providers.models.{row.matched})",
            server=facts,
        )
    if facts is not None and facts.window is not None:
        applied = info.model_copy(
            update={
                "context_window": facts.window,
                "max_output": min(info.max_output, facts.window),
            }
        )
        return WindowFacts(
            row=row,
            info=applied,
            window_source=facts.window_source,
            notes=server_note,
            server=facts,
        )
    if row.source == "builtin":
        source = f"bonsai's registry (row {row.matched!r})"
        notes: tuple[str, ...] = ()
        if _local(settings):
            notes = (
                "the server does not expose its window: assuming the model's "
                f"{info.context_window:,}; set providers.models.{name}.context_window "
                "if the server was started smaller",
            )
        return WindowFacts(row=row, info=info, window_source=source, notes=notes, server=facts)
    window = LOCAL_UNKNOWN_WINDOW if _local(settings) else info.context_window
    applied = info.model_copy(
        update={"context_window": window, "max_output": min(info.max_output, window)}
    )
    note = (
        f"unknown window: set providers.models.{name}.context_window "
        f"(assuming {window:,} tokens for {name!r})"
    )
    return WindowFacts(
        row=row,
        info=applied,
        window_source="default for an unknown model",
        notes=(note, *server_note),
        server=facts,
    )


def fit_reserve(window: int, reserve: int, fraction: float = DEFAULT_RESERVE_FRACTION) -> int:
    """The output reserve that fits: the configured one, at most ``fraction`` of the
    window (so a small window gets a proportional reserve). A request's
    ``max_tokens`` is this, capped by the model's output limit."""
    return max(1, min(reserve, int(window * fraction)))
