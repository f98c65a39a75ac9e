"""agent-memory: long-term memory for LLM agents that a person can read, diff, correct and carry away.

The public API is :data:`__all__`; names load lazily on first use, so importing the package
(and starting the CLI) stays fast. Start with :class:`Memory`::

    from agent_memory import Memory

    with Memory.open("~/memory") as memory:
        memory.remember("Staging runs on db-3.", kind="state", subject="host:staging", source="ticket-481")
        print(memory.recall("which host runs staging?").as_prompt_block())
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.errors import (
        AgentMemoryError,
        ConfigError,
        LifecycleError,
        LogError,
        ProposalError,
        RecordError,
        RecordNotFound,
        SignatureError,
        StoreError,
    )
    from agent_memory.home import Home
    from agent_memory.log.base import LogEntry, OperationLog
    from agent_memory.log.jsonl import JsonlLog
    from agent_memory.memory import Memory, RememberResult
    from agent_memory.recall.select import RecalledRecord, RecallResult
    from agent_memory.records.lifecycle import (
        LEGAL_TRANSITIONS,
        archive,
        begin_transition,
        is_legal,
        refresh_rule_flag,
        resolve_transition,
        supersede,
    )
    from agent_memory.records.memory_file import MemoryFile
    from agent_memory.records.note import dump_note, load_note
    from agent_memory.records.record import (
        EpistemicStatus,
        Kind,
        MemoryRecord,
        Provenance,
        RecordType,
        Scope,
        State,
        Transition,
    )
    from agent_memory.records.signing import load_or_create_identity, sign_record, verify_record
    from agent_memory.records.wire import FORMAT_VERSION
    from agent_memory.search.base import Embedder, Hit, SearchIndex
    from agent_memory.stores.base import RecordStore
    from agent_memory.stores.files import FileStore
    from agent_memory.stores.inmemory import InMemoryStore
    from agent_memory.stores.sqlite import SQLiteStore
    from agent_memory.write.proposals import Proposal, ProposalKind, apply_proposal, apply_proposals

# name -> module that defines it
_EXPORTS = {
    "AgentMemoryError": "errors",
    "ConfigError": "errors",
    "LifecycleError": "errors",
    "LogError": "errors",
    "ProposalError": "errors",
    "RecordError": "errors",
    "RecordNotFound": "errors",
    "SignatureError": "errors",
    "StoreError": "errors",
    "Home": "home",
    "LEGAL_TRANSITIONS": "records.lifecycle",
    "archive": "records.lifecycle",
    "begin_transition": "records.lifecycle",
    "is_legal": "records.lifecycle",
    "refresh_rule_flag": "records.lifecycle",
    "resolve_transition": "records.lifecycle",
    "supersede": "records.lifecycle",
    "LogEntry": "log.base",
    "OperationLog": "log.base",
    "JsonlLog": "log.jsonl",
    "Memory": "memory",
    "RememberResult": "memory",
    "MemoryFile": "records.memory_file",
    "dump_note": "records.note",
    "load_note": "records.note",
    "Proposal": "write.proposals",
    "ProposalKind": "write.proposals",
    "apply_proposal": "write.proposals",
    "apply_proposals": "write.proposals",
    "RecallResult": "recall.select",
    "RecalledRecord": "recall.select",
    "EpistemicStatus": "records.record",
    "Kind": "records.record",
    "MemoryRecord": "records.record",
    "Provenance": "records.record",
    "RecordType": "records.record",
    "Scope": "records.record",
    "State": "records.record",
    "Transition": "records.record",
    "Embedder": "search.base",
    "Hit": "search.base",
    "SearchIndex": "search.base",
    "load_or_create_identity": "records.signing",
    "sign_record": "records.signing",
    "verify_record": "records.signing",
    "RecordStore": "stores.base",
    "FileStore": "stores.files",
    "InMemoryStore": "stores.inmemory",
    "SQLiteStore": "stores.sqlite",
    "FORMAT_VERSION": "records.wire",
}

__all__ = [
    "FORMAT_VERSION",
    "LEGAL_TRANSITIONS",
    "AgentMemoryError",
    "ConfigError",
    "Embedder",
    "EpistemicStatus",
    "FileStore",
    "Hit",
    "Home",
    "InMemoryStore",
    "JsonlLog",
    "Kind",
    "LifecycleError",
    "LogEntry",
    "LogError",
    "Memory",
    "MemoryFile",
    "MemoryRecord",
    "OperationLog",
    "Proposal",
    "ProposalError",
    "ProposalKind",
    "Provenance",
    "RecallResult",
    "RecalledRecord",
    "RecordError",
    "RecordNotFound",
    "RecordStore",
    "RecordType",
    "RememberResult",
    "SQLiteStore",
    "Scope",
    "SearchIndex",
    "SignatureError",
    "State",
    "StoreError",
    "Transition",
    "apply_proposal",
    "apply_proposals",
    "archive",
    "begin_transition",
    "dump_note",
    "is_legal",
    "load_note",
    "load_or_create_identity",
    "refresh_rule_flag",
    "resolve_transition",
    "sign_record",
    "supersede",
    "verify_record",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agent_memory.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
