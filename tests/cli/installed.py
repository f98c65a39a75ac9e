"""Run the installed ``agent-memory`` command as a user does, in a private config folder.

``tests/cli/conftest.py`` makes the ``cli`` fixture from :func:`make_cli`: each test gets its
own working folder and ``XDG_CONFIG_HOME`` (key files go there), and no ``AGENT_MEMORY_HOME``
from the outside environment. :func:`seed` writes a few records the way ``remember`` would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fg_agent_id import KeyPair

from agent_memory.home import Home
from agent_memory.records.lifecycle import supersede
from agent_memory.records.record import Kind, MemoryRecord, Provenance
from agent_memory.records.signing import sign_record
from agent_memory.stores.base import RecordStore

COMMAND = shutil.which("agent-memory", path=str(Path(sys.executable).parent))
T0 = datetime(2026, 1, 1, tzinfo=UTC)
REASON = "newer value for subject host:staging"


@dataclass(frozen=True)
class Seeded:
    """The ids :func:`seed` wrote: ``old`` (2 versions, superseded by ``new``), ``new``, ``tea``."""

    old: str
    new: str
    tea: str

    @property
    def ids(self) -> list[str]:
        return [self.old, self.new, self.tea]


@dataclass(frozen=True)
class Cli:
    """The installed command, run in ``root`` with ``env``."""

    root: Path
    env: dict[str, str]

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        assert COMMAND, "the agent-memory command is not installed next to this Python"
        return subprocess.run(
            [COMMAND, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            cwd=self.root,
            env={**self.env, **(env or {})},
        )

    def ok(self, *args: str) -> str:
        """Run and return stdout, failing the test with stderr on a non-zero exit."""
        result = self(*args)
        assert result.returncode == 0, (
            f"agent-memory {' '.join(args)} exited {result.returncode}: {result.stderr}"
        )
        return result.stdout

    def home(self, name: str = "home") -> Path:
        """Create a Home under ``root`` in-process (no git, for speed) and return its path.

        ``init`` itself is tested through the command in ``test_init_cli.py``.
        """
        path = self.root / name
        keys = Path(self.env["XDG_CONFIG_HOME"]) / "agent-memory" / "keys" / f"{name}.key"
        Home.init(path, timezone="UTC", key_file=keys, git=False)
        return path


def seed(store: RecordStore, keys: KeyPair | None = None, *, prefix: str = "") -> Seeded:
    """Write three records, four versions, as ``remember`` would (signed by ``keys`` when given).

    Written through the store directly: the commands under test read what any writer left,
    and ``remember`` would load the search indexes and embedder on every call.
    """
    source = Provenance(kind="conversation", ref="test:cli")
    state = {"kind": Kind.STATE, "subject": "host:staging"}
    old = MemoryRecord.create(
        type="fact", body=f"{prefix}Staging runs on db-3.", provenance=source, created_at=T0, **state
    )
    new = MemoryRecord.create(
        type="fact",
        body=f"{prefix}Staging runs on db-4.",
        provenance=source,
        created_at=T0 + timedelta(hours=1),
        supersedes=old.id,
        **state,
    )
    tea = MemoryRecord.create(
        type="preference",
        body=f"{prefix}Likes green tea.",
        provenance=source,
        created_at=T0 + timedelta(hours=2),
    )
    retired = supersede(old, new, REASON, now=T0 + timedelta(hours=1))
    if keys is not None:
        old, new, retired, tea = (sign_record(record, keys) for record in (old, new, retired, tea))
    for record in (old, new, retired, tea):
        store.put(record)
    return Seeded(old.id, new.id, tea.id)


def make_cli(root: Path) -> Cli:
    """A :class:`Cli` working in ``root``, with key files under ``root/config``."""
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}
    env["XDG_CONFIG_HOME"] = str(root / "config")
    return Cli(root, env)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), to prove that nothing changed.

    The Home's ``.cache/`` is left out: it holds derived state (indexes, the write-keys table)
    that any opening may rebuild, never what was stored.
    """
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != ".cache"
    }
