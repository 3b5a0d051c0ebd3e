"""Published context policies, replayed beside bonsai's for comparison.

- ``masking``: observation masking (keep the last ``MASK_KEEP`` tool outputs,
  replace older ones by a placeholder), nothing else: the request may outgrow
  the window;
- ``prune``: opencode-style pruning: walking back from the newest tool output,
  the first ``PRUNE_PROTECT`` tokens of tool output stay; once the older ones
  add up to ``PRUNE_MINIMUM`` tokens they are all erased at once; on top, the
  naive summary at 95% of the usable window (opencode compacts on overflow).

Both write their placeholders as stubs into the context state, so the request
stays byte-stable between rewrites exactly as a real agent's would, and the
loss measure sees what they removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.core.context import Assembly, ContextState, Item, Record, StubEntry
from bonsai.services.replay.policies import PipelinePolicy

MASK_KEEP = 10
PRUNE_PROTECT = 40_000
PRUNE_MINIMUM = 20_000
MASKED = "[output omitted: observation masking keeps the last 10 tool outputs]"
PRUNED = "[Old tool result content cleared]"


def _stub(text: str, tokens: int, turn: int) -> StubEntry:
    return StubEntry(text=text, reason="baseline", origin="gc", tokens_before=tokens, turn=turn)


@dataclass
class MaskingPolicy(PipelinePolicy):
    def step(self, items: list[Item], turn: int, idle: float | None = None) -> Assembly:
        outputs = [i for i in items if i.message.role == "tool"]
        old = outputs[:-MASK_KEEP] if len(outputs) > MASK_KEEP else []
        fresh = {i.id: i for i in old if i.id not in self.state.stubs}
        if not fresh:
            return super().step(items, turn, idle)
        stubs = {k: _stub(MASKED, self._tokens(i), turn) for k, i in fresh.items()}
        self.state = _with(self.state, stubs)
        return _recorded(super().step(items, turn, idle), len(stubs), "observation masking")

    def _tokens(self, item: Item) -> int:
        return self.counter.count_message(item.message).tokens


@dataclass
class PrunePolicy(PipelinePolicy):
    def step(self, items: list[Item], turn: int, idle: float | None = None) -> Assembly:
        total, erasable, chosen = 0, 0, {}
        for item in reversed(items):
            if item.message.role != "tool" or item.id in self.state.stubs:
                continue
            tokens = self.counter.count_message(item.message).tokens
            total += tokens
            if total > PRUNE_PROTECT:
                erasable += tokens
                chosen[item.id] = _stub(PRUNED, tokens, turn)
        if erasable < PRUNE_MINIMUM:
            return super().step(items, turn, idle)
        self.state = _with(self.state, chosen)
        return _recorded(super().step(items, turn, idle), len(chosen), "prune")


def _recorded(assembly: Assembly, stubs: int, how: str) -> Assembly:
    """The rewrite a baseline made, as a record (so it counts as one)."""
    record = Record(kind="stub", detail=f"{how}: {stubs} outputs replaced by a placeholder")
    return assembly.model_copy(update={"records": [record, *assembly.records]})


def _with(state: ContextState, stubs: dict[str, StubEntry]) -> ContextState:
    return state.model_copy(update={"stubs": {**state.stubs, **stubs}})
