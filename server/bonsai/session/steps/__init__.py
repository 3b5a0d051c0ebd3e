"""A session turn's steps: one module per job, declared in order in ``runner.py``."""
