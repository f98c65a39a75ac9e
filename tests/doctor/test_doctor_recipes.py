"""doctor warns when a search recipe memory.toml asks for cannot be opened on this machine."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.doctor.diagnose import doctor
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import RecipeSpec, splice_search

T0 = datetime(2026, 7, 1, tzinfo=UTC)
REMOTE = RecipeSpec(
    "remote",
    "vector",
    {
        "embedder": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "api_key_env": "AGENT_MEMORY_TEST_UNSET_KEY",
    },
)


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AGENT_MEMORY_TEST_UNSET_KEY", raising=False)


def test_a_recipe_that_cannot_be_opened_here_is_a_warning_naming_why(tmp_path: Path) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        memory.remember("Tea is served at four.", source="test", now=T0)
    settings = home.root / "memory.toml"
    text = splice_search(settings.read_text(encoding="utf-8"), home.settings.search.activating(REMOTE))
    settings.write_text(text, encoding="utf-8")
    report = doctor(Home.open(home.root))
    (indexes,) = [c for c in report.checks if c.name == "indexes"]
    assert report.healthy and indexes.ok and indexes.warning
    assert any(
        "recipe remote cannot be opened here, so recall reads bm25" in line
        and "AGENT_MEMORY_TEST_UNSET_KEY" in line
        for line in indexes.details
    )


def test_a_home_whose_recipes_all_open_has_no_such_warning(tmp_path: Path) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        memory.remember("Tea is served at four.", source="test", now=T0)
    (indexes,) = [c for c in doctor(Home.open(home.root)).checks if c.name == "indexes"]
    assert not any("cannot be opened here" in line for line in indexes.details)
