"""Developer checks run by ``./run lint`` (not imported by the daemon)."""
