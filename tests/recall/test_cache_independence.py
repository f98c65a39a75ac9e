"""Recall does not depend on ``.cache/`` (issue 19, seed 003: an index MUST be disposable).

Touch counts are state (``.state/salience.json``), so a Home whose ``.cache/`` is deleted and
rebuilt answers every question with the same ids in the same order as its twin that kept it,
at the same time, and both go on evolving alike.
"""

from __future__ import annotations

import random
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.memory import Memory

T0 = datetime(2026, 10, 1, 9, tzinfo=UTC)
PLACES = ["staging", "the wiki", "the build farm", "the billing service", "the VPN", "the mail relay"]
THINGS = ["backups", "deploys", "certificates", "on-call", "logs", "passwords", "dashboards"]
WHEN = ["on Mondays", "on Tuesdays", "every night", "at noon", "each quarter", "after a release"]
WHO = ["Ana", "Bilal", "Chen", "Dora", "Emeka", "Farah"]


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def texts(count: int) -> list[str]:
    rng = random.Random(19)  # noqa: S311 - reproducible test texts, not secrets
    made: dict[str, None] = {}
    while len(made) < count:
        made[
            f"{rng.choice(WHO)} handles {rng.choice(THINGS)} for {rng.choice(PLACES)} {rng.choice(WHEN)}"
            f" (note {len(made)})."
        ] = None
    return list(made)


def questions(count: int) -> list[str]:
    rng = random.Random(3)  # noqa: S311 - reproducible questions, not secrets
    return [f"who handles {rng.choice(THINGS)} for {rng.choice(PLACES)}?" for _ in range(count)]


def answers(home: Path, asked: list[str], now: datetime) -> list[list[str]]:
    with Memory.open(home) as memory:
        return [[r.record.id for r in memory.recall(q, k=10, now=now).records] for q in asked]


def test_deleting_cache_gives_the_same_ids_in_the_same_order_for_200_records_and_30_questions(
    tmp_path: Path,
) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        for n, text in enumerate(texts(200)):
            memory.remember(text, source="test", now=T0 + timedelta(hours=n))
    asked = questions(30)
    answers(home.root, asked, T0 + timedelta(days=20))  # touches: salience now ranks
    twin = tmp_path / "twin"
    shutil.copytree(home.root, twin)
    shutil.rmtree(twin / ".cache")
    assert (twin / ".state" / "salience.json").is_file()
    later = T0 + timedelta(days=21)
    for _ in range(2):  # and both go on alike, touches included
        kept, rebuilt = answers(home.root, asked, later), answers(twin, asked, later)
        assert rebuilt == kept
    assert any(kept) and (twin / ".cache").is_dir()
    with Memory.open(twin) as memory:
        assert max(memory.salience.count(rid) for ids in kept for rid in ids) >= 3


def test_an_older_home_s_sidecar_in_cache_is_moved_to_state_with_its_counts(tmp_path: Path) -> None:
    home = Home.init(tmp_path / "home", git=False, timezone="UTC", now=T0)
    with Memory.open(home.root) as memory:
        rid = memory.remember("Chen rotates the VPN certificates.", source="test", now=T0).record_id
        memory.recall("VPN certificates", now=T0)
    old = home.cache_dir / "salience.json"
    (home.state_dir / "salience.json").rename(old)
    with Memory.open(home.root) as memory:
        assert memory.salience.count(rid) == 1
    assert not old.exists() and (home.state_dir / "salience.json").is_file()
    assert (home.state_dir / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
