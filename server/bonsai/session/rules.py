"""Rules for the daemon: whose rules a request means, telling clients, detection.

A change (an edit over the protocol or a detection in a user message) sends
``bonsai/rules/changed`` with the whole new list to every client attached to a
session of that workspace, and to the client that made it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from bonsai.core.turn.rules import detect_rules
from bonsai.domain import StoredMessage
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.rules import Rule, RuleError, RuleStore, UnknownRule
from bonsai.services.workspace import workspace_key
from bonsai.session.host import Host, Subscriber

log = logging.getLogger("bonsai.rules")
Change = Literal["added", "edited", "deleted", "detected"]


def rule_store(daemon: Host) -> RuleStore:
    return RuleStore(daemon.db)


def scope_workspace(daemon: Host, scope: m.RulesScope) -> str:
    """The workspace a request names, directly or through its session."""
    if scope.session_id is not None and scope.workspace is not None:
        raise InvalidParams("Invalid params: give sessionId or workspace, not both")
    if scope.session_id is not None:
        return workspace_key(daemon.store.get(scope.session_id).workspace)
    if scope.workspace is not None:
        return workspace_key(scope.workspace)
    raise InvalidParams("Invalid params: sessionId or workspace is required")


@contextmanager
def user_errors() -> Iterator[None]:
    """Store errors as the JSON-RPC errors a client can act on."""
    try:
        yield
    except RuleError as error:
        raise InvalidParams(f"Invalid params: text: {error}") from None
    except UnknownRule as error:
        raise NotFound(str(error)) from None


def rule_info(rule: Rule) -> m.RuleInfo:
    return m.RuleInfo(
        id=rule.id,
        text=rule.text,
        source=rule.source,
        enabled=rule.enabled,
        created=rule.created_at,
        origin=rule.origin,
    )


def rule_infos(daemon: Host, workspace: str) -> list[m.RuleInfo]:
    return [rule_info(rule) for rule in rule_store(daemon).rules(workspace)]


def _listeners(daemon: Host, workspace: str) -> list[Subscriber]:
    listening = []
    for connection in daemon.clients():
        for sid in list(connection.attached):
            if daemon.store.exists(sid) and workspace_key(daemon.store.get(sid).workspace) == (
                workspace
            ):
                listening.append(connection)
                break
    return listening


def announce(
    daemon: Host, workspace: str, change: Change, requester: Subscriber | None = None
) -> None:
    params = m.RulesChangedParams(
        workspace=workspace, rules=rule_infos(daemon, workspace), change=change
    )
    targets = _listeners(daemon, workspace)
    if requester is not None and requester not in targets:
        targets.append(requester)
    payload = params.dump()
    for connection in targets:
        connection.notify("bonsai/rules/changed", payload)


def detect_in_user_message(daemon: Host, workspace: str, history: list[StoredMessage]) -> None:
    """Rules in the newest message the user typed (not the memory note, never a
    tool result or a reply). Never fails the turn."""
    newest = history[-1] if history else None
    if newest is None or newest.message.role != "user" or newest.message.name is not None:
        return
    try:
        texts = detect_rules(newest.message.content)
        store = rule_store(daemon)
        content = newest.message.content
        added = store.add_detected(workspace, newest.message_id, texts, content) if texts else []
    except Exception:
        log.exception("rule detection failed; the turn goes on without it")
        return
    if added:
        log.info("detected %d rule(s) in %s", len(added), newest.message_id)
        announce(daemon, workspace_key(workspace), "detected")
