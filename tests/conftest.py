"""Shared fixtures: the origin's golden vectors, a fixed key pair and a fixed clock."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fg_agent_id import KeyPair

SHARED = Path(__file__).resolve().parents[2] / "shared"
ORIGIN_VECTORS = SHARED / "reference" / "fg-agent-memory-0.1-vectors.json"
FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def pytest_configure(config: pytest.Config) -> None:
    """Let the processes the tests start keep their bytecode, in a folder of its own.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as on the development machines), every
    ``agent-memory`` a test runs compiled each module it imports again: about 0.15 s of CPU
    per process, over the thousand-odd processes of the suite. The children get
    ``PYTHONPYCACHEPREFIX`` instead, a folder under the system's temporary directory, so the
    source tree stays free of ``__pycache__`` as the variable asks, and a stale file is
    recompiled as usual (Python checks each source's size and change time). This process is
    unchanged: both settings are read when Python starts.
    """
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "agent-memory-test-bytecode")


@pytest.fixture
def origin_vectors() -> dict[str, Any]:
    """The fg-agent-memory 0.1 golden vectors from ../shared; skipped where shared/ is absent."""
    if not ORIGIN_VECTORS.exists():
        pytest.skip(f"the origin's golden vectors are not at {ORIGIN_VECTORS} (../shared is absent)")
    data: dict[str, Any] = json.loads(ORIGIN_VECTORS.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def seed_keys() -> KeyPair:
    """The vectors' key pair: Ed25519 seed bytes 0..31, agreement seed 96..127."""
    return KeyPair.from_bytes(bytes(range(32)) + bytes(range(96, 128)))
