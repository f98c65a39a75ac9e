"""Consolidation: the origin's passes over a Home's records, as deterministic, model-free operators.

Passes, in order, with the origin's pass names (origin-notes §1.12, §1.14; seed 001; issue 7
item 4). Every pass only **proposes** (DESIGN.md §9 "What jobs may apply on their own:
nothing"; seed 003: maintenance jobs work on a branch and only propose; issue 19 item 4):
``accept`` applies a proposal after re-validating it. The write path (``remember``) still
dedups exactly and opens a dispute at once; a job does not.

1. ``dedup.exact`` — active records equal in type, namespace, kind, subject, NFC body and
   slots: the strongest supersedes each weaker copy, an untainted copy before any tainted
   one. **Proposal** (one per group of copies).
2. ``dedup.near`` — blocked pairs of ``knowledge`` records (never ``state``, never episodes)
   with trigram Jaccard ≥ 0.6: a merged record superseding both. **Proposal.**
3. ``state`` — live duplicates of one ``namespace`` + ``subject`` left by old data: the newest
   value supersedes the others ("newer value for subject S"). **Proposal.**
4. ``contradiction`` — blocked pairs (never rules or episodes) with a shared slot key and
   different values, or one side negating the other: a dispute. **Proposal** (to open a
   transition pair; a record joins at most one per run, later pairs are ``deferred``).
5. ``promotion`` — ≥ 3 active episodes with one signature and no live rule for it: a rule
   citing them. **Proposal.** A signature more than half of a namespace's tagged episodes
   share (from 10 of them) is rejected as no pattern: a blanket tag such as an importer's
   ``git`` or ``locomo`` names a source, and a rule over every commit says nothing.
6. ``rule-flags`` — a rule is flagged exactly when none of its evidence is live. **Proposal.**
7. ``decay`` — salience below 0.05 → archival, unless protected (transitional, an unflagged
   rule, evidence of an active rule: reported as ``protect``). **Proposal.**

The origin's optional ``resolution`` pass is off (the porcelain has no resolver either).

Candidates are blocked: two records are compared only when they share a slot key or a stemmed
content term from each one's *prefix* (its rarest terms: enough that any pair with term
Jaccard ≥ 0.5 meets), ignoring terms held by more than half the Home and blocks larger than
``max_block`` (counted in ``stats``); so cost grows near-linearly with the Home.

Invariant: nothing here writes a record. Every change goes through
:func:`agent_memory.write.proposals.validate_proposals` before it is kept; one that fails is a
:class:`Rejection` with the gate's reason. Withdrawn records are skipped before any pass reads
them. Pending proposals are returned (and filed by the caller), never applied here; one a
person declined or reverted over the same, unchanged record versions is a rejection instead
(``refused``). A record a proposal of this run concerns is ``claimed``: later passes leave it
alone (or defer the pair), so no two proposals of one run are made from the same record.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory.errors import AgentMemoryError, RecordNotFound
from agent_memory.jobs import operators as ops
from agent_memory.jobs.pending import Action, ConsolidationReport, PendingProposal, Rejection, basis_of
from agent_memory.recall.salience import Salience
from agent_memory.records.record import Kind, MemoryRecord, RecordType, State
from agent_memory.stores.base import RecordStore
from agent_memory.stores.verified import read_verified
from agent_memory.write.plan import live_key, subject_key
from agent_memory.write.proposals import Proposal, ProposalKind, validate_proposals

__all__ = [
    "COMMON_SIGNATURE_MIN_EPISODES",
    "COMMON_SIGNATURE_SHARE",
    "Action",
    "ConsolidationConfig",
    "ConsolidationReport",
    "Refused",
    "Rejection",
    "consolidate",
]

COMMON_SIGNATURE_SHARE = 0.5
"""A signature held by more than this share of a namespace's tagged episodes is not a pattern."""
COMMON_SIGNATURE_MIN_EPISODES = 10
"""...counted only from this many tagged episodes in the namespace (small Homes promote as the origin)."""

Refused = Callable[[PendingProposal, datetime], str | None]
"""Why a person refused a proposal (``proposal, earliest write time of its records`` → reason or None)."""


@dataclass(frozen=True, slots=True)
class ConsolidationConfig:
    """Thresholds (origin-notes §1.12, §1.14) and blocking limits.

    Attributes:
        near_dup_threshold: Trigram Jaccard in [0, 1] at or above which two records merge.
        promotion_threshold: Episodes of one signature that make a rule.
        archive_threshold: Salience below which a record is proposed for archival.
        common_share: A term held by more than this share of the candidates (and by more
            than ``max_block`` records) blocks nothing.
        max_block: A block with more records than this is skipped (counted in ``stats``).
    """

    near_dup_threshold: float = ops.NEAR_DUP_THRESHOLD
    promotion_threshold: int = ops.PROMOTION_THRESHOLD
    archive_threshold: float = ops.ARCHIVE_THRESHOLD
    common_share: float = 0.5
    max_block: int = 24


class _Run:
    def __init__(
        self,
        store: RecordStore,
        now: datetime,
        exposed: Callable[[MemoryRecord], bool] | None,
        salience: Salience | None,
        config: ConsolidationConfig,
        refused: Refused | None = None,
        home_signer: str | None = None,
        trusted: Collection[str] = (),
    ) -> None:
        self.store = store
        self.now, self.salience, self.config = now, salience, config
        self.refused = refused
        self.report = ConsolidationReport()
        self.view: dict[str, MemoryRecord] = {}
        hidden = 0
        reading = read_verified(store, home_signer=home_signer, trusted=trusted)  # the verified read path
        for record in reading.records:
            if record.redacted:
                continue
            if exposed is not None and not exposed(record):
                hidden += 1
                continue
            self.view[record.id] = record
        self.report.stats.update(records=len(self.view), skipped_withdrawn=hidden, pairs=0, blocks=0)
        self.report.stats["refused_unverified"] = len(reading.refused)
        self.report.stats["blocks_skipped"] = 0
        self.claimed: set[str] = set()
        self.copies: dict[str, tuple[Any, ...]] = {}  # record id -> its exact-duplicate key (dedup.exact)
        self._terms: dict[str, ops.Terms] = {}

    def _latest(self, record_id: str) -> MemoryRecord:
        """The version of ``record_id`` this run read, else the store's (``RecordNotFound``).

        Proposals are checked against the versions of the run's view, not read again one by one.
        """
        found = self.view.get(record_id)
        return found if found is not None else self.store.get(record_id)

    def terms(self, record: MemoryRecord) -> ops.Terms:
        found = self._terms.get(record.id)
        if found is None:
            found = self._terms[record.id] = ops.Terms.of(record)
        return found

    def live(self, *states: State) -> list[MemoryRecord]:
        wanted = states or (State.ACTIVE,)
        return sorted((r for r in self.view.values() if r.state in wanted), key=lambda r: r.id)

    def reject(self, pass_name: str, detail: str, ids: Iterable[str]) -> None:
        self.report.rejections.append(Rejection(pass_name, detail, tuple(sorted(ids))))

    def propose(
        self,
        pass_name: str,
        action: str,
        reason: str,
        basis: Iterable[MemoryRecord],
        proposals: list[Proposal] = (),  # type: ignore[assignment]
        flag: MemoryRecord | None = None,
    ) -> None:
        basis = list(basis)
        ids = tuple(sorted(r.id for r in basis))
        try:
            if proposals:
                validate_proposals(self.store, proposals, now=self.now, get=self._latest)
        except AgentMemoryError as exc:
            self.reject(pass_name, str(exc), ids)
            return
        pending = PendingProposal(
            pass_name=pass_name,
            action=action,
            reason=reason,
            record_ids=ids,
            basis={r.id: basis_of(r) for r in basis},
            made_at=self.now,
            proposals=tuple(proposals),
            flag=flag,
        )
        if self.refused is not None and basis:
            why = self.refused(pending, min(r.updated_at or r.created_at for r in basis))
            if why is not None:  # a person said no to this change over these versions
                self.reject(pass_name, why, ids)
                return
        self.report.proposals.append(pending)
        self.claimed.update(ids)

    def pairs(self, records: list[MemoryRecord]) -> Iterator[tuple[MemoryRecord, MemoryRecord]]:
        """Yield the blocked candidate pairs of ``records``, each once, in id order."""
        df = Counter(t for r in records for t in self.terms(r).terms)
        # In a small Home every shared term is "most of the Home"; the block cap decides there.
        common = max(self.config.common_share * len(records), self.config.max_block)
        blocks: dict[str, list[int]] = defaultdict(list)
        for index, record in enumerate(records):
            for key in self.terms(record).slots:
                blocks["slot:" + key].append(index)
            usable = sorted(
                (t for t in self.terms(record).terms if df[t] <= common), key=lambda t: (df[t], t)
            )
            prefix = len(usable) - math.ceil(ops.OVERLAP_THRESHOLD * len(usable)) + 1
            for term in usable[:prefix]:
                blocks["term:" + term].append(index)
        # Each pair (a, b), a < b, as the one number a * n + b: 8 bytes a pair in arrays, not a
        # set of tuples (issue 23: a million pairs at 100,000 notes); np.unique sorts and dedups.
        import numpy as np

        n = len(records)
        codes = [np.zeros(0, dtype=np.int64)]
        for members in blocks.values():
            if len(members) < 2:
                continue
            if len(members) > self.config.max_block:
                self.report.stats["blocks_skipped"] += 1
                continue
            self.report.stats["blocks"] += 1
            indexes = np.asarray(members, dtype=np.int64)  # ascending: appended in index order
            first, second = np.triu_indices(len(members), 1)
            codes.append(indexes[first] * n + indexes[second])
        seen = np.unique(np.concatenate(codes))
        del codes
        self.report.stats["pairs"] += len(seen)
        for code in seen.tolist():
            yield records[code // n], records[code % n]


def consolidate(
    store: RecordStore,
    *,
    now: datetime,
    exposed: Callable[[MemoryRecord], bool] | None = None,
    salience: Salience | None = None,
    config: ConsolidationConfig | None = None,
    refused: Refused | None = None,
    home_signer: str | None = None,
    trusted: Collection[str] = (),
) -> ConsolidationReport:
    """Run every pass over ``store`` and return what it proposes and refuses (module docstring).

    Args:
        store: The records (latest versions are read; nothing is ever written to it here).
        now: The pass time (aware): ``updated_at`` of moved records, ``created_at`` of new
            ones, and the point decay ages are measured to.
        exposed: The withdrawal gate (``Gate.view().is_exposed``); records it hides are
            skipped first. ``None`` exposes everything.
        salience: Touch counts for decay; ``None`` counts no touches.
        config: Thresholds; the origin's by default.
        refused: Says why a person declined or reverted a proposal before (from the log's
            ``review`` events); such a proposal becomes a rejection with that reason and
            claims no record. ``None`` files every proposal.
        home_signer: The Home's own address; records are read through
            :func:`~agent_memory.stores.verified.read_verified`, and one that does not
            verify is never consolidated (counted in ``stats["refused_unverified"]``).
        trusted: The other signers the Home trusts (``memory.toml [trust]``).

    Returns:
        The report: pending proposals in ``report.proposals`` (never applied), the records
        decay left alone in ``report.actions`` (``protect``), refusals in ``report.rejections``.
    """
    run = _Run(store, now, exposed, salience, config or ConsolidationConfig(), refused, home_signer, trusted)
    for step in (_exact, _near, _state, _contradiction, _promotion, _rule_flags, _decay):
        step(run)
    return run.report


def _keeper_rank(record: MemoryRecord) -> tuple[Any, ...]:
    # An untainted copy always keeps: a tainted one never supersedes trusted content on its
    # own (DESIGN.md §9 trust). A state keeper must start its valid time no earlier than the
    # copy it supersedes.
    valid = record.effective_valid_from if record.effective_kind is Kind.STATE else record.created_at
    return (not record.taint, valid, *ops.strength(record))


def _exact(run: _Run) -> None:
    groups: dict[tuple[Any, ...], list[MemoryRecord]] = defaultdict(list)
    for record in run.live():
        slots = tuple(sorted((k, repr(v)) for k, v in record.slots.items()))
        groups[(record.type.value, *live_key(record), slots)].append(record)
    for key, group in groups.items():
        if len(group) > 1:
            run.copies.update((r.id, key) for r in group)
    for group in sorted((g for g in groups.values() if len(g) > 1), key=lambda g: min(r.id for r in g)):
        keeper, *losers = sorted(group, key=_keeper_rank, reverse=True)
        reason = f"exact duplicate of {keeper.id}"
        successor, proposals = keeper, []
        for loser in losers:
            successor = successor.evolve(supersedes=loser.id, updated_at=run.now)
            proposals.append(
                Proposal(ProposalKind.SUPERSEDE, record=successor, target_id=loser.id, reason=reason)
            )
        run.propose("dedup.exact", "supersede", reason, group, proposals)


def _near(run: _Run) -> None:
    threshold = run.config.near_dup_threshold
    candidates = [
        r for r in run.live()
        if r.effective_kind is Kind.KNOWLEDGE and r.type is not RecordType.EPISODE and r.id not in run.claimed
    ]  # fmt: skip
    for a, b in run.pairs(candidates):
        similarity = ops.near_dup_similarity(a, b, run.terms(a), run.terms(b))
        if similarity is None or similarity < threshold:
            continue
        if a.id in run.copies and run.copies.get(a.id) == run.copies.get(b.id):
            continue  # exact copies are dedup.exact's to propose (and a person's to decline)
        if a.id in run.claimed or b.id in run.claimed:
            run.reject("dedup.near", "deferred: a side already joins a merge in this run", (a.id, b.id))
            continue
        try:
            proposals = ops.merge_proposals(a, b, similarity, now=run.now, threshold=threshold)
        except AgentMemoryError as exc:
            run.reject("dedup.near", str(exc), (a.id, b.id))
            continue
        run.propose("dedup.near", "merge", proposals[0].reason, (a, b), proposals)


def _state(run: _Run) -> None:
    groups: dict[tuple[str, str], list[MemoryRecord]] = defaultdict(list)
    for record in run.live():
        key = subject_key(record)
        if key is not None:
            groups[key].append(record)
    for (_, subject), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        newest, *older = sorted(
            group, key=lambda r: (r.effective_valid_from, r.created_at, r.id), reverse=True
        )
        ids = [r.id for r in group]
        if any(i in run.claimed for i in ids):
            run.reject("state", "deferred: a record of the subject already joins a change in this run", ids)
            continue
        if newest.taint:
            run.reject("state", f"the newest value for subject {subject} is tainted: review it first", ids)
            continue
        reason = f"newer value for subject {subject}"
        successor, proposals = newest, []
        for old in older:
            successor = successor.evolve(supersedes=old.id, updated_at=run.now)
            proposals.append(
                Proposal(ProposalKind.SUPERSEDE, record=successor, target_id=old.id, reason=reason)
            )
        run.propose("state", "supersede", reason, group, proposals)


def _contradiction(run: _Run) -> None:
    excluded = (RecordType.RULE, RecordType.EPISODE)
    candidates = [r for r in run.live() if r.type not in excluded and r.id not in run.claimed]
    for a, b in run.pairs(candidates):
        reason = ops.contradiction_reason(a, b, run.terms(a), run.terms(b))
        if reason is None:
            continue
        if a.id in run.claimed or b.id in run.claimed:
            run.reject(
                "contradiction",
                f"deferred: a side already joins a change in this run ({reason})",
                (a.id, b.id),
            )
            continue
        proposal = Proposal(ProposalKind.TRANSITION, target_id=a.id, other_id=b.id, reason=reason)
        run.propose("contradiction", "transition", reason, (a, b), [proposal])


def _promotion(run: _Run) -> None:
    groups: dict[tuple[str, tuple[str, ...]], list[MemoryRecord]] = defaultdict(list)
    for record in run.live():
        sig = ops.signature(record)
        if record.type is RecordType.EPISODE and sig:
            groups[(record.effective_namespace, sig)].append(record)
    ruled = {
        (r.effective_namespace, tuple(sorted(r.tags)))
        for r in run.view.values()
        if r.type is RecordType.RULE and r.state is not State.ARCHIVED
    }
    per_namespace: Counter[str] = Counter()
    for (namespace, _), members in groups.items():
        per_namespace[namespace] += len(members)
    for key, episodes in sorted(groups.items()):
        if len(episodes) < run.config.promotion_threshold or key in ruled:
            continue
        total = per_namespace[key[0]]
        if total >= COMMON_SIGNATURE_MIN_EPISODES and len(episodes) > COMMON_SIGNATURE_SHARE * total:
            # Tags every episode carries (an importer's "git", "locomo") describe the source, not a pattern.
            shared = f"shared by {len(episodes)} of {total} episodes"
            reason = f"signature {'+'.join(key[1])} is {shared}: not a pattern"
            run.reject("promotion", reason, (e.id for e in episodes[:20]))
            continue
        proposal = ops.promote(episodes, key[1], now=run.now)
        run.propose("promotion", "create-rule", proposal.reason, episodes, [proposal])


def _rule_flags(run: _Run) -> None:
    for rule in run.live():
        if rule.type is not RecordType.RULE or rule.id in run.claimed:
            continue
        evidence: dict[str, MemoryRecord] = {}
        for evidence_id in rule.evidence:
            try:
                evidence[evidence_id] = run.store.get(evidence_id)
            except RecordNotFound:
                continue
        flagged = ops.rule_flag(rule, evidence, now=run.now)
        if flagged is not None:
            action = "flag" if flagged.flagged else "unflag"
            reason = flagged.flag_reason or "some evidence is live again"
            run.propose("rule-flags", action, reason, [rule], flag=flagged)


def _decay(run: _Run) -> None:
    cited = {
        evidence_id: rule.id
        for rule in run.live()
        if rule.type is RecordType.RULE
        for evidence_id in rule.evidence
    }
    threshold = run.config.archive_threshold
    for record in run.live(State.ACTIVE, State.SUPERSEDED, State.TRANSITIONAL):
        if record.id in run.claimed:
            continue
        touch = run.salience.get(record.id) if run.salience is not None else None
        score = ops.decay_salience(record, touch, now=run.now)
        if score >= threshold:
            continue
        why = f"salience {score:.4f} fell below archive threshold {threshold}"
        protected = None
        if record.state is State.TRANSITIONAL:
            protected = "transitional: its dispute waits for resolution"
        elif record.type is RecordType.RULE and not record.flagged:
            protected = "an unflagged rule"
        elif record.id in cited:
            protected = f"evidence of active rule {cited[record.id]}"
        if protected is not None:
            state = (record.state.value,)
            run.report.actions.append(
                Action("decay", "protect", (record.id,), state, state, f"{why}; kept: {protected}")
            )
            continue
        proposal = Proposal(ProposalKind.ARCHIVE, target_id=record.id, reason=why)
        run.propose("decay", "archive", why, [record], [proposal])
