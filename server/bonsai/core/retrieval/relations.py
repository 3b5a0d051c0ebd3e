"""Relation families: the words English uses for one relation between things.

A bridge question names a relation in its own words ("Who *employs* the
colleague that relocated to Halifax?"); the entry holding the answer names it
in others ("Mei Quintero *works as* a technical writer *at* Corvid Systems").
The second hop (:mod:`bonsai.core.retrieval.hop`) reaches that entry through
a shared name, together with other entries sharing the name ("Outside work,
Mei …", "Noted by Mei Quintero"), which match the question's words equally or
not at all. A relation family says which of them states the relation the
question asks about.

The table is small, generic and hand-written from general English (not from
any question set). A member is a word or a short phrase; both are compared as
the full-text index tokenizes them (porter stems), so "works at" covers
"working at" and "worked at", and a phrase matches only as adjacent words
("moved to Porto", not "moved the team offsite to"). Single words too common
to name a relation on their own ("work", "job", "move") are members only in
phrases.

No offline lexicon is used: the WordNet packages on PyPI (``wn``, ``nltk``'s
corpus reader, ``textblob``) download their data at run time, which a fresh
install must never do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

FAMILIES: Mapping[str, tuple[str, ...]] = {
    "employment": (
        "employ",
        "employs",
        "employed",
        "employer",
        "employee",
        "employment",
        "hire",
        "hired",
        "hiring",
        "works at",
        "works for",
        "works as",
        "work at",
        "work for",
        "job at",
        "job as",
        "job title",
        "occupation",
        "profession",
        "salary",
        "payroll",
        "on the staff of",
    ),
    "residence": (
        "lives in",
        "live in",
        "living in",
        "resides",
        "resident",
        "relocated",
        "relocate",
        "relocation",
        "moved to",
        "moves to",
        "move to",
        "moved from",
        "based in",
        "settled in",
        "home town",
        "hometown",
    ),
    "obligation": (
        "constraint",
        "requirement",
        "require",
        "requires",
        "required",
        "must",
        "mandatory",
        "mandate",
        "obligation",
        "obliged",
        "policy",
        "rule",
        "regulation",
        "compliance",
        "comply",
        "contract",
        "contractual",
        "not allowed",
        "may not",
        "has to",
    ),
    "cause": (
        "because",
        "due to",
        "reason",
        "caused",
        "causes",
        "led to",
        "so that",
        "in order to",
        "as a result",
        "motivated",
    ),
    "ownership": (
        "owns",
        "owner",
        "owned by",
        "maintainer",
        "maintained by",
        "responsible for",
        "in charge of",
        "on call for",
    ),
    "location": (
        "located in",
        "hosted in",
        "hosted on",
        "deployed to",
        "deployed in",
        "runs in",
        "region",
        "data centre",
        "data center",
    ),
}

Tokenize = Callable[[str], Sequence[str]]


@dataclass(frozen=True)
class RelationTable:
    """:data:`FAMILIES` with every member as the index tokenizes it."""

    members: Mapping[str, tuple[tuple[str, ...], ...]]  # family -> member token runs
    phrases: Mapping[str, tuple[str, ...]]  # family -> members as written

    @classmethod
    def build(
        cls, tokenize: Tokenize, families: Mapping[str, Sequence[str]] = FAMILIES
    ) -> RelationTable:
        members: dict[str, tuple[tuple[str, ...], ...]] = {}
        phrases: dict[str, tuple[str, ...]] = {}
        for family, words in families.items():
            runs: dict[tuple[str, ...], str] = {}
            for word in words:  # inflections of one member collapse to the first
                runs.setdefault(tuple(tokenize(word)), word)
            runs.pop((), None)
            members[family] = tuple(runs)
            phrases[family] = tuple(runs.values())
        return cls(members, phrases)

    def evoked(self, tokens: Sequence[str]) -> dict[str, list[str]]:
        """The families a text names (``tokens``: the text as the index
        tokenizes it, in order), each with the tokens of its members found."""
        found: dict[str, list[str]] = {}
        for family, runs in self.members.items():
            for run in runs:
                n = len(run)
                if any(tuple(tokens[i : i + n]) == run for i in range(len(tokens) - n + 1)):
                    found.setdefault(family, []).extend(run)
        return found


def relation_key(family: str) -> str:
    """The pseudo-term standing for ``family``'s phrases among a question's
    terms (no token of the index contains a colon)."""
    return f"rel:{family}"


@dataclass(frozen=True)
class Expansion:
    """What the relation families a question names add to its terms."""

    words: Mapping[str, float]  # single-word members (tokens) -> weight
    phrases: Mapping[str, tuple[str, ...]]  # relation_key(family) -> its phrases as written
    weights: Mapping[str, float]  # relation_key(family) -> weight


def expand(table: RelationTable, tokens: Sequence[str], weights: Mapping[str, float]) -> Expansion:
    """The members of every family that ``tokens`` (the question, tokenized in
    order) name, each weighed as the question's heaviest word of that family
    in ``weights`` (the heaviest question word when the store has none of
    them): single words as extra question terms (a question word keeps its
    own weight), phrases grouped under the family's pseudo-term, for the
    caller to find in the full-text index."""
    fallback = max(weights.values(), default=1.0)
    words: dict[str, float] = {}
    phrases: dict[str, tuple[str, ...]] = {}
    family_weights: dict[str, float] = {}
    for family, found in table.evoked(tokens).items():
        weight = max((weights.get(t, 0.0) for t in found), default=0.0) or fallback
        runs = zip(table.members[family], table.phrases[family], strict=True)
        multi = []
        for run, written in runs:
            if len(run) == 1:
                if run[0] not in weights:
                    words[run[0]] = max(words.get(run[0], 0.0), weight)
            else:
                multi.append(written)
        if multi:
            key = relation_key(family)
            phrases[key] = tuple(multi)
            family_weights[key] = weight
    return Expansion(words, phrases, family_weights)
