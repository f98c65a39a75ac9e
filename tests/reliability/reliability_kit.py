"""What the reliability suite shares: the CI and soak profiles, Home helpers, snapshots and scans.

Profiles (issue 11): by default every test runs its CI size (modest example counts, a few
kills per operation, 4 writers × 60 remembers), so the whole of ``tests/reliability`` stays
within a few minutes on two shared cores. ``AGENT_MEMORY_SOAK=1`` switches to the soak sizes
(100,000 inputs per parser, 10,000 recall queries per store and MCP calls per session, 200
kills per operation, 4 × 500 remembers); ``bench/soak.py`` sets it. Each size can be
overridden on its own (``AGENT_MEMORY_SOAK_FUZZ``, ``AGENT_MEMORY_SOAK_INTERFACE``,
``AGENT_MEMORY_SOAK_KILLS``, ``AGENT_MEMORY_SOAK_REMEMBERS``) so that a soak fits a time box.

When ``AGENT_MEMORY_RELIABILITY_REPORT`` names a file, tests append their figures to it as
JSON lines (:func:`record_figures`); ``bench/soak.py`` turns them into ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from random import Random, SystemRandom
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.doctor.debris import find_debris
from agent_memory.doctor.diagnose import diagnose, repair
from agent_memory.home import Home
from agent_memory.log.sqlite import SQLiteLog
from agent_memory.memory import Memory
from agent_memory.search.catalog import IndexCatalog
from agent_memory.search.recipes import SearchSettings, splice_search
from agent_memory.stores.sqlite import SQLiteStore

T0 = datetime(2026, 11, 1, tzinfo=UTC)
SOAK = os.environ.get("AGENT_MEMORY_SOAK", "") not in ("", "0")
REPORT_ENV = "AGENT_MEMORY_RELIABILITY_REPORT"


def _size(variable: str, ci: int, soak: int) -> int:
    given = os.environ.get(variable, "")
    if given:
        return max(1, int(given))
    return soak if SOAK else ci


FUZZ_EXAMPLES = _size("AGENT_MEMORY_SOAK_FUZZ", 120, 100_000)
"""Generated inputs per parser (the issue asks for at least 100,000 in the soak run)."""
INTERFACE_EXAMPLES = _size("AGENT_MEMORY_SOAK_INTERFACE", 60, 10_000)
"""Generated recall queries per store and MCP tool calls per session (each costs a recall or a write)."""
KILLS_PER_OP = _size("AGENT_MEMORY_SOAK_KILLS", 6, 200)
"""SIGKILLs per crash-tested operation."""
REMEMBERS_PER_WRITER = _size("AGENT_MEMORY_SOAK_REMEMBERS", 60, 500)
"""Remembers each of the 4 concurrent writer processes makes."""
WRITERS = 4


def fuzz_folder(prefix: str) -> Path:
    """A new folder for a fuzz test's files: in ``/dev/shm`` when there is one.

    A fuzz input costs a few file operations; on a shared disk each open can take most of a
    millisecond, on tmpfs a few microseconds. Nothing a fuzz test checks depends on the disk.
    """
    shm = Path("/dev/shm")  # noqa: S108 - a private mkdtemp folder inside it, not a shared name
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def fuzz_settings(examples: int = FUZZ_EXAMPLES) -> Any:
    """Hypothesis settings of a fuzz test: ``examples`` inputs, no deadline, no example database.

    The database is off so that a soak run leaves nothing behind in the repository and a CI
    run does not replay another machine's failures silently.
    """
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


SEED_ENV = "AGENT_MEMORY_SOAK_SEED"


def fuzz_inputs(examples: int = FUZZ_EXAMPLES) -> Callable[[Callable[[Random], None]], Callable[[], None]]:
    """Decorate ``body(rng)``, one generated input per call, into a function that runs ``examples`` inputs.

    In CI each input's ``Random`` comes from Hypothesis (:func:`fuzz_settings`,
    ``st.randoms``). In the soak (``AGENT_MEMORY_SOAK=1``) the inputs come from a plain loop
    over ``Random(base + n)`` for ``n`` below ``examples``: the generators of
    :mod:`fuzz_inputs` draw everything from that one ``Random``, so Hypothesis adds nothing
    but its bookkeeping (about 1 ms per input, as much as many of the inputs cost). ``base``
    is ``AGENT_MEMORY_SOAK_SEED`` when set (to replay a run), random otherwise; a failing
    input raises ``AssertionError`` naming its seed, the failure chained as its cause.
    """

    def decorate(body: Callable[[Random], None]) -> Callable[[], None]:
        if not SOAK:
            seeded = given(rng=st.randoms(use_true_random=True))(body)
            run: Callable[[], None] = fuzz_settings(examples)(seeded)
            return run

        def loop() -> None:
            given_seed = os.environ.get(SEED_ENV, "")
            base = int(given_seed) if given_seed else SystemRandom().randrange(2**40)
            for number in range(examples):
                try:
                    body(Random(base + number))  # noqa: S311 - test input, replayable by design
                except Exception as exc:
                    raise AssertionError(
                        f"fuzz input {number} failed; replay it with {SEED_ENV}={base + number}"
                    ) from exc

        return loop

    return decorate


def record_figures(test: str, **figures: Any) -> None:
    """Append ``{"test": test, **figures}`` to the soak report file, when one is named."""
    target = os.environ.get(REPORT_ENV)
    if not target:
        return
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"test": test, "soak": SOAK, **figures}, sort_keys=True) + "\n")


def make_home(path: Path, *, recipes: Sequence[str] = ("bm25",), git: bool = False) -> Path:
    """Create a Home at ``path`` whose recall reads ``recipes`` (BM25 alone by default: fast, no model)."""
    Home.init(path, git=git, now=T0)
    toml = path / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(tuple(recipes))), "utf-8")
    return path


TRUTH = ("notes", "log", "archive", "proposals")
"""The folders whose bytes are the Home's truth (everything else is a view or a cache)."""


def snapshot(root: Path, folders: Iterable[str] = TRUTH, files: Iterable[str] = ()) -> dict[str, bytes]:
    """Return ``{relative path: bytes}`` of the files under ``folders`` and of ``files`` (links as links)."""
    found: dict[str, bytes] = {}
    for folder in folders:
        base = root / folder
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_symlink():
                found[path.relative_to(root).as_posix()] = b"-> " + os.fsencode(os.readlink(path))
            elif path.is_file():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    for name in files:
        path = root / name
        if path.is_file():
            found[name] = path.read_bytes()
    return found


def every_file(root: Path) -> dict[str, bytes]:
    """Return every regular file under ``root`` (``.git`` included), by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def files_holding(root: Path, needles: Sequence[bytes]) -> set[str]:
    """Every file under ``root`` (``.git`` excepted) whose bytes contain one of ``needles``."""
    return {
        path
        for path, data in every_file(root).items()
        if not path.startswith(".git/") and any(needle in data for needle in needles)
    }


def git_objects_holding(root: Path, needles: Sequence[bytes]) -> set[str]:
    """Git objects of ``root`` holding a needle: loose ones decompressed with zlib, packed ones via git.

    Returns the object paths (``.git/objects/ab/cdef…``) or ``pack`` when a packed object holds one.
    """
    found: set[str] = set()
    objects = root / ".git" / "objects"
    if not objects.is_dir():
        return found
    for path in sorted(objects.glob("[0-9a-f][0-9a-f]/*")):
        data = zlib.decompress(path.read_bytes())
        if any(needle in data for needle in needles):
            found.add(path.relative_to(root).as_posix())
    if any(objects.glob("pack/*.pack")):
        git = shutil.which("git") or "git"
        out = subprocess.run(
            [git, "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True, check=True
        ).stdout
        if any(needle in out for needle in needles):
            found.add("pack")
    return found


# ---------------------------------------------------------------------- kill -9 at a chosen point

_KILLER = """
import importlib, os, signal, sys
point, calls, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
module, _, name = point.partition(":")
owner_name, _, method = name.partition(".")
owner = getattr(importlib.import_module(module), owner_name)
original = getattr(owner, method)
made = []

def dying(*args, **kwargs):
    result = original(*args, **kwargs)
    made.append(1)
    if len(made) == calls:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

setattr(owner, method, dying)
exec(compile(code, "<killed>", "exec"), {"argv": sys.argv[4:]})
"""


def killed_after(point: str, calls: int, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new Python that SIGKILLs itself right after the ``calls``-th return of ``point``.

    The one deterministic kill -9 of the suite (issue 20): ``point`` names a method as
    ``module:Class.method`` (``agent_memory.stores.files:FileStore.put``, ``…:FileStore.erase``),
    so the process dies between two steps of a multi-step operation, exactly where a power
    cut could stop it. ``code`` sees ``args`` as ``argv``. The environment is this process's
    (the test's config folder, so the Home's key file is found).

    Returns:
        The finished process: ``returncode`` is ``-SIGKILL`` when the point was reached
        ``calls`` times, 0 when the operation ended first.
    """
    import sys

    return subprocess.run(
        [sys.executable, "-c", _KILLER, point, str(calls), code, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


# ---------------------------------------------------------------------- checks after a kill


def doctor_after_kill(root: Path) -> tuple[list[str], list[str]]:
    """Run doctor; when it finds problems, doctor --fix must clear them touching only derived state.

    Returns:
        The checks that failed before the fix, and the repairs made.
    """
    home = Home.open(root)
    checks = diagnose(home)
    # Debris (a killed write's temp file or empty record folder) is a warning doctor --fix clears.
    failed = [c for c in checks if not c.ok or (c.name == "debris" and c.warning)]
    if not failed:
        return [], []
    notes, archive = snapshot(root, ("notes",)), snapshot(root, ("archive",))
    fixed = repair(home, checks)
    still = {c.name: c.details for c in diagnose(home) if not c.ok}
    found = {c.name: c.details for c in failed}
    assert not still, f"doctor --fix left problems: {still} (found {found}; repaired {fixed})"
    assert not find_debris(home), f"doctor --fix left debris: {find_debris(home)}"
    # Rolling an open intent forward adds the version it names (a supersede's retired record);
    # no version file already there changes; only temp files (never a version) are removed.
    after_notes = snapshot(root, ("notes",))
    versions = {name: data for name, data in notes.items() if "/.tmp-" not in name}
    assert all(after_notes.get(name) == data for name, data in versions.items()), (
        f"doctor --fix changed notes: {fixed}"
    )
    assert after_notes.keys() == versions.keys() or "intents" in found, f"doctor --fix added notes: {fixed}"
    # An interrupted archive run is finished: files only grow, by the bytes its logged digests fix.
    after = snapshot(root, ("archive",))
    assert all(after.get(name, b"").startswith(data) for name, data in archive.items()), fixed
    assert after == archive or "archive" in found, f"doctor --fix changed the archive: {fixed}"
    return sorted(found), fixed


def receipts_for_every_tombstone(root: Path) -> None:
    """Assert that every erased record has its receipt in the log and no erasure is left open.

    An erase killed after its intent is finished by the next open (issue 20 item 2): never a
    tombstone without an ``erase`` entry naming it.
    """
    home = Home.open(root)
    erased = {r.id for r in home.store().list() if r.redacted}
    receipted = {rid for e in home.log().entries() if e.action == "erase" for rid in e.record_ids}
    assert erased <= receipted, f"tombstones without a receipt: {sorted(erased - receipted)}"
    journal = home.cache_dir / "erase-journal"
    assert not journal.exists() or not any(journal.glob("*.json")), "an erasure is still open"


STORE_KINDS = ("inmemory", "file", "sqlite", "postgres")
"""The stores recall and erasure are checked over: in memory, a Home's notes, SQLite, PostgreSQL."""


@contextmanager
def memory_over(kind: str, folder: Path, *, taint: Sequence[str] = ()) -> Iterator[Memory]:
    """Yield a fresh Memory over one store kind, with BM25 (or PostgreSQL full text) as its index.

    ``file`` is a Home (no git) in ``folder/home``; ``sqlite`` keeps store and log in
    ``folder/memory.sqlite`` and its indexes in ``folder/cache``; ``postgres`` uses a fresh
    schema of the session's cluster (skipped without PostgreSQL, as :mod:`pg` decides) for
    the store, the log and a :class:`PgTextIndex`, dropped afterwards.
    """
    if kind == "inmemory":
        with Memory.in_memory(taint=taint) as memory:
            yield memory
    elif kind == "file":
        with Memory.open(make_home(folder / "home"), taint=taint) as memory:
            yield memory
    elif kind == "sqlite":
        store = SQLiteStore(folder / "memory.sqlite")
        log = SQLiteLog(folder / "memory.sqlite")
        catalog = IndexCatalog.for_home(folder / "cache", store, search=SearchSettings(("bm25",)))
        try:
            with Memory(store, log, catalog, taint=taint) as memory:
                yield memory
        finally:
            log.close()
            store.close()
    elif kind == "postgres":
        with postgres_memory(taint=taint) as memory:
            yield memory
    else:
        raise ValueError(f"unknown store kind {kind!r}")


@contextmanager
def postgres_memory(
    *, schema: str | None = None, taint: Sequence[str] = (), drop: bool = True
) -> Iterator[Memory]:
    """Yield a Memory over PostgreSQL (store, log and full-text index in one schema)."""
    from agent_memory.log.postgres import PostgresLog
    from agent_memory.search.postgres import PgTextIndex
    from agent_memory.stores.postgres import PostgresStore
    from pg import shared_cluster
    from pg_indexes import drop_schema

    cluster = shared_cluster()
    name = schema or f"t_{uuid.uuid4().hex}"
    store = PostgresStore(cluster.dsn, schema=name)
    log = PostgresLog(cluster.dsn, schema=name)
    index = PgTextIndex(cluster.dsn, schema=name)
    try:
        with Memory(store, log, IndexCatalog(store, {"fulltext": index}), taint=taint) as memory:
            yield memory
    finally:
        for part in (index, log, store):
            part.close()
        if drop:
            drop_schema(cluster, name)
