"""The project's own golden recall set (issue 4 item 7): a small realistic Home and its golden.yaml.

A team's working memory of 25 notes (infrastructure, people, procedures, preferences), one
fact corrected by a newer one, one secret erased and one note withdrawn, asked 16 questions
in the words a user would use. Every question must be found within its k by the BM25 recipe
and, when the ``embeddings`` extra is installed, by the default hybrid; the erased and the
withdrawn ones are skipped. A change to tokenizing, fusion, scoring, recall or the gate that
loses one of them fails here.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_memory.doctor.golden import load_golden, run_golden
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search

T0 = datetime(2026, 2, 2, 9, tzinfo=UTC)
NOTES = [
    "The staging database runs on db-2.internal with PostgreSQL 16.",
    "Production deploys happen only Tuesday to Thursday, never on Fridays.",
    "Ada Lovelace leads the payments team; ask her before touching the ledger service.",
    "The on-call rotation changes every Monday at 10:00 Berlin time.",
    "Use `make release VERSION=x.y.z` to cut a release: it tags the commit and builds the wheel.",
    "The customer portal is served from portal.northwind.example behind Cloudflare.",
    "Grace prefers code reviews as small pull requests of under 400 lines.",
    "The VPN certificate for the Berlin office expires on 2026-09-30.",
    "Nightly backups of the orders database are kept for 35 days in the eu-central bucket.",
    "Linus drinks oat-milk flat whites; order two for the Thursday planning.",
    "Error budget: the checkout API may fail at most 0.1% of requests per month.",
    "The mobile app's feature flags live in flags.yaml in the config repository.",
    "Invoices are generated on the first business day of each month by the billing cron job.",
    "Redis in staging has no persistence, so never keep sessions there.",
    "Our Kubernetes clusters run version 1.31; upgrades are planned once a quarter.",
    "The design system's primary colour is #1F6FEB.",
    "Support tickets tagged P1 must get a human reply within 30 minutes.",
    "The data warehouse refreshes from the production replicas at 02:00 UTC.",
    "Margaret's team owns the search service and its Elasticsearch cluster.",
    "Vault rotates the passwords of service accounts every 90 days.",
    "The old Jenkins server ci-1 was switched off in January.",
    "Office plants are watered on Wednesdays by whoever is in first.",
    "The team lunch budget is 15 euros per person.",
    "Status page updates go out through statuspage.northwind.example.",
    "The temporary admin password for the test cluster is hunter2.",
]
CORRECTION = "The staging database moved to db-5.internal (PostgreSQL 17) on 2026-03-02."
QUESTIONS = """\
- query: Which machine hosts the staging database?
  expect: {staging}
  k: 3
- query: Can we deploy to production on a Friday?
  expect: {{contains: never on Fridays}}
- query: Who should I ask before changing the ledger service?
  expect: {{contains: Ada Lovelace}}
- query: When does the on-call rotation change?
  expect: {{contains: every Monday}}
- query: how do I cut a new release
  expect: {{contains: make release}}
- query: How long do we keep backups of the orders database?
  expect: {{contains: 35 days}}
- query: What coffee does Linus drink?
  expect: {{contains: oat-milk}}
  k: 3
- query: error budget for the checkout API
  expect: {{contains: "0.1%"}}
- query: Where are the mobile feature flags configured?
  expect: {{contains: flags.yaml}}
- query: When does the VPN certificate expire?
  expect: {{contains: 2026-09-30}}
  k: 3
- query: Which team owns the search service?
  expect: {{contains: Margaret}}
- query: How often are service account passwords rotated?
  expect: {{contains: 90 days}}
- query: How big should pull requests be for Grace's reviews?
  expect: {{contains: 400 lines}}
- query: What Kubernetes version do the clusters run?
  expect: {{contains: "1.31"}}
- query: admin password of the test cluster
  expect: {secret}
- query: When was the old Jenkins server switched off?
  expect: {{contains: ci-1}}
"""


def build_home(path: Path, recipes: tuple[str, ...]) -> Path:
    Home.init(path, git=False, now=T0)
    toml = path / "memory.toml"
    toml.write_text(
        splice_search(toml.read_text(encoding="utf-8"), SearchSettings(recipes)), encoding="utf-8"
    )
    with Memory.open(path) as memory:
        ids = [
            memory.remember(text, source="test:golden-set", now=T0 + timedelta(hours=i)).record_id
            for i, text in enumerate(NOTES)
        ]
        memory.supersede(
            ids[0], CORRECTION, source="test:golden-set", reason="moved", now=T0 + timedelta(days=30)
        )
        secret = ids[NOTES.index(next(n for n in NOTES if "hunter2" in n))]
        memory.store.erase(secret, "a secret does not belong in memory")  # type: ignore[attr-defined]
        memory.catalog.erased([secret])
        jenkins = ids[NOTES.index(next(n for n in NOTES if "Jenkins" in n))]
        memory.withdraw(memory_item_ids=[jenkins], reason="under review", now=T0 + timedelta(days=31))
    (path / "golden.yaml").write_text(QUESTIONS.format(staging=ids[0], secret=secret), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "recipes",
    [
        pytest.param(("bm25",), id="bm25"),
        pytest.param(("hybrid",), id="hybrid"),
    ],
)
def test_every_golden_question_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recipes: tuple[str, ...]
) -> None:
    if recipes == ("hybrid",) and not os.environ.get("CI"):  # CI installs the extra: never skip there
        pytest.importorskip("onnxruntime", reason="the hybrid recipe needs the embeddings extra")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = build_home(tmp_path / "home", recipes)
    questions = load_golden(home / "golden.yaml")
    assert len(questions) == 16
    with Memory.open(home) as memory:
        assert memory.catalog.active == recipes
        report = run_golden(memory, questions, now=T0 + timedelta(days=60))
    misses = [o.to_json() for o in report.outcomes if o.verdict == "missed"]
    assert not misses, f"{report.summary()}\n" + "\n".join(map(str, misses))
    assert (report.found, report.count("skipped"), report.recall) == (14, 2, 1.0)
    followed = report.outcomes[0]
    assert followed.note.startswith("followed ") and "db-5" in memory.get(str(followed.target)).body
