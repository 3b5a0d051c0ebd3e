"""The agent: the turn loop and its tools (uses services and the pure core)."""
