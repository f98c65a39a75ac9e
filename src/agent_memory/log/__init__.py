"""The operation log (seed 000 §7.1 capability 5; DESIGN.md §3 ``log/``, §9): port and adapters.

:mod:`~agent_memory.log.base` holds the port and the entry; :mod:`~agent_memory.log.chain`
the hash-chain rules every adapter shares. The adapters are :class:`JsonlLog` (month files
in a Home), :class:`SQLiteLog` (a table) and :class:`MemoryLog` (the in-memory reference and
test fake); all three store the same bytes for the same events.
"""

from __future__ import annotations

from agent_memory.log.base import ACTIONS, GENESIS, Action, LogEntry, OperationLog
from agent_memory.log.inmemory import MemoryLog
from agent_memory.log.jsonl import JsonlLog
from agent_memory.log.sqlite import SQLiteLog

__all__ = ["ACTIONS", "GENESIS", "Action", "JsonlLog", "LogEntry", "MemoryLog", "OperationLog", "SQLiteLog"]
