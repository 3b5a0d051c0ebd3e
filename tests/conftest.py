"""Fixtures shared by every test folder (helpers live in bonsai_testing.py)."""

from bonsai_testing import home, stdio_client

__all__ = ["home", "stdio_client"]
