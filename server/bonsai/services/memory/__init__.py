"""Persistent two-tier memory: markdown stores, hybrid recall, injection.

``MemoryService`` lives in :mod:`bonsai.services.memory.service` and is imported from
there: the hybrid index (and numpy, through its embedder) is not loaded by what needs
only the stores and the write tool (the view process, :mod:`bonsai.session.view_child`).
"""

from bonsai.services.memory.entry import MemoryEntry, MemoryIssue
from bonsai.services.memory.inject import Injection, InjectionState, index_line
from bonsai.services.memory.results import MemoryStatus, SearchHitView, SearchResult
from bonsai.services.memory.store import MemoryStoreError
from bonsai.services.memory.write_tool import MemoryWriteArgs, MemoryWriteError, tool_schema

__all__ = [
    "Injection",
    "InjectionState",
    "MemoryEntry",
    "MemoryIssue",
    "MemoryStatus",
    "MemoryStoreError",
    "MemoryWriteArgs",
    "MemoryWriteError",
    "SearchHitView",
    "SearchResult",
    "index_line",
    "tool_schema",
]
