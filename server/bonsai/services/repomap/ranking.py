"""Rank files and definitions for one request, and order them for rendering.

1. Personalization: 10% spread evenly over files, 90% over the session's
   signals: files in the conversation, files named in the text, recently
   read/edited files (half weight), and identifiers named in the text — those
   go to the identifier's own node, so their definers receive rank directly
   even when nothing in the conversation references them.
2. Personalized PageRank over the reference graph.
3. A definition's score is the rank its identifier passes to its file. On top,
   named definitions (a specific identifier defined in at most
   ``NAMED_MAX_DEFINERS`` files) and the top definitions of named files get a bonus larger than any
   rank, so what the user named is rendered first. Within a file the k-th best
   definition is divided by (1 + k), so the map covers more files.
4. The file order (``FUSED_ORDER``) is the reciprocal-rank fusion of the text's
   words, its mentions and this PageRank (``fusion.py``); a file's best row
   scores its fused score and its other rows that times their step-3 score
   relative to the best, so the rows fill the budget in the files' order; the
   naming bonuses are then in units of the file's score (``BONUS_BY_FILE``).

Everything is vectorised over a definition table built once per graph, and ties
break by (path, line): the order is deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import NamedTuple, overload

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray, IntArray, rank_transition
from bonsai.core.repomap.render import MapEntry, MapTag
from bonsai.services.repomap.fusion import fuse, lanes
from bonsai.services.repomap.graph import BoolArray, DefTable, RepoGraph
from bonsai.services.repomap.lexical import is_test_path, lexical_scores, query_of
from bonsai.services.repomap.mentions import Mentions

_NO_INTS: IntArray = np.zeros(0, dtype=np.int64)
BASE_SHARE = 0.10
RECENT_WEIGHT = 0.5
UNREFERENCED_SHARE = 0.01  # score of a definition nobody references, × file rank
FILE_ONLY_SHARE = 0.1  # score of a file without definitions, × file rank
NAMED_MAX_DEFINERS = 8
NAMED_MIN_WEIGHT = 0.3  # plain words ("open", "value") rank but get no bonus
NAMED_IDENT_BONUS = 2.0
NAMED_FILE_BONUS = 1.0
NAMED_FILE_TOP_DEFS = 3
PAGERANK_TOL = 1e-8  # per node; the L1 change that stops the iteration is n_nodes x this
# an edited graph this large starts its PageRank from the ranks before the edit
# (a few sweeps instead of ~20); smaller graphs rank from scratch, which costs
# ~1 ms there and gives the same bits as a fresh process
WARM_START_MIN_EDGES = 20_000
# ``Ranked.order(count)`` first scores this many of the best rows by base (about
# what the within-file division needs; more are taken when they do not suffice)
CANDIDATE_FACTOR = 8
CANDIDATE_SLACK = 256
NAMED_SCAN_ROWS = 2048  # rows searched for named files before sorting them all
# a map of B tokens may read 4 B + 64 rows (``map_state.entry_rows``) but its fit
# reads about B / 6 (rows of ~13 tokens, galloping to twice the fit): the first
# sort makes a sixteenth of the rows a caller may read, plus this slack
FIRST_ROWS_SLACK = 64
LEXICAL_WEIGHT = 3.0  # teleport weight of the file whose words best match the text
LEXICAL_TOP = 20  # files that get lexical weight, best first
LEXICAL_POWER = 2.0  # weight = LEXICAL_WEIGHT * (score / best score) ** power
TEST_AS_EVIDENCE = True  # a test file's lexical weight goes to the names it uses
BONUS_BY_FILE = True  # naming bonuses in units of the file's fused score (recall @ 1k 0.88->0.94)
FUSED_ORDER = True  # files ordered by the fused lanes (fusion.py), not PageRank alone


class _Sorted:
    """The rows a ranking has sorted so far (shared by a ranking and the copy of
    it a relined graph gets)."""

    __slots__ = ("complete", "order")

    def __init__(self) -> None:
        self.order: IntArray = _NO_INTS
        self.complete = False


class RankMemo(NamedTuple):
    """What a ranking needs to be rebound to a relined graph (kept on the graph;
    holds no graph, so replaced graphs are freed without a cycle collection)."""

    inputs: tuple[object, ...]
    ranks: FloatArray
    file_rank: FloatArray
    base: FloatArray
    file_bonus: FloatArray
    keep: IntArray
    named: list[str]
    rows_hint: int
    sorted: _Sorted


class Ranked:
    """The ranking of one request. ``order(count)`` gives the best ``count``
    definition-table rows (ties by path, then line), scoring and sorting only
    what it must: a row's score is at most its base (``score_rows``), so the
    rows whose base reaches the best ``count``-th score are the only candidates,
    and a row's within-file rank depends only on the rows of its file with a
    higher base, which are candidates too."""

    def __init__(
        self,
        file_rank: FloatArray,
        base: FloatArray,
        file_bonus: FloatArray,
        keep: IntArray,
        graph: RepoGraph,
        done: _Sorted | None = None,
    ) -> None:
        self.file_rank = file_rank  # per file id, normalised to sum 1
        self.graph = graph
        self.table = graph.table
        self.named: list[str] = []  # files leading the order because the user named them
        self._base = base
        self._file_bonus = file_bonus
        self._keep = keep  # rows outside the conversation
        self._sorted = _Sorted() if done is None else done
        self.rows_hint = 0  # rows the caller will ask for: the first order makes as many

    def memo(self, inputs: tuple[object, ...], ranks: FloatArray) -> RankMemo:
        return RankMemo(
            inputs,
            ranks,
            self.file_rank,
            self._base,
            self._file_bonus,
            self._keep,
            self.named,
            self.rows_hint,
            self._sorted,
        )

    @classmethod
    def rebound(cls, memo: RankMemo, graph: RepoGraph) -> Ranked:
        """The memo's ranking for ``graph``, a view with the same arrays but other
        definition lines (``RepoGraph.relined``): the order is kept."""
        ranked = cls(memo.file_rank, memo.base, memo.file_bonus, memo.keep, graph, memo.sorted)
        ranked.named, ranked.rows_hint = memo.named, memo.rows_hint
        return ranked

    def order(self, count: int) -> IntArray:
        """The best ``count`` rows (fewer when there are fewer), best first."""
        done = self._sorted
        if count <= len(done.order) or done.complete:
            return done.order[:count]
        wanted, count = count, max(count, self.rows_hint)
        keep, table = self._keep, self.table
        if count * 2 >= len(keep):
            rows, neg = keep, -_scores(table.fid, self._base, self._file_bonus, keep)
            done.complete = True
        else:
            rows, neg = self._best(count)
        done.order = rows[np.lexsort((table.line[rows], table.fid[rows], neg))]
        return done.order[:wanted]

    def _best(self, count: int) -> tuple[IntArray, FloatArray]:
        """The rows scoring at least the ``count``-th best score, with their
        negated scores. Exact: the candidates are the rows with the best bases
        (and every row of a named file); a row left out has at least as many
        rows of its file above it as that file has candidates, which bounds its
        score; the candidates widen until their ``count``-th score beats every
        such bound."""
        keep, fid, base, bonus = self._keep, self.table.fid, self._base, self._file_bonus
        whole = len(keep) == len(base)  # nobody excluded: keep is every row, in order
        in_keep = base if whole else base[keep]
        bonused = _bonused_rows(self.table, bonus, keep, whole)  # named files: always candidates
        wanted = CANDIDATE_FACTOR * count + CANDIDATE_SLACK
        while wanted < len(keep):
            floor = np.partition(in_keep, len(keep) - wanted)[len(keep) - wanted]
            taken = (in_keep >= floor) | bonused
            cand = keep[taken]
            neg = -_scores(fid, base, bonus, cand)
            if count <= len(cand):
                cut = float(np.partition(neg, count - 1)[count - 1])
                if -cut >= floor:  # a row left out scores at most its base, below the floor
                    chosen = neg <= cut
                    return cand[chosen], neg[chosen]
                left = keep[~taken]
                above = np.bincount(fid[cand], minlength=len(bonus))[fid[left]]
                bound = float((base[left] / (1.0 + above)).max()) if len(left) else -np.inf
                if -cut > bound:
                    chosen = neg <= cut  # every row tied with the last one too
                    return cand[chosen], neg[chosen]
            wanted *= 4
        neg = -_scores(fid, base, bonus, keep)
        cut = float(np.partition(neg, count - 1)[count - 1]) if count <= len(keep) else np.inf
        chosen = neg <= cut
        return keep[chosen], neg[chosen]

    def entries(self, limit: int) -> Sequence[MapEntry]:
        """The best ``limit`` rows as map entries, ranked and made when first read:
        the budget fit reads a prefix (about a sixth of a row per token), so only
        the rows it reaches are sorted, in prefixes growing fourfold (each is the
        full order's prefix, so the entries are the same whatever was sorted)."""
        return _Entries(self, min(limit, len(self._keep)))


def _bonused_rows(table: DefTable, bonus: FloatArray, keep: IntArray, whole: bool) -> BoolArray:
    """Per row of ``keep``, whether its file carries a naming bonus (a few files:
    their row ranges are marked rather than every row's file looked up)."""
    if not whole:
        return bonus[table.fid[keep]] > 0
    marked = np.zeros(len(keep), dtype=bool)
    for f in np.flatnonzero(bonus > 0).tolist():
        marked[table.offsets[f] : table.offsets[f + 1]] = True
    return marked


class _Entries(Sequence[MapEntry]):
    def __init__(self, ranked: Ranked, count: int) -> None:
        self._ranked = ranked
        self._count = count
        self._rows: list[int] = []
        self._made: list[MapEntry] = []

    def __len__(self) -> int:
        return self._count

    def _make(self, upto: int) -> None:
        upto = min(upto, self._count)
        if upto > len(self._rows):  # sort a longer prefix: at least four times the last
            more = max(upto, 4 * len(self._rows), self._ranked.rows_hint)
            self._rows = self._ranked.order(min(more, self._count)).tolist()
        graph, fid = self._ranked.graph, self._ranked.table.fid
        for row in self._rows[len(self._made) : upto]:
            path = graph.files[int(fid[row])]
            d = graph.definition(row)
            tag = None if d is None else MapTag(d.line, d.signature, d.depth)
            self._made.append(MapEntry(path, tag))

    @overload
    def __getitem__(self, index: int) -> MapEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[MapEntry]: ...
    def __getitem__(self, index: int | slice) -> MapEntry | list[MapEntry]:
        if isinstance(index, slice):
            self._make(self._count if index.stop is None else index.stop)
            return self._made[index]
        self._make(index + 1 if index >= 0 else self._count)
        return self._made[index]


def text_scores(graph: RepoGraph, text: str) -> FloatArray:
    """BM25 of the text's words per file (``lexical.py``); zeros without a text
    or with ``LEXICAL_WEIGHT`` 0 (the words are not used then)."""
    if not text.strip() or LEXICAL_WEIGHT <= 0:
        return np.zeros(len(graph.files))
    return lexical_scores(graph.core, query_of(text), graph.postings)


def lexical_signal(graph: RepoGraph, scores: FloatArray) -> FloatArray:
    """Teleport weight per node from the files' BM25 ``scores``: the best
    ``LEXICAL_TOP`` files, scaled to the best one. A test file's weight
    goes to the identifiers it uses (split by their edge weights), so a test
    that matches the issue is evidence for the code it exercises."""
    signal = np.zeros(graph.n_nodes)
    if LEXICAL_WEIGHT <= 0:
        return signal
    best = float(scores.max()) if len(scores) else 0.0
    if best <= 0:
        return signal
    order = np.lexsort((np.arange(len(scores)), -scores))[:LEXICAL_TOP]
    order = order[scores[order] > 0]
    weight = LEXICAL_WEIGHT * (scores[order] / best) ** LEXICAL_POWER
    for fid, w in zip(order.tolist(), weight.tolist(), strict=True):
        if TEST_AS_EVIDENCE and is_test_path(graph.files[fid]):
            targets, edge_w = graph.uses_of(fid)
            if len(targets) and float(edge_w.sum()) > 0:
                np.add.at(signal, targets, w * edge_w / float(edge_w.sum()))
                continue
        signal[fid] += w
    return signal


def personalization(
    graph: RepoGraph,
    chat_files: Collection[str],
    recent_files: Collection[str],
    mentions: Mentions,
    text: str = "",
    scores: FloatArray | None = None,
) -> FloatArray:
    """The teleport vector (see module doc); ``scores``: the text's BM25 per file
    when the caller has it (else computed from ``text``)."""
    n_files = len(graph.files)
    signal = lexical_signal(graph, text_scores(graph, text) if scores is None else scores)
    for path in chat_files:
        if path in graph.file_index:
            signal[graph.file_index[path]] += 1.0
    for path in recent_files:
        if path in graph.file_index:
            signal[graph.file_index[path]] += RECENT_WEIGHT
    for path, weight in mentions.files.items():
        if path in graph.file_index:
            signal[graph.file_index[path]] += weight
    for name, weight in mentions.idents.items():
        node = graph.node(name)
        if node is not None:
            signal[node] += weight
    vector = np.zeros(graph.n_nodes)
    total = float(signal.sum())
    if total <= 0:
        vector[:n_files] = 1.0 / max(1, n_files)
        return vector
    vector[:n_files] = BASE_SHARE / max(1, n_files)
    return vector + (1.0 - BASE_SHARE) * signal / total


def _within_file_rank(fid: IntArray, score: FloatArray) -> IntArray:
    """k = position of each row among its file's rows, best score first, ties by
    line (rows come grouped by file in line order, and the sort is stable)."""
    n = len(fid)
    if n and n < 1 << _ROW_BITS and int(fid.max()) < 1 << 16 and int(fid.min()) >= 0:
        order = _by_file_then_score(fid, score)
    else:
        by_score = np.argsort(-score, kind="stable")
        order = by_score[np.argsort(fid[by_score], kind="stable")]
    sorted_fid = fid[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_fid)) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    k = np.empty_like(order)
    k[order] = np.arange(len(order)) - group_start
    return k


_ROW_BITS = 24  # (file, score rank, row) packed in one 64-bit key: 16 + 24 + 24 bits


def _by_file_then_score(fid: IntArray, score: FloatArray) -> IntArray:
    """The rows by file, then best score, then row: the order a stable sort by
    score and then by file gives, as one sort of distinct 64-bit keys (a score's
    dense rank takes one unstable sort; no two keys tie, so any sort agrees)."""
    n = len(fid)
    by_score = np.argsort(-score)
    ordered = score[by_score]
    dense = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]])  # 0 = the best score
    rank = np.empty(n, dtype=np.int64)
    rank[by_score] = dense
    key = (fid.astype(np.int64) << (2 * _ROW_BITS)) | (rank << _ROW_BITS)
    key |= np.arange(n, dtype=np.int64)
    key.sort()
    return key & ((1 << _ROW_BITS) - 1)


def _scores(fid: IntArray, base: FloatArray, file_bonus: FloatArray, rows: IntArray) -> FloatArray:
    """The scores of ``rows`` (ascending; every row of a file with a higher base
    than one of them must be among them): the k-th best row of a file by base
    scores base / (1 + k), plus the file's bonus for its first
    ``NAMED_FILE_TOP_DEFS`` rows."""
    row_fid = fid[rows]
    k = _within_file_rank(row_fid, base[rows])
    score = base[rows] / (1.0 + k)
    return score + np.where(k < NAMED_FILE_TOP_DEFS, file_bonus[row_fid], 0.0)


def _gets_bonus(graph: RepoGraph, name: str, weight: float) -> bool:
    n_definers = graph.n_definers_of(name)
    return 0 < n_definers <= NAMED_MAX_DEFINERS and weight >= NAMED_MIN_WEIGHT


def _bonus_vectors(graph: RepoGraph, mentions: Mentions) -> tuple[FloatArray, FloatArray]:
    """The named-identifier bonus per node, with one more entry (0) at the end
    for a file-only row's node, -1; the named-file bonus per file."""
    ident_bonus = np.zeros(graph.n_nodes + 1)
    for name, weight in mentions.idents.items():
        node = graph.node(name)
        if node is not None and _gets_bonus(graph, name, weight):
            ident_bonus[node] = NAMED_IDENT_BONUS * weight
    file_bonus = np.zeros(len(graph.files))
    for path, weight in mentions.files.items():
        if path in graph.file_index:
            file_bonus[graph.file_index[path]] = NAMED_FILE_BONUS * weight
    return ident_bonus, file_bonus


def row_base(
    graph: RepoGraph,
    table: DefTable,
    ranks: FloatArray,
    mentions: Mentions,
    file_score: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Per row, the score before the within-file division (the rank its
    identifier passes to its file, or a share of the file's rank, plus the
    named-identifier bonus); per file, the named-file bonus. With
    ``file_score`` a file's best row scores its file score and its other rows
    that times their PageRank score relative to the best, so the rows fill the
    map in the files' order. A file-only row (node -1, one definer) reads the
    extra last entry of the per-node vectors: no rank (0 / 1 = 0) and no bonus."""
    file_rank = ranks[: len(graph.files)]
    ranks_ext = np.empty(len(ranks) + 1)
    ranks_ext[:-1] = ranks
    ranks_ext[-1] = 0.0
    flow = ranks_ext[table.node]
    flow /= table.ndef
    share = np.where(table.node >= 0, UNREFERENCED_SHARE, FILE_ONLY_SHARE)
    share *= file_rank[table.fid]
    base = flow
    base += share
    if file_score is not None and len(base):
        starts = table.offsets[:-1]
        best = np.maximum.reduceat(base, np.minimum(starts, len(base) - 1))
        best = np.maximum(np.where(np.diff(table.offsets) > 0, best, 1.0), 1e-300)
        base = file_score[table.fid] * base / best[table.fid]
    ident_bonus, file_bonus = _bonus_vectors(graph, mentions)
    # the few rows of named identifiers (every other row's bonus is 0, base + 0 = base)
    named = np.flatnonzero(ident_bonus[table.node] != 0)
    row_bonus = ident_bonus[table.node[named]] / table.ndef[named]
    if file_score is not None and BONUS_BY_FILE and len(base):
        row_bonus = row_bonus * file_score[table.fid[named]]  # in units of the file's score
        file_bonus = file_bonus * file_score
    base[named] += row_bonus
    return base, file_bonus


def score_rows(
    graph: RepoGraph,
    table: DefTable,
    ranks: FloatArray,
    mentions: Mentions,
    file_score: FloatArray | None = None,
) -> FloatArray:
    """Every row's score (``Ranked`` computes only the ones its order needs)."""
    base, file_bonus = row_base(graph, table, ranks, mentions, file_score)
    return _scores(table.fid, base, file_bonus, np.arange(len(base)))


def pagerank_of(graph: RepoGraph, pers: FloatArray) -> FloatArray:
    """PageRank of ``graph`` for this personalization; the last result is kept on
    the graph (and persisted with it), so repeating the inputs costs nothing."""
    kept = graph.ranks_for(pers)
    if kept is not None:
        return kept
    warm = graph.warm_start if len(graph.sources) >= WARM_START_MIN_EDGES else None
    ranks = rank_transition(graph.transition, pers, tol=PAGERANK_TOL, start=warm)
    graph.remember_rank(pers, ranks)
    return ranks


def rank(
    graph: RepoGraph,
    chat_files: Collection[str],
    recent_files: Collection[str],
    mentions: Mentions,
    text: str = "",
    rows: int = 0,
) -> Ranked:
    """Rank everything for one request (see module doc); ``text`` is the user's
    text that ``mentions`` was read from (its words are matched too); ``rows``:
    how many rows the caller may read (the first sort makes ``first_rows`` of
    them; a reader past those sorts a longer prefix)."""
    table = graph.table
    scores = text_scores(graph, text)
    pers = personalization(graph, chat_files, recent_files, mentions, text, scores)
    ranks = pagerank_of(graph, pers)
    said = repr((sorted(mentions.files.items()), mentions.idents, sorted(chat_files), text))
    words = hashlib.blake2b(scores.tobytes(), digest_size=16).hexdigest()  # fusion reads them
    inputs = (id(ranks), said, words)
    last = graph.last_ranked
    if last is not None and last.inputs == inputs and last.ranks is ranks:
        return Ranked.rebound(last, graph)  # a relined graph: same arrays, same order
    file_score = None
    if FUSED_ORDER:
        file_lanes = lanes(graph, mentions, scores, ranks[: len(graph.files)], text)
        file_score = fuse(file_lanes)
    base, file_bonus = row_base(graph, table, ranks, mentions, file_score)
    excluded = np.zeros(len(graph.files), dtype=bool)
    for path in chat_files:
        if path in graph.file_index:
            excluded[graph.file_index[path]] = True
    keep = np.flatnonzero(~excluded[table.fid]) if excluded.any() else np.arange(len(base))
    file_rank = ranks[: len(graph.files)] if file_score is None else file_score
    total = float(file_rank.sum())
    normalised = file_rank / total if total > 0 else file_rank
    ranked = Ranked(normalised, base, file_bonus, keep, graph)
    ranked.rows_hint = first_rows(rows)
    ranked.named = _named_files(graph, ranked, mentions)
    graph.last_ranked = ranked.memo(inputs, ranks)
    return ranked


def first_rows(rows: int) -> int:
    """How many rows the first sort of a ranking makes when ``rows`` may be read."""
    return min(rows, rows // 16 + FIRST_ROWS_SLACK)


def _named_files(graph: RepoGraph, ranked: Ranked, mentions: Mentions, limit: int = 5) -> list[str]:
    """Files that carry a naming bonus, in rendering order (at most ``limit``)."""
    wanted = {graph.file_index[p] for p in mentions.files if p in graph.file_index}
    for name, weight in mentions.idents.items():
        if _gets_bonus(graph, name, weight):
            wanted.update(graph.definers(name))
    out: list[str] = []
    if not wanted:
        return out
    for count in sorted({max(1, ranked.rows_hint), NAMED_SCAN_ROWS, len(graph.table.fid)}):
        out = []
        remaining = set(wanted)
        for fid in graph.table.fid[ranked.order(count)].tolist():
            if fid in remaining:
                remaining.discard(fid)
                out.append(graph.files[fid])
                if len(out) >= limit or not remaining:
                    return out
    return out
