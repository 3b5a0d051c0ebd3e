"""Fixtures for simulator tests: a running simulator per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bonsai.sim import Simulator, run_simulator


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with run_simulator() as running:
        yield running
