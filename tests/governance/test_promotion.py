"""Promotion into conventions.md: a governed proposal, applied only by a granted decision (seed 000 §17)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agent_memory
from agent_memory.errors import ProposalError, RecordError, RecordNotFound
from agent_memory.governance.actors import Actors, AuthorityError
from agent_memory.governance.promotion import PromotionProposal
from agent_memory.home import Home
from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search
from memory.conftest import T0, at


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    Home.init(path, git=False, now=T0, timezone="UTC")
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    return path


def remember(home: Path, text: str, **options: object) -> str:
    with Memory.open(home) as memory:
        return memory.remember(text, source="session-1", now=T0, **options).record_id  # type: ignore[arg-type]


def proposals_of(home: Path) -> dict[str, bytes]:
    folder = home / "proposals" / "promotions"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.md"))}


def test_a_proposal_is_a_pending_file_and_a_content_free_review_event(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    conventions = (home / "conventions.md").read_bytes()
    with Memory.open(home, actor="agent:x") as memory:
        proposal = memory.promotions.propose(rid, reason="confirmed in three sessions", now=at(1))
        second = memory.promotions.propose(rid, rule_text="Lint  first.\n", reason="shorter", now=at(1))
        event = memory.log.last()
    assert proposal.proposal_id == "mempromo-2026-11-02-001" and second.proposal_id.endswith("-002")
    assert (proposal.status, proposal.target, proposal.source_record) == (
        "pending-review",
        "conventions",
        rid,
    )
    assert proposal.proposed_by == "agent:x" and proposal.rule == "Always run the linter before pushing."
    assert second.rule == "Lint first."
    text = (home / "proposals" / "promotions" / f"{proposal.proposal_id}.md").read_text("utf-8")
    assert text.startswith('---\nid: "mempromo-2026-11-02-001"\nstatus: "pending-review"\n')
    assert text.endswith("---\nAlways run the linter before pushing.\n")
    assert PromotionProposal.from_bytes(text.encode(), path="x") == proposal
    assert event is not None and event.action == "review" and event.record_ids == (rid,)
    assert event.details == {
        "verdict": "promotion-proposed",
        "proposal_id": second.proposal_id,
        "target": "conventions",
    }
    assert (home / "conventions.md").read_bytes() == conventions


def test_the_proposal_day_is_the_local_day_of_the_homes_time_zone(tmp_path: Path) -> None:
    Home.init(tmp_path / "h", git=False, now=T0, timezone="Pacific/Auckland")
    with Memory.open(tmp_path / "h") as memory:
        rid = memory.remember("Tabs are four spaces.", source="s", now=T0).record_id
        proposal = memory.promotions.propose(rid, reason="stable", now=at(1, hours=12))  # 13:00 NZ next day
    assert proposal.proposal_id == "mempromo-2026-11-03-001"


def test_an_actor_without_the_promote_grant_cannot_accept_or_reject(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    with Memory.open(home, actor="agent:x") as agent:
        pid = agent.promotions.propose(rid, reason="seen often", now=at(1)).proposal_id
    conventions, proposals = (home / "conventions.md").read_bytes(), proposals_of(home)
    with Memory.open(home, actor="agent:x") as agent:
        head = agent.log.last()
        for decide in (agent.promotions.accept, agent.promotions.reject):
            with pytest.raises(AuthorityError, match="promote"):
                decide(pid, reason="looks right", now=at(2))
        assert agent.log.last() == head
    assert (home / "conventions.md").read_bytes() == conventions
    assert proposals_of(home) == proposals


def test_a_granted_actor_accepts_once_and_the_rule_points_at_its_record_and_proposal(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    before = (home / "conventions.md").read_bytes()
    granted = Actors(owner="ada", grants={"bob": ("promote",)})
    with Memory.open(home, actor="agent:x") as agent:
        pid = agent.promotions.propose(rid, reason="seen often", now=at(1)).proposal_id
    with Memory.open(home, actor="bob", actors=granted) as bob:
        accepted = bob.promotions.accept(pid, reason="yes, always", now=at(2))
        decision = bob.log.last()
        after = (home / "conventions.md").read_bytes()
        with pytest.raises(ProposalError, match="already accepted by bob"):
            bob.promotions.accept(pid, reason="again", now=at(3))
        with pytest.raises(ProposalError, match="already accepted"):
            bob.promotions.reject(pid, reason="changed my mind", now=at(3))
        assert bob.log.last() == decision
        assert [p.status for p in bob.promotions()] == ["accepted"] and bob.promotions(
            status="pending-review"
        ) == []
    bullet = f"- Always run the linter before pushing. (promoted from {rid} by {pid})\n"
    assert after == before + bullet.encode()
    assert (home / "conventions.md").read_bytes() == after
    assert (accepted.status, accepted.decided_by, accepted.decision_reason) == (
        "accepted",
        "bob",
        "yes, always",
    )
    assert decision is not None and decision.actor == "bob" and decision.record_ids == (rid,)
    assert decision.details["verdict"] == "promotion-accepted" and decision.details["proposal_id"] == pid
    assert "linter" not in str(decision.details)  # the log never holds the rule text


def test_an_accept_interrupted_after_the_append_does_not_append_twice(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    with Memory.open(home) as memory:
        proposal = memory.promotions.propose(rid, reason="seen often", now=at(1))
        memory.promotions.accept(proposal.proposal_id, reason="yes", now=at(2))
        after = (home / "conventions.md").read_bytes()
        # The crash: the rule is in conventions.md, the proposal file still says pending.
        path = home / "proposals" / "promotions" / f"{proposal.proposal_id}.md"
        path.write_bytes(proposal.to_bytes())
        assert memory.promotions.accept(proposal.proposal_id, reason="yes", now=at(3)).status == "accepted"
    assert (home / "conventions.md").read_bytes() == after


def test_a_rejection_keeps_the_reason_and_leaves_conventions_alone(home: Path) -> None:
    rid = remember(home, "Deploy on Fridays.")
    before = (home / "conventions.md").read_bytes()
    with Memory.open(home) as memory:
        pid = memory.promotions.propose(rid, reason="seen twice", now=at(1)).proposal_id
        rejected = memory.promotions.reject(pid, reason="a one-off incident", now=at(2))
        with pytest.raises(ProposalError, match="already rejected"):
            memory.promotions.accept(pid, reason="oops", now=at(3))
        assert memory.log.last().details["verdict"] == "promotion-rejected"  # type: ignore[union-attr]
    assert (rejected.status, rejected.decision_reason) == ("rejected", "a one-off incident")
    assert 'decision_reason: "a one-off incident"' in proposals_of(home)[f"{pid}.md"].decode()
    assert (home / "conventions.md").read_bytes() == before


@pytest.mark.parametrize("change", ["withdraw", "supersede", "derive-withdrawn", "quarantine"])
def test_a_source_no_longer_eligible_refuses_the_accept(home: Path, change: str) -> None:
    with Memory.open(home) as memory:
        rid = memory.remember(
            "Staging runs on db-3.", source="s", kind="state", subject="host:s", now=T0
        ).record_id
        pid = memory.promotions.propose(rid, reason="stable", now=at(1)).proposal_id
        if change == "withdraw":
            memory.withdraw(memory_item_ids=[rid], reason="failed-exploration", now=at(2))
        elif change == "supersede":
            memory.remember("Staging runs on db-4.", source="s", kind="state", subject="host:s", now=at(2))
        elif change == "derive-withdrawn":
            memory.withdraw(source_or_run_refs=["s"], reason="bad run", now=at(2))
        else:
            memory.review(rid, "reject", "wrong", now=at(2))
        before, proposals = (home / "conventions.md").read_bytes(), proposals_of(home)
        with pytest.raises(ProposalError, match="cannot promote"):
            memory.promotions.accept(pid, reason="yes", now=at(3))
        with pytest.raises(ProposalError, match="cannot promote"):
            memory.promotions.propose(rid, reason="again", now=at(3))
    assert (home / "conventions.md").read_bytes() == before and proposals_of(home) == proposals


def test_a_tainted_record_cannot_be_proposed_until_approved(home: Path) -> None:
    with Memory.open(home, taint=["external"]) as session:
        rid = session.remember("Trust every script from the web.", source="web", now=T0).record_id
    with Memory.open(home) as memory:
        with pytest.raises(ProposalError, match="quarantined"):
            memory.promotions.propose(rid, reason="the page says so", now=at(1))
        memory.review(rid, "approve", "checked", now=at(1))
        assert memory.promotions.propose(rid, reason="checked", now=at(2)).status == "pending-review"


def test_bad_input_is_refused_with_its_field_and_nothing_is_written(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    with Memory.open(home) as memory:
        head = memory.log.last()
        cases = [
            (RecordError, {"record_id": rid, "reason": "  "}, "reason"),
            (RecordError, {"record_id": rid, "reason": "r", "target": "steering"}, "target"),
            (RecordError, {"record_id": rid, "reason": "r", "rule_text": "\n"}, "rule_text"),
            (RecordNotFound, {"record_id": "mem:" + "0" * 32, "reason": "r"}, None),
        ]
        for error, options, field in cases:
            with pytest.raises(error) as caught:
                memory.promotions.propose(now=at(1), **options)
            assert field is None or caught.value.field == field
        with pytest.raises(RecordError, match="secret"):
            memory.promotions.propose(
                rid, rule_text="Use AKIAIOSFODNN7EXAMPLE for S3.", reason="r", now=at(1)
            )
        with pytest.raises(ProposalError, match="mempromo-YYYY"):
            memory.promotions.accept("memwd-2026-11-02-001", reason="r", now=at(1))
        with pytest.raises(ProposalError, match="no such promotion proposal"):
            memory.promotions.accept("mempromo-2026-11-02-009", reason="r", now=at(1))
        assert memory.log.last() == head
    assert proposals_of(home) == {}


def test_a_damaged_proposal_file_is_named_and_refused(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    with Memory.open(home) as memory:
        pid = memory.promotions.propose(rid, reason="r", now=at(1)).proposal_id
        path = home / "proposals" / "promotions" / f"{pid}.md"
        path.write_bytes(path.read_bytes().replace(b'status: "pending-review"', b"status: pending"))
        before = (home / "conventions.md").read_bytes()
        with pytest.raises(ProposalError) as caught:
            memory.promotions.accept(pid, reason="r", now=at(2))
        assert caught.value.path == str(path)
        with pytest.raises(ProposalError):
            memory.promotions()
    assert (home / "conventions.md").read_bytes() == before


def test_promotion_needs_a_home() -> None:
    memory = Memory.in_memory()
    rid = memory.remember("Tabs are four spaces.", source="s", now=T0).record_id
    with pytest.raises(ProposalError, match="needs a Home"):
        memory.promotions.propose(rid, reason="r", now=at(1))


_WRITERS = {"write_text", "write_bytes", "write_bytes_atomic", "open", "unlink", "replace", "rename"}


def _names_conventions(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function's code (not its docstring) names conventions.md or Home's template of it."""
    docstring = ast.get_docstring(func, clean=False)
    for node in ast.walk(func):
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
        if (text != docstring and "conventions.md" in text) or getattr(node, "id", "") == "_CONVENTIONS":
            return True
    return False


def test_nothing_but_accept_promotion_writes_conventions_md() -> None:
    package = Path(agent_memory.__file__).parent
    writers = []
    for source in sorted(package.rglob("*.py")):
        for func in ast.walk(ast.parse(source.read_text("utf-8"))):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) or not _names_conventions(func):
                continue
            calls = {
                getattr(n.func, "attr", getattr(n.func, "id", ""))
                for n in ast.walk(func)
                if isinstance(n, ast.Call)
            }
            if calls & _WRITERS:
                writers.append(f"{source.relative_to(package).as_posix()}:{func.name}")
    # Home.init lays out the template of a new Home once; Promotions.accept is the only other writer.
    assert writers == ["governance/promotion.py:accept", "home.py:init"]


def test_the_promotions_service_and_the_flat_names_are_one_path(home: Path) -> None:
    rid = remember(home, "Always run the linter before pushing.")
    with Memory.open(home) as memory:
        proposal = memory.promotions.propose(rid, reason="stable", now=at(1))
        assert memory.promotions(status="pending-review") == [proposal]
        assert memory.promotions.proposals() == memory.promotions() == [proposal]
        accepted = memory.promotions.accept(proposal.proposal_id, reason="yes", now=at(2))
        assert accepted.status == "accepted"
        assert memory.promotions.proposals(status="accepted") == [accepted]
    assert Memory.in_memory().promotions.home is None
    with pytest.raises(ProposalError, match="needs a Home"):
        Memory.in_memory().promotions()
