"""What the agent sees: the generated views as the agent reads them, the golden recall tests, the doctor.

``MEMORY.md`` is what an agent autoloads at the start of every session; the page shows the
file as it is on disk (not as the page would render it), with every record id linked to the
record's page, and says whether ``agent-memory render`` would write something different now
(:func:`agent_memory.jobs.views.render` with ``check=True``, which writes nothing). The golden
questions of ``golden.yaml`` run through recall as ``agent-memory golden`` runs them (no
salience touches, nothing written); the doctor's checks run as ``agent-memory doctor``
(without ``--fix``: the page repairs nothing on its own).

A Memory over a database has no views, golden file or Home checks; the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_memory.errors import AgentMemoryError, RecordError

if TYPE_CHECKING:
    from agent_memory.doctor.diagnose import DoctorReport
    from agent_memory.doctor.golden import GoldenReport
    from agent_memory.memory import Memory

__all__ = ["AgentPage", "agent_page", "doctor_page"]


@dataclass(frozen=True, slots=True)
class AgentPage:
    """The "what the agent sees" page.

    Attributes:
        views: Every view file, relative paths (``MEMORY.md`` first, then ``conventions.md``,
            ``index.md``, ``topics/…``).
        chosen: The view shown.
        text: Its text as on disk.
        stale: The views older than the notes and the log: those ``render`` would write
            differently now, or remove (an obsolete topic page); empty when all are current.
        edited: Views edited by hand (render leaves them alone), with why.
        golden: The golden questions' report, or ``None`` when ``golden.yaml`` has none.
        golden_problem: Why ``golden.yaml`` could not be read, or ``""``.
        unavailable: Why there are no views (a database), or ``""``.
    """

    views: tuple[str, ...] = ()
    chosen: str = ""
    text: str = ""
    stale: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()
    golden: GoldenReport | None = None
    golden_problem: str = ""
    unavailable: str = ""


def agent_page(memory: Memory, chosen: str) -> AgentPage:
    """Return the views of ``memory``'s Home, the text of ``chosen``, and the golden report.

    Raises:
        RecordError: ``chosen`` is not one of the Home's views (field ``view``).
    """
    from agent_memory.doctor.golden import load_golden, run_golden
    from agent_memory.jobs.views import render, view_files

    home = memory.home
    if home is None:
        return AgentPage(
            unavailable="views and golden tests live in a Home's files; this memory is a database"
        )
    root = home.root
    names = [str(p.relative_to(root)) for p in view_files(root)]
    if (root / "conventions.md").is_file():
        names.append("conventions.md")
    order = {"MEMORY.md": 0, "conventions.md": 1, "index.md": 2}
    views = tuple(sorted(dict.fromkeys(names), key=lambda n: (order.get(n, 3), n)))
    if chosen not in views:
        raise RecordError(f"no view {chosen!r} in this Home (one of {', '.join(views)})", field="view")
    text = (root / chosen).read_text(encoding="utf-8", errors="replace")
    check = render(home, check=True)
    edited = tuple(str(problem) for problem in check.problems)
    golden, problem = None, ""
    try:
        questions = load_golden(root / "golden.yaml")
        if questions:
            golden = run_golden(memory, questions)
    except AgentMemoryError as exc:
        problem = str(exc)
    # As doctor's views check: a view render would rewrite, or an obsolete one it would remove.
    stale = tuple(dict.fromkeys((*check.written, *check.removed)))
    return AgentPage(views, chosen, text, stale, edited, golden, problem)


def doctor_page(memory: Memory) -> DoctorReport | None:
    """Return the doctor's report of ``memory``'s Home (no repairs), or ``None`` for a database."""
    from agent_memory.doctor.diagnose import doctor

    home = memory.home
    return doctor(home) if home is not None else None
