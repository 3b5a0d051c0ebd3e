"""Rules per workspace: stored in the daemon's database (see ``store.py``)."""

from bonsai.services.rules.store import Rule, RuleError, RuleStore, UnknownRule

__all__ = ["Rule", "RuleError", "RuleStore", "UnknownRule"]
