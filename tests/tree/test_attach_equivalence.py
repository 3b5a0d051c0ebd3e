"""The attachment rule's fast sums equal the rule's definition on random histories.

``decide`` looks idf weights up by document frequency and sums each candidate's
exchange once; the reference below is the rule as design 003 states it, with
every count taken from scratch over the nodes before the question and every
weight taken anew for every term, so a shortcut that changed a decision, a
score or a reason fails here.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.history.attach import AttachNode, Decision, Vocabulary, decide_all, terms

WORDS = [f"{stem}{i}" for stem in ("alpha", "parser", "header", "widget") for i in range(6)]
WORDS += ["project", "tests", "config_loader", "PixelRepresentation", "42"]


@st.composite
def histories(draw: st.DrawFn) -> list[AttachNode]:
    """Questions, their answers, and tool results of those answers, in log order."""
    out: list[AttachNode] = []
    question: str | None = None
    answer: str | None = None
    for i in range(draw(st.integers(1, 30))):
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=8)))
        role = draw(st.sampled_from(["question", "answer", "answer", "tool_result"]))
        if role == "question":
            question = f"n{i}"
            out.append(AttachNode(question, "question", text))
        elif role == "answer":
            answer = f"n{i}"
            out.append(AttachNode(answer, "answer", text, parent=question))
            question = None
        else:
            out.append(AttachNode(f"n{i}", "tool_result", text, answer=answer))
    return out


def reference(question: str, vocab: Vocabulary, before: list[AttachNode]) -> Decision:
    """The rule from its definition: counts from scratch, a weight per term each time."""
    nodes, held = len(before), [terms(n.text) for n in before]
    asked = terms(question)
    seen = asked.union(*vocab.unit_terms.values())
    df = {t: sum(t in h for h in held) for t in seen}

    def idf(term: str) -> float:
        return math.log((nodes + 1) / (df[term] + 1)) + 1.0

    if not vocab.unit_terms:
        return Decision(None, 0.0, "no earlier answer: the question starts the tree")
    limit = max(1, nodes // 3)
    found: dict[str, list[str]] = {}
    for term in sorted(asked):
        if term in vocab.introducer and 0 < df[term] <= limit:
            found.setdefault(vocab.introducer[term], []).append(term)
    if not found:
        why = f"only generic words (none in 1–{limit} of the {nodes} earlier nodes)"
        return Decision(None, 0.0, f"{why}: a new branch under the root")
    total = sum(idf(t) for t in sorted({t for ts in found.values() for t in ts}))

    def similarity(answer: str) -> float:
        unit = vocab.unit_terms[answer]
        if not asked or not unit:
            return 0.0
        norm_q = math.sqrt(sum(idf(t) ** 2 for t in asked))
        norm_u = math.sqrt(sum(idf(t) ** 2 for t in unit))
        return sum(idf(t) ** 2 for t in asked & unit) / (norm_q * norm_u)

    scored = {
        a: (round(0.5 * sum(idf(t) for t in own) / total + 0.5 * similarity(a), 3), len(own), a)
        for a, own in found.items()
    }
    score, _, answer = max(scored.values())
    term = max(found[answer], key=lambda t: (idf(t), len(t), t))
    reason = (
        f'specific term "{term}" (in {df[term]} of {nodes} earlier nodes), '
        f"introduced by this answer; similarity {similarity(answer):.2f} (lexical)"
    )
    return Decision(answer, score, reason, term)


@settings(max_examples=100, deadline=None)
@given(histories())
def test_decisions_equal_the_rule_computed_from_scratch(history: list[AttachNode]) -> None:
    fast = decide_all(history)
    vocab = Vocabulary()
    for i, node in enumerate(history):
        if node.role == "question":
            assert fast[node.id] == reference(node.text, vocab, history[:i]), node.text
        vocab.add(node)
    assert set(fast) == {n.id for n in history if n.role == "question"}
