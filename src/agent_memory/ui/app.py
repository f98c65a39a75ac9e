"""The review page's routes: server-rendered HTML over one open memory, behind the guard (:mod:`.auth`).

Pages (``GET``): ``/`` browse and search, ``/record/{id}`` one record, ``/review`` the review
queue, ``/agent`` what the agent sees (``MEMORY.md`` and the other views, golden recall
tests), ``/doctor`` the doctor's checks, ``/archive/{file}`` an archive file (the evidence
sources point at), ``/static/…`` the stylesheet, script and nothing else. Actions (``POST
/action/{name}``) run :func:`agent_memory.ui.actions.run_action` and redirect (``303``) back
to the page they came from with what happened (or the refusal, in the CLI's words) shown at
the top.

Invariants: templates autoescape everything (a stored ``<script>`` is shown as text and, with
the Content-Security-Policy forbidding inline script, never runs); every form carries the
session's CSRF token (the guard checks it); blocking work (the Memory, files, git) runs in a
worker thread, one request at a time through :class:`~agent_memory.ui.opened.OpenedMemory`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agent_memory.errors import AgentMemoryError, RecordNotFound
from agent_memory.records.wire import format_timestamp
from agent_memory.ui.auth import CSRF_FIELD, Guard, Session, Sessions
from agent_memory.ui.opened import OpenedMemory

__all__ = ["create_app", "link_ids", "templates"]

_RECORD_ID = re.compile(r"mem:[0-9a-f]{32}")
_ARCHIVE_FILE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\.md$")


def link_ids(text: str) -> Markup:
    """Return ``text`` escaped, with every record id (``mem:`` + 32 hex) a link to its page."""
    linked = _RECORD_ID.sub(lambda m: f'<a href="/record/{m.group(0)}">{m.group(0)}</a>', str(escape(text)))
    # Safe: the text was escaped first, and the ids put in links are hex digits.
    return Markup(linked)  # noqa: S704


def templates() -> Environment:
    """Return the page templates (package data under ``agent_memory/ui/templates``), autoescaping all."""
    env = Environment(
        loader=PackageLoader("agent_memory.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["link_ids"] = link_ids
    env.filters["when"] = format_timestamp
    env.filters["short"] = lambda text, n=160: text if len(text) <= n else text[: n - 1] + "…"
    return env


def _message(exc: AgentMemoryError) -> str:
    """Word a refusal as the CLI does: ``agent-memory: error: …`` then ``hint: …``."""
    text = f"agent-memory: error: {exc}"
    return f"{text}\nhint: {exc.hint}" if exc.hint else text


def _local(target: str) -> str:
    """Return ``target`` when it is a path of this site (``/…``, not ``//…``), else ``/``."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def create_app(opened: OpenedMemory, *, token: str, port: int, sessions: Sessions | None = None) -> Guard:
    """Return the ASGI application serving ``opened``: the routes behind the guard.

    Args:
        opened: The memory served (closed by the caller when the server stops).
        token: The URL's secret (:func:`agent_memory.ui.auth.new_token`).
        port: The port served (``0``: any, for the in-process test client).
        sessions: Where sessions live; fresh when omitted.
    """
    env = templates()

    def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        session: Session = request.scope["state"]["session"]
        flashes, session.flashes = session.flashes, []
        html = env.get_template(template).render(
            csrf_field=CSRF_FIELD,
            csrf=session.csrf,
            flashes=flashes,
            served=opened.describe(),
            here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    async def read(request: Request, name: str, build: Callable[[], dict[str, Any]]) -> Response:
        try:
            context = await run_in_threadpool(build)
        except RecordNotFound as exc:
            return page(request, "refused.html", 404, message=_message(exc))
        except AgentMemoryError as exc:
            return page(request, "refused.html", 400, message=_message(exc))
        return page(request, name, **context)

    drawn: dict[int, tuple[Any, Any]] = {}

    def charts_of(memory: Any) -> tuple[Any, Any]:
        """Return the two timelines, drawn once per change of the record list."""
        from agent_memory.ui.charts import timeline

        records = opened.latest.current()
        if opened.latest.version not in drawn:
            drawn.clear()
            drawn[opened.latest.version] = (
                timeline(records, memory.zone, by="state"),
                timeline(records, memory.zone, by="kind"),
            )
        return drawn[opened.latest.version]

    async def browse_page(request: Request) -> Response:
        from agent_memory.ui.browse import Filters, browse

        def build() -> dict[str, Any]:
            filters = Filters.parse(request.query_params)
            with opened.using() as memory:
                listing = browse(memory, opened.reviews, filters, opened.latest)
                return {"listing": listing, "choices": _choices(), "charts": charts_of(memory)}

        return await read(request, "browse.html", build)

    async def record(request: Request) -> Response:
        from agent_memory.ui.browse import record_page

        record_id = request.path_params["record_id"]
        return await read(
            request,
            "record.html",
            lambda: {"page": opened.read(lambda m: record_page(m, opened.reviews, record_id))},
        )

    async def review(request: Request) -> Response:
        from agent_memory.ui.queue import review_page

        def build() -> dict[str, Any]:
            from agent_memory.ui.charts import backlog

            shown = opened.read(lambda m: review_page(m, opened.reviews, opened.latest))
            return {"page": shown, "backlog": backlog(shown.backlog())}

        return await read(request, "review.html", build)

    async def agent(request: Request) -> Response:
        from agent_memory.ui.agent_view import agent_page

        chosen = request.query_params.get("view", "MEMORY.md")
        return await read(
            request, "agent.html", lambda: {"page": opened.read(lambda m: agent_page(m, chosen))}
        )

    async def doctor(request: Request) -> Response:
        from agent_memory.ui.agent_view import doctor_page

        return await read(request, "doctor.html", lambda: {"report": opened.read(doctor_page)})

    async def archive(request: Request) -> Response:
        name = request.path_params["name"]
        home = opened.home
        if home is None or not _ARCHIVE_FILE.match(name):
            return page(request, "refused.html", 404, message=f"agent-memory: error: no archive file {name}")
        path = Path(home.root) / "archive" / name
        if not path.is_file():
            return page(request, "refused.html", 404, message=f"agent-memory: error: no archive file {name}")
        text = await run_in_threadpool(path.read_text, encoding="utf-8", errors="replace")
        return page(request, "archive.html", name=name, lines=_archive_lines(text))

    async def action(request: Request) -> Response:
        from agent_memory.ui.actions import run_action

        session: Session = request.scope["state"]["session"]
        form = dict(parse_qsl((await request.body()).decode("utf-8", "replace"), keep_blank_values=True))
        back = _local(form.get("next", "/"))
        name = request.path_params["name"]
        try:
            done = await run_in_threadpool(opened.write, lambda memory: run_action(memory, name, form))
        except AgentMemoryError as exc:
            session.flashes.append(("refused", _message(exc)))
        else:
            session.flashes.append(("done", done))
        return RedirectResponse(back, status_code=303)

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("not found\n", status_code=404)

    static = Path(__file__).parent / "static"
    routes = [
        Route("/", browse_page),
        Route("/record/{record_id:str}", record),
        Route("/review", review),
        Route("/agent", agent),
        Route("/doctor", doctor),
        Route("/archive/{name:str}", archive),
        Route("/action/{name:str}", action, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=static), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found})
    return Guard(app, token=token, port=port, sessions=sessions)


def _choices() -> dict[str, tuple[str, ...]]:
    from agent_memory.governance.review_book import REVIEW_STATES
    from agent_memory.records.record import Kind, RecordType, State

    return {
        "kind": tuple(k.value for k in Kind),
        "type": tuple(t.value for t in RecordType),
        "state": tuple(s.value for s in State),
        "review": REVIEW_STATES,
    }


_ANCHOR = re.compile(r"\b(mem-[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{3,})\b")


def _archive_lines(text: str) -> list[tuple[str, str]]:
    """Return ``(anchor or "", line)`` per line of an archive file: the inbox id in a line is its anchor."""
    lines = []
    for line in text.splitlines():
        found = _ANCHOR.search(line)
        lines.append((found.group(1) if found else "", line))
    return lines
