"""A wire-faithful LLM provider simulator (OpenAI Chat Completions and
Anthropic Messages) for tests, demos and benchmarks.

It answers from a ``Script``, injects faults on request, models provider
prefix caches in its usage figures, and records every request it receives.
It deliberately shares no code with ``bonsai.services.providers`` so that it
is an independent check of those clients.
"""

from bonsai.sim.faults import Fault
from bonsai.sim.runner import SimulatorThread, run_simulator
from bonsai.sim.script import Reply, Rule, Script, ScriptError, ToolCallSpec, load_script
from bonsai.sim.server import Simulator
from bonsai.sim.sim_state import RecordedRequest

__all__ = [
    "Fault",
    "RecordedRequest",
    "Reply",
    "Rule",
    "Script",
    "ScriptError",
    "Simulator",
    "SimulatorThread",
    "ToolCallSpec",
    "load_script",
    "run_simulator",
]
