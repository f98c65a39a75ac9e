"""Fixtures of the reliability suite: a private config folder per test, and the PostgreSQL cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from pg import postgres_cluster, postgres_schema  # noqa: F401 - fixtures


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Key files go to the user's config folder; child processes inherit this one.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
