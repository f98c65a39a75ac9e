"""Shared fixtures: the origin's golden vectors, a fixed key pair and a fixed clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fg_agent_id import KeyPair

SHARED = Path(__file__).resolve().parents[2] / "shared"
ORIGIN_VECTORS = SHARED / "reference" / "fg-agent-memory-0.1-vectors.json"
FIXED_TIME = datetime(2026, 1, 1, tzinfo=UTC)


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
