"""The context pipeline (pure): cache-stable assembly, the ledger, the cascade.

``assemble`` builds each request; ``apply_action`` applies a user's ledger
action; ``plan_compaction``/``apply_compaction`` run a compaction in two steps
around an optional fast-model call; ``read_reuse`` and ``loop_guard`` run at
tool-execution time. See ``docs/context.md``.
"""

from bonsai.core.context.actions import ACTIONS, Action, apply_action, node_text
from bonsai.core.context.assemble import apply_compaction, assemble
from bonsai.core.context.background import background_action, freshness, ready_summary
from bonsai.core.context.compaction import CompactionMode, CompactionPlan, plan_compaction
from bonsai.core.context.context_state import (
    BackgroundSummary,
    ContextState,
    GuardState,
    StubEntry,
    SummaryState,
)
from bonsai.core.context.frame import validate_hidden_tools
from bonsai.core.context.guards import Guard, GuardLimits, loop_guard
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pipeline_types import (
    VOLATILE_HEADING,
    VOLATILE_ID,
    AssembleInput,
    Assembly,
    Budget,
    CountLike,
    Item,
    LedgerRow,
    Record,
    SystemPart,
    TokenCounter,
    Totals,
)
from bonsai.core.context.prompt import summary_prompt
from bonsai.core.context.reuse import REUSE_PREFIX, pointer_target, read_reuse
from bonsai.core.context.summary import HEADINGS, parse_sections, update_summary
from bonsai.core.context.text import system_text

__all__ = [
    "ACTIONS",
    "HEADINGS",
    "REUSE_PREFIX",
    "VOLATILE_HEADING",
    "VOLATILE_ID",
    "Action",
    "AssembleInput",
    "Assembly",
    "AssemblyMemo",
    "BackgroundSummary",
    "Budget",
    "CompactionMode",
    "CompactionPlan",
    "ContextState",
    "CountLike",
    "Guard",
    "GuardLimits",
    "GuardState",
    "Item",
    "LedgerRow",
    "Record",
    "StubEntry",
    "SummaryState",
    "SystemPart",
    "TokenCounter",
    "Totals",
    "apply_action",
    "apply_compaction",
    "assemble",
    "background_action",
    "freshness",
    "loop_guard",
    "node_text",
    "parse_sections",
    "plan_compaction",
    "pointer_target",
    "read_reuse",
    "ready_summary",
    "summary_prompt",
    "system_text",
    "update_summary",
    "validate_hidden_tools",
]
