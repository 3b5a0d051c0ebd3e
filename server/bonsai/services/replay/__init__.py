"""Replay recorded agent sessions through the context pipeline, offline.

``replay(source, config)`` returns a :class:`~bonsai.core.replay.report.ReplayReport`;
``build_config`` makes the config from a model name, a window and a preset;
``store_imported`` stores a recording as a session (daemon side). See
``docs/replay.md`` and ``docs/context.md``.
"""

from bonsai.services.replay.database import DatabaseMissing, locked_writer, open_readonly
from bonsai.services.replay.policies import PipelinePolicy, PolicyName
from bonsai.services.replay.prefix import GRANULARITY, Granularity, PrefixTracker, granularity_for
from bonsai.services.replay.runner import ReplayConfig, StepRow, replay, replay_steps
from bonsai.services.replay.search import RecallHit, recall
from bonsai.services.replay.setup import DEFAULT_MODEL, build_config
from bonsai.services.replay.source import ReplaySource, source_from_messages
from bonsai.services.replay.store_import import store_imported
from bonsai.services.replay.stored import file_source, stored_source

__all__ = [
    "DEFAULT_MODEL",
    "GRANULARITY",
    "DatabaseMissing",
    "Granularity",
    "PipelinePolicy",
    "PolicyName",
    "PrefixTracker",
    "RecallHit",
    "ReplayConfig",
    "ReplaySource",
    "StepRow",
    "build_config",
    "file_source",
    "granularity_for",
    "locked_writer",
    "open_readonly",
    "recall",
    "replay",
    "replay_steps",
    "source_from_messages",
    "store_imported",
    "stored_source",
]
