"""The repository map: tree-sitter tags -> reference graph -> personalized
PageRank -> text fitted to a token budget, kept current as files change.

Entry point: :class:`RepoMapService`. See ``docs/repomap.md``.
"""

from bonsai.services.repomap.records import BuildStats, Definition, FileTags, MapFile, RepoMap
from bonsai.services.repomap.service import RepoMapService

__all__ = ["BuildStats", "Definition", "FileTags", "MapFile", "RepoMap", "RepoMapService"]
