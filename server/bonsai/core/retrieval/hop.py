"""The second hop: from the entities of the top hits to the entries they link.

A bridge question ("which city did the technical writer at Lumen Grid move
to?") names one entry ("Ana Costa works as a technical writer at Lumen
Grid"); the entry holding the answer ("Ana moved to Porto") shares a name
with the first and little or nothing with the question, so no keyword score
ranks it near the top. The second hop follows the entity words (names,
identifiers: :func:`bonsai.core.retrieval.parts.entities`) of the top hits
that the question does not use itself to the other entries containing them
(entity linking across entries), and lifts a linked entry by what it adds:

* one that matches a question term its source lacks (the pair covers more
  of the question than the source alone) is placed just below its source;
* one that matches only terms its source has too is placed at ``factor`` ×
  the source's score;
* one that matches no question term at all (``nomatch``) at ``factor²`` ×
  the source's score, or not at all when ``nomatch`` is false.

Among equals, the linked entry matching more question weight per length goes
first (among entries matching no question term, the shortest: the one most
about the linked name). At most ``limit`` entries are lifted, so a single-hop question loses
at most that many places of its tail. Pure: the caller finds the linked
entries (see :class:`bonsai.services.retrieval.index.HybridIndex`) and passes
the stored term sets as a function.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from bonsai.core.retrieval.documents import Hit
from bonsai.core.retrieval.fusion import Scores

STEP = 1e-5  # spacing below a source, larger than fusion's rounding (1e-6)


def second_hop(
    scores: Scores,
    heads: Sequence[str],
    links: Mapping[str, Collection[str]],
    candidates: Iterable[str],
    weights: Mapping[str, float],
    *,
    terms_of: Callable[[str], Collection[str]],
    average_terms: float,
    factor: float,
    limit: int,
    nomatch: bool = True,
    sources: dict[str, str] | None = None,
    relations: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Lift ``candidates`` linked to the ``heads`` in ``scores`` (in place);
    returns the lifted ids, best first.

    ``links`` maps a head to its link terms, ``weights`` each question term to
    its weight (IDF); terms are as the index tokenizes them. ``sources``, when
    given, receives for each entry whose score the hop set the head it was
    reached from (the path that found it). ``relations`` maps a pseudo-term
    of ``weights`` (a relation family the question names, see
    :mod:`bonsai.core.retrieval.relations`) to the entries stating that
    relation: each holds the pseudo-term as if it were one of its terms."""
    if limit <= 0 or not heads:
        return []
    if relations:
        terms_of = _with_relations(terms_of, relations)
    skip = set(heads)
    best: dict[str, tuple[float, float]] = {}  # id -> (score, match per length)
    via: dict[str, str] = {}
    for doc_id in candidates:
        if doc_id in skip or doc_id in best:
            continue
        terms = terms_of(doc_id)
        match = sum(w for t, w in weights.items() if t in terms)
        norm = match / (0.25 + 0.75 * len(terms) / max(average_terms, 1.0))
        if match <= 0:
            norm = -float(len(terms))
        for rank, head in enumerate(heads):
            if not any(t in terms for t in links.get(head, ())):
                continue
            base = scores[head][0] or 0.0
            if match <= 0:
                if not nomatch:
                    continue
                score = base * factor * factor
            elif any(t in terms and t not in terms_of(head) for t in weights):
                score = base - STEP * (rank + 1)
            else:
                score = base * factor
            if doc_id not in best or (score, norm) > best[doc_id]:
                best[doc_id] = (score, norm)
                via[doc_id] = head
    chosen = sorted(best, key=lambda d: (-best[d][0], -best[d][1], d))[:limit]
    for offset, doc_id in enumerate(chosen):
        score = best[doc_id][0] - STEP * offset / (limit + 1)
        row = scores.get(doc_id)
        if row is None:
            scores[doc_id] = [score, None, None]
        elif (row[0] or 0.0) < score:
            row[0] = score
        else:
            continue
        if sources is not None:
            sources[doc_id] = via[doc_id]
    return chosen


def _with_relations(
    terms_of: Callable[[str], Collection[str]], relations: Mapping[str, Collection[str]]
) -> Callable[[str], Collection[str]]:
    cache: dict[str, Collection[str]] = {}

    def terms(doc_id: str) -> Collection[str]:
        known = cache.get(doc_id)
        if known is None:
            extra = {key for key, docs in relations.items() if doc_id in docs}
            known = set(terms_of(doc_id)) | extra if extra else terms_of(doc_id)
            cache[doc_id] = known
        return known

    return terms


def inherit_bonus(hits: Sequence[Hit], bonus: Callable[[Hit], float], factor: float) -> list[Hit]:
    """Hits re-ranked (best first, ties by id) after each second-hop hit takes
    ``factor`` × its source's ``bonus`` in place of its own when that is more.

    The hop places a linked entry relative to its source's score *before* the
    priors; a bonus the source earns from the question itself (its date lies in
    the window the question names: "the person who moved to Tallinn in
    November 2025") belongs to the path, so the entry that path reached keeps
    its place under its source instead of falling below every other entry of
    that month. A hit whose source is not among ``hits`` keeps its score."""
    by_id = {hit.id: hit for hit in hits}
    out: list[Hit] = []
    for hit in hits:
        source = by_id.get(hit.via) if hit.via is not None else None
        extra = factor * bonus(source) - bonus(hit) if source is not None else 0.0
        out.append(
            hit.model_copy(update={"score": round(hit.score + extra, 6)}) if extra > 0 else hit
        )
    out.sort(key=lambda h: (-h.score, h.id))
    return out
