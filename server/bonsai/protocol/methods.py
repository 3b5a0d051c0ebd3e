"""The method table: every ``bonsai/*`` method, its direction and its types.

This is the single source of truth for the protocol. JSON Schema, the
TypeScript types of the VS Code extension, the Lua annotations of the Neovim
plugin and docs/protocol.md are generated from it (``bonsai dev gen-protocol``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from bonsai.protocol import models as m

Direction = Literal["request", "notification", "server_request"]


@dataclass(frozen=True)
class Method:
    name: str
    params: type[BaseModel]  # a Wire model, or a union of them (chat events)
    result: type[m.Wire] | None
    direction: Direction
    doc: str

    @property
    def area(self) -> str:
        return self.name.split("/")[1]

    @property
    def verb(self) -> str:
        return self.name.split("/")[2]

    @property
    def type_stem(self) -> str:
        """``bonsai/session/create`` → ``SessionCreate``."""
        return _pascal(self.area) + _pascal(self.verb)

    @property
    def snake(self) -> str:
        return f"{self.area}_{_snake(self.verb)}"


def _pascal(word: str) -> str:
    return word[:1].upper() + word[1:]


def _snake(word: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in word)


def _req(name: str, params: type[m.Wire], result: type[m.Wire], doc: str) -> Method:
    return Method(name, params, result, "request", doc)


def _note(name: str, params: type[BaseModel], doc: str) -> Method:
    return Method(name, params, None, "notification", doc)


METHODS: tuple[Method, ...] = (
    _req("bonsai/daemon/status", m.Empty, m.DaemonStatusResult, "Daemon version and load."),
    _req("bonsai/daemon/stop", m.Empty, m.Empty, "Stop the daemon after finishing writes."),
    _req(
        "bonsai/session/create",
        m.SessionCreateParams,
        m.SessionCreateResult,
        "Create a session.",
    ),
    _req("bonsai/session/list", m.SessionListParams, m.SessionListResult, "List sessions."),
    _req(
        "bonsai/session/fork",
        m.SessionForkParams,
        m.SessionForkResult,
        "Copy a session's active path (up to a node) into a new session: its messages, "
        "context state and spilled tool outputs are copies, never shared.",
    ),
    _req(
        "bonsai/session/attach",
        m.SessionRef,
        m.SessionAttachResult,
        "Attach this client to a session: returns its log and subscribes to its events.",
    ),
    _req("bonsai/session/detach", m.SessionRef, m.Empty, "Stop receiving a session's events."),
    _req("bonsai/session/rename", m.SessionRenameParams, m.Empty, "Rename a session."),
    _req(
        "bonsai/session/delete",
        m.SessionRef,
        m.Empty,
        "Delete a session and everything stored for it.",
    ),
    _req(
        "bonsai/session/append",
        m.SessionAppendParams,
        m.SessionAppendResult,
        "Append a raw message to a session's log (tests and importers).",
    ),
    _req(
        "bonsai/session/import",
        m.SessionImportParams,
        m.SessionImportResult,
        "Import a recorded agent session (OpenAI, SWE-agent, OpenHands, Aider) as a new session.",
    ),
    _req("bonsai/config/get", m.ConfigGetParams, m.ConfigGetResult, "Effective settings."),
    _req(
        "bonsai/config/set",
        m.ConfigSetParams,
        m.ConfigGetResult,
        "Set one override (a null value clears it) in the user or project config file.",
    ),
    _req(
        "bonsai/config/preset",
        m.ConfigPresetParams,
        m.ConfigGetResult,
        "Apply a context preset and/or the smol profile at once.",
    ),
    # chat
    _req(
        "bonsai/chat/send",
        m.ChatSendParams,
        m.ChatSendResult,
        "Queue a user message; the agent turn streams bonsai/chat/event to attached clients.",
    ),
    _req("bonsai/chat/cancel", m.ChatCancelParams, m.ChatCancelResult, "Cancel a running turn."),
    # context ledger
    _req("bonsai/ctx/get", m.CtxGetParams, m.CtxGetResult, "The context ledger, wire or turns."),
    _req("bonsai/ctx/text", m.CtxNodeParams, m.CtxTextResult, "The full text of one node."),
    _req("bonsai/ctx/pin", m.CtxNodeParams, m.CtxNodeResult, "Pin a node: never collected."),
    _req("bonsai/ctx/unpin", m.CtxNodeParams, m.CtxNodeResult, "Unpin a node."),
    _req("bonsai/ctx/drop", m.CtxNodeParams, m.CtxNodeResult, "Leave a node out (restorable)."),
    _req("bonsai/ctx/stub", m.CtxNodeParams, m.CtxNodeResult, "Replace a node by a stub."),
    _req("bonsai/ctx/restore", m.CtxNodeParams, m.CtxNodeResult, "Restore a node's original."),
    _req(
        "bonsai/ctx/compact",
        m.CtxCompactParams,
        m.CtxCompactResult,
        "Run (or preview) a graduated compaction now.",
    ),
    # episodes
    _req("bonsai/episodes/list", m.SessionRef, m.EpisodesListResult, "The episode ledger."),
    _req("bonsai/episodes/restore", m.EpisodeRef, m.Empty, "Re-splice an archived episode."),
    _req(
        "bonsai/session/reset",
        m.SessionResetParams,
        m.SessionResetResult,
        "A hard reset (/clear, /start, /review): close the open task episode.",
    ),
    _req(
        "bonsai/episodes/recall",
        m.EpisodesRecallParams,
        m.EpisodesRecallResult,
        "Page an episode back or search the session, as the agent's recall tool does.",
    ),
    # conversation tree
    _req("bonsai/tree/get", m.SessionRef, m.TreeGetResult, "The conversation tree."),
    _req(
        "bonsai/tree/fork",
        m.TreeNodeParams,
        m.TreeGetResult,
        "Continue from a node: the next user message attaches under it.",
    ),
    _req(
        "bonsai/tree/reparent",
        m.TreeReparentParams,
        m.TreeGetResult,
        "Move a node and its subtree under another node.",
    ),
    _req(
        "bonsai/tree/hide",
        m.TreeNodeParams,
        m.TreeGetResult,
        "Hide a node and its subtree (soft delete into the recycle bin).",
    ),
    _req(
        "bonsai/tree/restore",
        m.TreeNodeParams,
        m.TreeGetResult,
        "Take a hidden node back out of the recycle bin.",
    ),
    _req(
        "bonsai/tree/jump",
        m.TreeNodeParams,
        m.TreeGetResult,
        "Make a node the active leaf: the model sees the path to it.",
    ),
    _req(
        "bonsai/tree/attach",
        m.TreeAttachParams,
        m.TreeGetResult,
        "Move a question under an answer, or to a new branch under the root (no parentId).",
    ),
    _req(
        "bonsai/reflect/retry",
        m.ReflectOfferParams,
        m.ChatSendResult,
        "Retry a failed question as a sibling branch, with the offer's reflection attached.",
    ),
    _req("bonsai/reflect/dismiss", m.ReflectOfferParams, m.Empty, "Dismiss a retry offer."),
    _req(
        "bonsai/tree/compare",
        m.TreeCompareParams,
        m.TreeCompareResult,
        "Two branches side by side: their messages and token totals.",
    ),
    # memory
    _req("bonsai/memory/list", m.MemoryScope, m.MemoryListResult, "Memory entries, both tiers."),
    _req("bonsai/memory/get", m.MemoryNameParams, m.MemoryGetResult, "One entry with its body."),
    _req("bonsai/memory/add", m.MemoryAddParams, m.MemoryEntryResult, "Remember a fact."),
    _req("bonsai/memory/edit", m.MemoryEditParams, m.MemoryEntryResult, "Edit an entry."),
    _req("bonsai/memory/forget", m.MemoryNameParams, m.Empty, "Delete an entry."),
    _req(
        "bonsai/memory/setEnabled",
        m.MemorySetEnabledParams,
        m.Empty,
        "Enable or disable an entry for retrieval.",
    ),
    _req(
        "bonsai/memory/search",
        m.MemorySearchParams,
        m.MemorySearchResult,
        "Hybrid search with lane scores.",
    ),
    # rules
    _req(
        "bonsai/rules/list",
        m.RulesScope,
        m.RulesListResult,
        "A workspace's rules (hand-written and detected), oldest first.",
    ),
    _req("bonsai/rules/add", m.RulesAddParams, m.RuleResult, "Add a hand-written rule."),
    _req(
        "bonsai/rules/edit",
        m.RulesEditParams,
        m.RuleResult,
        "Change a rule's text and/or switch it on or off.",
    ),
    _req("bonsai/rules/delete", m.RulesIdParams, m.Empty, "Delete a rule."),
    # repository map
    _req("bonsai/repomap/get", m.RepomapGetParams, m.RepomapGetResult, "The repository map."),
    # daemon -> client
    _note(
        "bonsai/session/event",
        m.SessionEventParams,
        "A session changed: sent to every client attached to it.",
    ),
    _note("bonsai/chat/event", m.ChatEventParams, "One event of a running agent turn."),
    _note("bonsai/ctx/changed", m.CtxChangedParams, "The ledger changed (status-chip summary)."),
    _note("bonsai/config/changed", m.ConfigChangedParams, "Settings were reloaded."),
    _note(
        "bonsai/memory/suggestion",
        m.MemorySuggestionParams,
        "Durable facts extracted before a compaction, for the user to confirm.",
    ),
    _note(
        "bonsai/rules/changed",
        m.RulesChangedParams,
        "A workspace's rules changed (an edit or a detection): the whole new list.",
    ),
    _note(
        "bonsai/handoff/suggested",
        m.HandoffSuggestedParams,
        "The window is nearly full: suggest a fresh session with this handoff.",
    ),
    _note(
        "bonsai/tree/changed",
        m.TreeChangedParams,
        "A tree operation was recorded: clients showing the tree fetch it again.",
    ),
    _note(
        "bonsai/reflect/offered",
        m.ReflectOfferedParams,
        "A turn failed: its grade, a reflection and an offer to retry as a sibling branch.",
    ),
    Method(
        "bonsai/approval/request",
        m.ApprovalRequestParams,
        m.ApprovalRequestResult,
        "server_request",
        "Ask attached clients to approve an edit or command; the first answer wins.",
    ),
    _note(
        "bonsai/approval/resolved",
        m.ApprovalResolvedParams,
        "An approval was answered or withdrawn: who, how and when, to every client of the session.",
    ),
)

BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}


def requests() -> list[Method]:
    return [method for method in METHODS if method.direction == "request"]
