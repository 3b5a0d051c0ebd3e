"""Where a new question belongs in the conversation tree (design 003).

A question attaches under the answer that *introduced* one of its **specific**
terms: a content word or identifier found in at most a third of the earlier
nodes (and in at least one). When several answers introduced such terms, the
one with the best score wins::

    score = 0.5 · coverage + 0.5 · similarity

``coverage`` is the share (idf-weighted) of the question's specific terms that
this answer introduced; ``similarity`` is the semantic similarity of the
question to the answer's exchange (its question, its text and its tool
results), given by the caller from an embedding model, or else a lexical
tf-idf cosine computed here. A question with only generic words — common to
more than a third of the nodes, stop words, numbers — starts a new branch
under the root (``target`` None).

A term found first in a question is credited to the answer that replied to it.
Pure: same nodes, same decision. No I/O, no clock.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from bonsai.core.retrieval.text import content_terms, stem

Similarity = Literal["model2vec", "lexical"]
NodeRole = Literal["question", "answer", "tool_result"]


@dataclass(frozen=True)
class AttachNode:
    """One earlier node: a question, an answer, or a tool result of ``answer``."""

    id: str
    role: NodeRole
    text: str
    parent: str | None = None  # an answer: the question it replies to (when it does)
    answer: str | None = None  # a tool result: the answer whose call it answers


@dataclass(frozen=True)
class Decision:
    target: str | None  # the answer to attach under; None: a new branch under the root
    score: float
    reason: str
    term: str | None = None  # the specific term that decided it
    similarity: Similarity = "lexical"


# every node's terms, kept across calls: a history's texts do not change, and each
# view of the tree reads them all again (4,096 texts of ~1 kB hold ~20 MB)
@functools.lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    """Stemmed content terms of ``text``, identifiers whole and in parts, no numbers."""
    return frozenset(stem(t) for t in content_terms(text) if not t.isdigit())


@dataclass
class Vocabulary:
    """What the earlier nodes say, updated one node at a time in log order."""

    nodes: int = 0
    df: dict[str, int] = field(default_factory=dict)  # term -> nodes containing it
    introducer: dict[str, str] = field(default_factory=dict)  # term -> answer id
    unit_terms: dict[str, set[str]] = field(default_factory=dict)  # answer -> its exchange's
    _unclaimed: dict[str, set[str]] = field(default_factory=dict)  # question -> new terms

    def add(self, node: AttachNode) -> None:
        found = terms(node.text)
        self.nodes += 1
        for term in found:
            self.df[term] = self.df.get(term, 0) + 1
        if node.role == "question":
            self._unclaimed[node.id] = {t for t in found if t not in self.introducer}
            return
        answer = node.id if node.role == "answer" else node.answer
        if answer is None:
            return
        unit = self.unit_terms.setdefault(answer, set())
        unit |= found
        if node.role == "answer" and node.parent in self._unclaimed:
            asked = self._unclaimed.pop(node.parent)
            unit |= asked
            found = found | asked
        for term in found:
            self.introducer.setdefault(term, answer)

    def idf(self, term: str) -> float:
        return math.log((self.nodes + 1) / (self.df.get(term, 0) + 1)) + 1.0

    def weights(self) -> Weights:
        """The idf of every term at this point of the history (for one decision)."""
        return Weights(self)

    def is_specific(self, term: str) -> bool:
        """In at least one earlier node and in at most a third of them (at least one)."""
        count = self.df.get(term, 0)
        return 0 < count <= max(1, self.nodes // 3)


class Weights:
    """idf and idf² by document frequency, each computed once for a decision.

    A term's idf depends only on how many earlier nodes hold it, so the sums over
    a question and its candidates' exchanges look the weights up by that count
    instead of taking a logarithm per term (same values, bit for bit)."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.df = vocab.df
        self.nodes = vocab.nodes
        self._idf: dict[int, float] = {}
        self._squared: dict[int, float] = {}

    def idf(self, term: str) -> float:
        count = self.df.get(term, 0)
        value = self._idf.get(count)
        if value is None:
            value = self._idf[count] = math.log((self.nodes + 1) / (count + 1)) + 1.0
        return value

    def squares(self, found: Iterable[str]) -> float:
        """Σ idf² over ``found``, in its iteration order."""
        df, squared = self.df, self._squared
        total = 0.0
        for term in found:
            count = df.get(term, 0)
            value = squared.get(count)
            if value is None:
                value = squared[count] = self.idf(term) ** 2
            total += value
        return total


def candidates(question: str, vocab: Vocabulary) -> dict[str, list[str]]:
    """Answer id → the question's specific terms that answer introduced."""
    out: dict[str, list[str]] = {}
    for term in sorted(terms(question)):
        answer = vocab.introducer.get(term)
        if answer is not None and vocab.is_specific(term):
            out.setdefault(answer, []).append(term)
    return out


def lexical_similarity(
    question: str, answer: str, vocab: Vocabulary, weights: Weights | None = None
) -> float:
    """tf-idf cosine (binary tf) of the question and an answer's exchange."""
    asked, unit = terms(question), vocab.unit_terms.get(answer, set())
    if not asked or not unit:
        return 0.0
    w = weights or vocab.weights()
    shared = w.squares(asked & unit)
    return shared / (math.sqrt(w.squares(asked)) * math.sqrt(w.squares(unit)))


def decide(
    question: str,
    vocab: Vocabulary,
    semantic: Mapping[str, float] | None = None,
) -> Decision:
    """The decision for ``question`` given the earlier nodes in ``vocab``.

    ``semantic`` maps candidate answer ids to an embedding similarity in [0, 1]
    (see :func:`candidates`); without it the lexical similarity is used."""
    method: Similarity = "model2vec" if semantic is not None else "lexical"
    if not vocab.unit_terms:
        return Decision(None, 0.0, "no earlier answer: the question starts the tree", None, method)
    found = candidates(question, vocab)
    if not found:
        limit = max(1, vocab.nodes // 3)
        why = f"only generic words (none in 1–{limit} of the {vocab.nodes} earlier nodes)"
        return Decision(None, 0.0, f"{why}: a new branch under the root", None, method)
    w = vocab.weights()
    specific = sorted({t for ts in found.values() for t in ts})
    total = sum(w.idf(t) for t in specific)
    best: tuple[float, int, str, float] | None = None
    for answer, own in found.items():
        coverage = sum(w.idf(t) for t in own) / total
        sim = _similarity(question, answer, vocab, w, semantic)
        score = round(0.5 * coverage + 0.5 * sim, 3)
        key = (score, len(own), answer, sim)
        if best is None or key[:3] > best[:3]:
            best = key
    assert best is not None
    score, _, answer, sim = best
    term = max(found[answer], key=lambda t: (w.idf(t), len(t), t))
    reason = (
        f'specific term "{term}" (in {vocab.df[term]} of {vocab.nodes} earlier nodes), '
        f"introduced by this answer; similarity {sim:.2f} ({method})"
    )
    return Decision(answer, score, reason, term, method)


def _similarity(
    question: str,
    answer: str,
    vocab: Vocabulary,
    weights: Weights,
    semantic: Mapping[str, float] | None,
) -> float:
    if semantic is not None:
        return min(1.0, max(0.0, semantic.get(answer, 0.0)))
    return lexical_similarity(question, answer, vocab, weights)


def decide_all(nodes: Iterable[AttachNode]) -> dict[str, Decision]:
    """Question id → its decision against the nodes before it (lexical similarity)."""
    vocab = Vocabulary()
    out: dict[str, Decision] = {}
    for node in nodes:
        if node.role == "question":
            out[node.id] = decide(node.text, vocab)
        vocab.add(node)
    return out
