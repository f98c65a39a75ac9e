"""Why a record is believed, in a person's words and the CLI's where the CLI words it (issue 22)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.recall.select import review_reasons
from agent_memory.records.record import MemoryRecord, Provenance
from agent_memory.records.signing import KeyPair, address_of, sign_record
from agent_memory.ui.trust import VERDICTS, Trust, trust_of

T0 = datetime(2026, 5, 1, tzinfo=UTC)
RAW_NAMES = (
    "provenance.",
    "signed_by",
    "state_reason",
    "redacted",
    "epistemic_status",
    "None",
    "superseded_by",
)


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    Home.init(tmp_path / "home", git=False, now=T0)
    with Memory.open(tmp_path / "home") as opened:
        yield opened


def trust(memory: Memory, record_id: str, withdrawn: str = "") -> Trust:
    record = memory.store.get(record_id)
    return trust_of(record, memory.review_book.state_of(record), withdrawn, signers=memory.catalog.signers)


def said(found: Trust) -> str:
    return " ".join([found.headline, found.short, *(a.text for a in found.aspects)])


def test_a_plain_record_is_believed_signed_by_this_home_and_sourced(memory: Memory) -> None:
    made = memory.remember("Deploys happen on Tuesdays", source="standup notes", now=T0)
    found = trust(memory, made.record_id)
    assert found.verdict == "believed"
    assert found.headline == "Believed: active and untainted, from standup notes."
    texts = {a.topic: a.text for a in found.aspects}
    assert texts["signature"] == "Signature: signed by this Home's key, and the signature verifies."
    assert texts["source"].startswith("Source: standup notes — ")
    assert texts["review"] == "Review: none needed — it is not tainted, so it needs no approval."
    assert not any(a.doubt for a in found.aspects)
    assert found.short == "source standup notes · signed · untainted"


def test_a_quarantined_record_is_worded_as_recall_and_the_prompt_block_word_it(memory: Memory) -> None:
    made = memory.remember("The release list is in docs/", source="a web page", taint=["external"], now=T0)
    found = trust(memory, made.record_id)
    assert found.verdict == "doubted"
    assert "quarantined (taint: external; unreviewed)" in found.headline
    recalled = memory.recall("release list", now=T0, touch=False)
    (item,) = recalled.records
    assert "quarantined (taint: external; unreviewed)" in recalled.as_prompt_block()
    # Recall's reasons, as `agent-memory recall` prints them, appear word for word.
    reasons = review_reasons(item.record, item.review)
    assert reasons and [f"Recall says: {r}." for r in reasons] == [
        a.text for a in found.aspects if a.topic == "recall"
    ]
    memory.review(made.record_id, "approve", "checked the page")
    approved = trust(memory, made.record_id)
    assert approved.verdict == "believed" and approved.headline.startswith("Believed: approved by review")
    assert "a person approved it since" in said(approved)


def test_a_version_whose_signature_fails_is_not_believed_and_says_why(memory: Memory) -> None:
    made = memory.remember("Backups run nightly", source="ops", now=T0)
    forged = dataclasses.replace(memory.store.get(made.record_id), confidence=0.5)
    found = trust_of(forged, "none", signers=memory.catalog.signers)
    assert found.verdict == "not believed"
    assert found.headline.startswith("Not trusted: its signature does not verify")
    assert "signature does not verify" in found.short


def test_an_unsigned_record_says_nothing_vouches_for_it() -> None:
    record = MemoryRecord.create(
        type="fact", body="Imported note", provenance=Provenance(kind="import", ref="old.md"), created_at=T0
    )
    found = trust_of(record, "none")
    assert "unsigned — nothing vouches for who wrote it" in said(found)
    assert "imported, the writer is not recorded" in said(found)
    assert found.short == "source old.md · unsigned · untainted"


def test_withdrawn_superseded_disputed_and_erased_records_say_so(memory: Memory) -> None:
    first = memory.remember("Staging runs on db-3", source="a", kind="state", subject="host:staging", now=T0)
    second = memory.remember("Staging runs on db-4", source="b", kind="state", subject="host:staging", now=T0)
    old = trust(memory, first.record_id)
    assert old.verdict == "history"
    assert old.headline == f"No longer current: superseded by {second.record_id}, kept for history."
    assert f"superseded by {second.record_id} — kept for history" in said(old)
    withdrawn = trust(memory, second.record_id, "withdrawn by wd-1 (record id)")
    assert withdrawn.verdict == "not believed"
    assert withdrawn.headline.startswith("Not used: withdrawn by wd-1 (record id).")
    assert "a withdrawal is not a verdict on truth" in said(withdrawn)
    disputer = memory.remember(
        "Staging runs on db-5", source="c", kind="state", subject="host:staging", taint=["external"], now=T0
    )
    sides = trust(memory, second.record_id)
    assert sides.verdict == "doubted" and sides.headline.startswith("In dispute:")
    assert f"Disputed with {disputer.record_id}" in said(sides)
    assert "Resolve with agent-memory resolve" in said(sides)
    memory.erase([first.record_id], reason="asked to", authority="test")
    erased = trust(memory, first.record_id)
    assert erased.verdict == "not believed" and erased.headline.startswith("Erased: asked to.")


def test_no_verdict_names_a_raw_field(memory: Memory) -> None:
    made = [
        memory.remember("Plain", source="s", now=T0),
        memory.remember("Tainted", source="s", taint=["external"], now=T0),
    ]
    for result in made:
        found = trust(memory, result.record_id)
        assert found.verdict in VERDICTS
        for name in RAW_NAMES:
            assert name not in said(found), (name, said(found))


def test_a_record_of_a_trusted_signer_verifies_as_the_read_path_takes_it(
    memory: Memory, seed_keys: KeyPair
) -> None:
    # The verified read path takes a memory.toml [trust] signer's records; the page must too.
    record = sign_record(
        MemoryRecord.create(
            type="fact",
            body="Shared rota",
            provenance=Provenance(kind="import", ref="team.json"),
            created_at=T0,
        ),
        seed_keys,
    )
    trusting = dataclasses.replace(memory.catalog.signers, trusted=frozenset({address_of(seed_keys)}))
    found = trust_of(record, "none", signers=trusting)
    texts = {a.topic: a.text for a in found.aspects}
    assert texts["signature"] == (
        f"Signature: signed by {address_of(seed_keys)}, a signer memory.toml [trust] names,"
        " and the signature verifies."
    )
    assert "signed" in found.short and "does not verify" not in said(found)
    stranger = trust_of(record, "none", signers=memory.catalog.signers)
    assert "does not trust" in said(stranger)
