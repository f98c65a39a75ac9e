"""``agent-memory recall`` reads the Home's ``[recall]`` recency from ``memory.toml``."""

from __future__ import annotations

import json
from datetime import timedelta

from installed import Cli, snapshot

from agent_memory.memory import Memory
from agent_memory.records.wire import utc_now
from agent_memory.search.recipes import SearchSettings, splice_search


def test_recall_ranks_an_old_better_answer_first_unless_the_home_asks_for_seed_001_recency(cli: Cli) -> None:
    home = cli.home()
    toml = home / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    now = utc_now()
    with Memory.open(home) as memory:
        old = memory.remember(
            "Narwhal tusks spiral: a narwhal tusk is a narwhal tooth.",
            source="s",
            now=now - timedelta(days=400),
        ).record_id
        new = memory.remember("Someone mentioned a narwhal today.", source="s", now=now).record_id

    def ranked() -> list[str]:
        out = json.loads(cli.ok("recall", "narwhal", "--home", str(home), "--json"))
        return [r["id"] for r in out["records"]]

    assert ranked() == [old, new]
    text = toml.read_text("utf-8")
    assert 'recency = "valid"' in text and "recency_half_life_days = 30.0" in text
    assert "recency_weight = 0.1" in text
    seed = text.replace('recency = "valid"', 'recency = "updated"').replace("weight = 0.1", "weight = 1.0")
    toml.write_text(seed, "utf-8")
    assert ranked() == [new, old]
    toml.write_text(seed.replace('recency = "updated"', 'recency = "off"'), "utf-8")
    assert ranked() == [old, new]

    toml.write_text(text.replace("recency_half_life_days = 30.0", "recency_half_life_days = 0"), "utf-8")
    before = snapshot(home)
    refused = cli("recall", "narwhal", "--home", str(home))
    assert refused.returncode == 3 and refused.stdout == ""
    assert "memory.toml" in refused.stderr and "recall.recency_half_life_days" in refused.stderr
    assert refused.stderr[-1] == "\n" and refused.stderr.count("\n") <= 2
    assert snapshot(home) == before
