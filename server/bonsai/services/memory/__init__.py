"""Persistent two-tier memory: markdown stores, hybrid recall, injection."""

from bonsai.services.memory.entry import MemoryEntry, MemoryIssue
from bonsai.services.memory.inject import Injection, InjectionState, index_line
from bonsai.services.memory.results import MemoryStatus, SearchHitView, SearchResult
from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.store import MemoryStoreError
from bonsai.services.memory.write_tool import MemoryWriteArgs, MemoryWriteError, tool_schema

__all__ = [
    "Injection",
    "InjectionState",
    "MemoryEntry",
    "MemoryIssue",
    "MemoryService",
    "MemoryStatus",
    "MemoryStoreError",
    "MemoryWriteArgs",
    "MemoryWriteError",
    "SearchHitView",
    "SearchResult",
    "index_line",
    "tool_schema",
]
