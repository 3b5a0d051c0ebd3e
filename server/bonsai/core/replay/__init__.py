"""Pure reporting over replayed recordings."""
