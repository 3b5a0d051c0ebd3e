"""Everything the daemon keeps for its sessions between requests, in one typed place.

Runtimes, assembly memos, token counters, background summaries, the last
assembly per workspace and per session, per-session indexes, the history
embedder and the shared provider clients. :meth:`SessionHub.forget` drops all a
session owns (and cancels its tasks) when the session is deleted.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import apsw

from bonsai.agent.parts_cache import StablePartsCache
from bonsai.agent.runtime import SessionRuntime
from bonsai.core.context import AssemblyMemo
from bonsai.protocol.models import ClientSettings, LastAssembly
from bonsai.services.providers.clients import ClientPool
from bonsai.services.providers.discovery import FactsCache
from bonsai.services.tokens import TokenCounter
from bonsai.services.tokens.remote import RemoteCounting
from bonsai.session.approvals import OpenApproval

if TYPE_CHECKING:  # numpy and the embedder load where vectors are made, not with the hub
    import numpy as np

    from bonsai.services.memory.embedding import EmbeddingLoad

log = logging.getLogger("bonsai.session")


@dataclass
class SessionHub:
    # per session
    runtimes: dict[str, SessionRuntime] = field(default_factory=dict)
    memos: dict[str, AssemblyMemo] = field(default_factory=dict)
    background: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    repomap_text: dict[str, str | None] = field(default_factory=dict)  # as the last request had it
    client_settings: dict[str, ClientSettings] = field(default_factory=dict)  # with their keys
    approvals: dict[str, list[OpenApproval]] = field(default_factory=dict)  # waiting for an answer
    # per workspace: the newest request built there (config/get shows it)
    last_assembly: dict[str, LastAssembly] = field(default_factory=dict)
    # per base URL and model: what each server said about itself
    server_facts: FactsCache = field(default_factory=FactsCache)
    # per model: count caches and calibration live across sessions
    counters: dict[str, TokenCounter] = field(default_factory=dict)
    # the view process's: exact counts asked of the daemon, no tokenizer loaded here
    counting: RemoteCounting | None = None
    # shared by every session: vectors by text, the history index, the embedding model
    attach_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    history_index: apsw.Connection | None = None
    embedder: EmbeddingLoad | None = None
    # the provider clients every turn shares, one per shape (kept connections; closed at stop)
    clients: ClientPool = field(default_factory=ClientPool)
    # the view worker's own (None on the loop: a turn reads its parts from disk)
    stable_parts: StablePartsCache | None = None

    def forget(self, session_id: str) -> None:
        """Drop everything ``session_id`` owns; cancel its running turns and summary."""
        task = self.background.pop(session_id, None)
        if task is not None and not task.done():
            task.cancel()
        runtime = self.runtimes.pop(session_id, None)
        if runtime is not None:
            runtime.cancel(None)
        self.memos.pop(session_id, None)
        self.repomap_text.pop(session_id, None)
        self.client_settings.pop(session_id, None)
        for workspace, last in list(self.last_assembly.items()):
            if last.session_id == session_id:
                del self.last_assembly[workspace]
        log.info("forgot session %s", session_id)

    def close(self) -> None:
        """Cancel every session's background work and close the shared index."""
        for task in self.background.values():
            task.cancel()
        self.background.clear()
        if self.history_index is not None:
            self.history_index.close()
            self.history_index = None
