"""autoReflect: after a failed turn, grade it, write a reflection, offer a retry.

The offer (``bonsai/reflect/offered``) is kept in the session's state until it
is taken (``bonsai/reflect/retry``: a fork at the failed question's parent, then
the same question again with the reflection attached as a data block) or
dismissed. The daemon retries on its own only when no tool of the session
needs approval, and never retries a retry on its own.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from pydantic import ConfigDict

from bonsai.core.history.pages import frame
from bonsai.core.history.tree import ROOT, TreeOp
from bonsai.core.turn import grading
from bonsai.domain import StoredMessage
from bonsai.errors import NotFound
from bonsai.protocol import models as m
from bonsai.services.providers.types import ProviderError
from bonsai.services.store.tree import TreeStore, load_tree
from bonsai.session.attach import is_question
from bonsai.session.fast_model import fast_summary
from bonsai.session.host import Host
from bonsai.session.tree_events import tree_changed
from bonsai.settings import Settings

log = logging.getLogger("bonsai.reflect")
STATE_KEY = "reflect_offers"
MAX_OFFERS = 20


class Offer(m.Wire):
    """A retry offer as the session's state keeps it (camelCase, like the wire)."""

    model_config = ConfigDict(frozen=True)

    offer_id: str
    question_id: str
    question: str
    reflection: str
    grade: m.ReflectGrade


def _failed(daemon: Host, session_id: str, appended: list[StoredMessage], text: str):  # type: ignore[no-untyped-def]
    """(grade, failed question) for the turn that just ended, or None."""
    asked = next((s for s in appended if s.message.role == "user" and not s.message.name), None)
    if asked is None:
        return None
    grade = grading.grade_turn([s.message for s in appended])
    if grade is not None:
        return grade, asked
    grade = grading.grade_reply(text)
    if grade is None:
        return None
    previous = _previous_question(daemon, session_id, asked.message_id)
    return (grade, previous) if previous is not None else None


def _previous_question(daemon: Host, session_id: str, question_id: str) -> StoredMessage | None:
    history = daemon.store.messages(session_id)
    tree = load_tree(daemon.db, session_id, history)
    path = tree.path(question_id)[:-1]
    by_id = {s.message_id: s for s in history}
    earlier = [i for i in path if is_question(tree.nodes[i])]
    return by_id[earlier[-1]] if earlier else None


async def _write(settings: Settings, grade: grading.Grade, question: str) -> str:
    if settings.providers.fast_model:
        try:
            text = await fast_summary(settings, grading.reflection_prompt(grade, question))
            return grading.with_evidence(text, grade)
        except (ProviderError, OSError) as error:
            log.warning("fast-model reflection failed (%s); using the deterministic one", error)
    return grading.reflection(grade)


def offers(daemon: Host, session_id: str) -> dict[str, Offer]:
    raw = daemon.store.get_state(session_id, STATE_KEY, {}) or {}
    return {k: Offer.model_validate(v) for k, v in raw.items()}


def _save(daemon: Host, session_id: str, kept: dict[str, Offer]) -> None:
    recent = dict(list(kept.items())[-MAX_OFFERS:])
    daemon.store.set_state(session_id, STATE_KEY, {k: v.dump() for k, v in recent.items()})


async def offer_after_turn(
    daemon: Host,
    session_id: str,
    settings: Settings,
    appended: list[StoredMessage],
    text: str,
    *,
    auto_retry: bool,
) -> Offer | None:
    """Grade the turn that just ended; when it failed, store and broadcast an offer."""
    if not settings.tree.auto_reflect:
        return None
    found = _failed(daemon, session_id, appended, text)
    if found is None:
        return None
    grade, asked = found
    offer = Offer(
        offer_id=f"r_{uuid.uuid4().hex[:12]}",
        question_id=asked.message_id,
        question=asked.message.content,
        reflection=await _write(settings, grade, asked.message.content),
        grade=m.ReflectGrade(
            kind=grade.kind, severity=grade.severity, evidence=list(grade.evidence)
        ),
    )
    _save(daemon, session_id, {**offers(daemon, session_id), offer.offer_id: offer})
    params = m.ReflectOfferedParams(
        session_id=session_id,
        offer_id=offer.offer_id,
        question_id=offer.question_id,
        grade=offer.grade,
        reflection=offer.reflection,
        auto_retry=auto_retry,
    )
    daemon.broadcast(session_id, "bonsai/reflect/offered", params)
    return offer


def take(daemon: Host, session_id: str, offer_id: str) -> Offer:
    """Remove an offer and return it; NotFound when it was taken or dismissed."""
    kept = offers(daemon, session_id)
    offer = kept.pop(offer_id, None)
    if offer is None:
        raise NotFound(f"no retry offer {offer_id!r} in this session (taken or dismissed?)")
    _save(daemon, session_id, kept)
    return offer


def data_block(offer: Offer) -> str:
    """The reflection as it reaches the model: a data frame after the question."""
    body = "A previous attempt at this same request failed. Notes on it:\n" + offer.reflection
    return "<reflection>\n" + frame(body) + "\n</reflection>"


def start_retry(
    daemon: Host, session_id: str, offer: Offer, send: Callable[[str, str], str]
) -> str:
    """Fork at the failed question's parent and send the question again."""
    history = daemon.store.messages(session_id)
    tree = load_tree(daemon.db, session_id, history)
    node = tree.nodes.get(offer.question_id)
    if node is None:
        raise NotFound(f"the failed question {offer.question_id} is no longer in the tree")
    op = TreeOp(kind="fork", node_id=node.parent or ROOT, after_seq=history[-1].seq)
    TreeStore(daemon.db).add(session_id, op)
    tree_changed(daemon, session_id, "fork")
    return send(offer.question, data_block(offer))
