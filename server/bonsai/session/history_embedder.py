"""The one embedding model the daemon uses over session history (related-history
reinjection, the tree's attachment rule): loaded once, on first use."""

from __future__ import annotations

from bonsai.services.memory.embedding import load_embedder
from bonsai.services.retrieval.embedder import Embedder
from bonsai.session.host import Host
from bonsai.settings import Settings


def history_embedder(daemon: Host, settings: Settings) -> Embedder | None:
    """The model, or None when none is available (callers fall back to lexical
    scores). Loading errors propagate: each caller says what it does without."""
    load = daemon.hub.embedder
    if load is None:
        load = daemon.hub.embedder = load_embedder(daemon.home, settings.memory)
    embedder: Embedder | None = load.embedder
    return embedder
