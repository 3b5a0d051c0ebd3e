"""When is a new map worth breaking the provider's prompt cache?

The map sits in the cacheable prefix: every changed byte costs a cache miss on
the whole prefix. So the previous text is kept unless one of these holds
(checked in order; the first gives the ledger reason):

1. there is no previous map, or the token budget changed;
2. a file shown in the map joined the conversation (it must leave the map);
3. a file shown in the map was deleted or changed its definitions (what the map
   shows of it is now wrong);
4. the leading files changed: a file is now in the top ``top_k`` that was not in
   the previous top ``2 * top_k``, or a previous top-``top_k`` file fell out of
   the current top ``2 * top_k`` (the factor 2 is hysteresis, so near-ties at
   the boundary do not flip the map);
5. something the user named (a file, or the definition of a named identifier)
   would lead the new map but is not shown;
6. rank drift: the ranks of the shown files, normalised over the shown set,
   moved by more than ``drift_threshold`` in total (sum of |Δ|, at most 2).

An edit to a file that is not shown and does not reorder the leading files
changes nothing. Time never does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from bonsai.services.repomap.records import Definition, MapFile


class RenderState(NamedTuple):
    text: str
    tokens: int
    budget: int
    files: list[MapFile]
    ranks: dict[str, float]  # rank of each shown file when rendered
    fingerprints: dict[str, str]  # definitions fingerprint of each shown file
    leaders: list[str]  # top 2*top_k files (best first) when rendered


class Decision(NamedTuple):
    render: bool
    reason: str


def fingerprint(definitions: Sequence[Definition]) -> str:
    """What the map can show of a file: signatures and nesting, not line numbers."""
    digest = hashlib.sha256()
    for d in definitions:
        digest.update(f"{d.depth}\0{d.signature}\n".encode())
    return digest.hexdigest()[:16]


def _normalised(ranks: Mapping[str, float], paths: Collection[str]) -> dict[str, float]:
    total = sum(ranks.get(p, 0.0) for p in paths)
    if total <= 0:
        return {p: 0.0 for p in paths}
    return {p: ranks.get(p, 0.0) / total for p in paths}


def rank_drift(before: Mapping[str, float], now: Mapping[str, float]) -> float:
    """Sum of |Δ| of the shown files' ranks, each side normalised over them."""
    paths = list(before)
    old = _normalised(before, paths)
    new = _normalised(now, paths)
    return sum(abs(new[p] - old[p]) for p in paths)


def _leader_change(previous: Sequence[str], current: Sequence[str], top_k: int) -> str | None:
    entered = [p for p in current[:top_k] if p not in set(previous)]
    left = [p for p in previous[:top_k] if p not in set(current)]
    if not entered and not left:
        return None
    parts = [f"+{p}" for p in entered[:3]] + [f"-{p}" for p in left[:3]]
    return "leading files changed: " + " ".join(parts)


def decide(
    prev: RenderState | None,
    budget: int,
    chat_files: Collection[str],
    fingerprints_now: Mapping[str, str | None],
    ranks_now: Mapping[str, float],
    leaders_now: Sequence[str],
    top_k: int,
    drift_threshold: float,
    named_now: Sequence[str] = (),
) -> Decision:
    """Apply the rule above. ``fingerprints_now`` maps each previously shown file
    to its current fingerprint (None: deleted); ``leaders_now`` is the current
    top ``2 * top_k``; ``named_now`` the files that lead the new order because
    the user named them (or their definitions)."""
    if prev is None:
        return Decision(True, "first map")
    if budget != prev.budget:
        return Decision(True, f"token budget changed {prev.budget} -> {budget}")
    joined = sorted(set(prev.fingerprints) & set(chat_files))
    if joined:
        return Decision(True, f"{joined[0]} joined the conversation")
    for path in sorted(prev.fingerprints):
        now = fingerprints_now.get(path)
        if now != prev.fingerprints[path]:
            what = "was removed" if now is None else "changed its definitions"
            return Decision(True, f"{path} {what}")
    leaders = _leader_change(prev.leaders, leaders_now, top_k)
    if leaders is not None:
        return Decision(True, leaders)
    missing = [p for p in named_now if p not in prev.fingerprints]
    if missing:
        return Decision(True, f"named {missing[0]} is not in the map")
    drift = rank_drift(prev.ranks, ranks_now)
    if drift > drift_threshold:
        return Decision(True, f"rank drift {drift:.2f} > {drift_threshold:.2f}")
    return Decision(False, f"unchanged inputs (rank drift {drift:.2f})")
