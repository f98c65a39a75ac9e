"""Who may talk to the review page: the token in its URL, a session cookie, CSRF tokens, strict headers.

The page serves one Home on the loopback interface to the person who started it (issue 22
"Safe by default"). Another local user, another browser profile or a web page the person
visits can all reach 127.0.0.1, so being local is not enough. :class:`Guard` is an ASGI
middleware that keeps these invariants for every request:

- the ``Host`` header names the loopback address and port served (no DNS rebinding: a page
  of ``evil.example`` resolved to 127.0.0.1 is refused);
- a request is let in only with the random token printed with the URL (``?token=…``, then
  exchanged for an ``HttpOnly``, ``SameSite=Strict`` session cookie and a redirect to the
  same address without the token) or with the cookie of a session made that way;
- every ``POST`` carries the session's CSRF token in the form field ``csrf`` and, when the
  browser sends ``Origin``, comes from this very origin;
- every response carries a strict Content-Security-Policy (scripts and styles only from
  this server, no inline script, no frames, forms post only here), ``nosniff``,
  ``no-referrer`` and ``no-store``.

A refusal is a plain-text ``403`` (``400`` for a bad ``Host``) saying why; it reaches no
page and changes nothing. Tokens come from :mod:`secrets` and are compared in constant time.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "COOKIE",
    "CSRF_FIELD",
    "Guard",
    "Session",
    "Sessions",
    "new_token",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "agent_memory_ui"
"""Name of the session cookie."""
CSRF_FIELD = "csrf"
"""Form field every ``POST`` must carry the session's CSRF token in."""
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Sent with every response: nothing inline runs, nothing loads from elsewhere."""
_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def new_token() -> str:
    """Return a fresh random token: 32 bytes from :func:`secrets.token_urlsafe` (43 characters)."""
    return secrets.token_urlsafe(32)


@dataclass(slots=True)
class Session:
    """One browser's session, made by opening the URL with the token.

    Attributes:
        csrf: The token its forms carry (:data:`CSRF_FIELD`).
        flashes: Messages for the next page shown: ``(kind, text)``, kind ``done`` or ``refused``.
    """

    csrf: str = field(default_factory=new_token)
    flashes: list[tuple[str, str]] = field(default_factory=list)


class Sessions:
    """The sessions of one server, in memory (a restart signs everyone out, by design)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def start(self) -> tuple[str, Session]:
        """Make a session; return its cookie value and the session."""
        session_id, session = new_token(), Session()
        with self._lock:
            self._by_id[session_id] = session
        return session_id, session

    def find(self, session_id: str) -> Session | None:
        """Return the session whose cookie value is ``session_id``, else ``None``."""
        with self._lock:
            for known, session in self._by_id.items():
                if hmac.compare_digest(known, session_id):
                    return session
        return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _plain(send: Send, status: int, text: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode("ascii")),
                *_HEADERS,
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware admitting only the person holding the token (module docstring).

    The session of an admitted request is in ``scope["state"]["session"]``; the wrapped app
    reads its CSRF token for the forms it renders and its flashes.

    Args:
        app: The application to guard.
        token: The secret of the URL (:func:`new_token`).
        port: The port served; the ``Host`` header must name ``127.0.0.1``, ``localhost`` or
            ``[::1]`` with it. ``0`` accepts any port and the name ``testserver`` too (the
            in-process test client of starlette; never what :func:`~agent_memory.ui.server.run`
            passes).
        sessions: Where sessions live; a fresh store when omitted.
    """

    def __init__(self, app: App, *, token: str, port: int, sessions: Sessions | None = None) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.sessions = sessions or Sessions()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI connection: refuse it (plain text) or pass it on with the headers added."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._host_ok(_header(scope, b"host")):
            await _plain(send, 400, "refused: this server answers only to http://127.0.0.1 (Host header)\n")
            return
        query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)]
        given = [v for k, v in query if k == "token"]
        if given:
            await self._exchange(scope, send, given[-1], [(k, v) for k, v in query if k != "token"])
            return
        session = self._session_of(scope)
        if session is None:
            await _plain(
                send,
                403,
                "refused: no session. Open the address `agent-memory ui` printed (it carries the token).\n",
            )
            return
        if scope["method"] not in ("GET", "HEAD", "POST"):
            await _plain(send, 405, f"refused: method {scope['method']} is not served here\n")
            return
        if scope["method"] == "POST":
            refusal, receive = await self._check_post(scope, receive, session)
            if refusal:
                await _plain(send, 403, refusal)
                return
        scope.setdefault("state", {})["session"] = session

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _host_ok(self, host: str | None) -> bool:
        if host is None:
            return False
        name, port = host, ""
        if not host.endswith("]") and ":" in host:
            name, _, port = host.rpartition(":")
        if not self.port:
            return name in ("127.0.0.1", "localhost", "[::1]", "testserver")
        return port == str(self.port) and name in ("127.0.0.1", "localhost", "[::1]")

    def _session_of(self, scope: Scope) -> Session | None:
        raw = _header(scope, b"cookie")
        if not raw:
            return None
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(raw)
        except Exception:  # a malformed Cookie header: no session, as without one
            return None
        morsel = cookie.get(COOKIE)
        return self.sessions.find(morsel.value) if morsel is not None else None

    async def _exchange(self, scope: Scope, send: Send, given: str, rest: list[tuple[str, str]]) -> None:
        if not hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8")):
            await _plain(send, 403, "refused: wrong token\n")
            return
        session_id, _ = self.sessions.start()
        target = (scope.get("root_path", "") + scope["path"]) or "/"
        if rest:
            target += "?" + urlencode(rest)
        cookie = f"{COOKIE}={session_id}; HttpOnly; SameSite=Strict; Path=/"
        await _plain(
            send,
            303,
            "signed in\n",
            [(b"location", target.encode("utf-8")), (b"set-cookie", cookie.encode("ascii"))],
        )

    async def _check_post(self, scope: Scope, receive: Receive, session: Session) -> tuple[str, Receive]:
        """Read the whole body; return ``(refusal or "", a receive replaying the body)``."""
        origin = _header(scope, b"origin")
        if origin is not None and origin != "null" and not self._host_ok(origin.partition("://")[2]):
            return "refused: the form was posted from another site (Origin)\n", receive
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return "refused: the request ended early\n", receive
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        kind = (_header(scope, b"content-type") or "").partition(";")[0].strip()
        fields = (
            parse_qsl(body.decode("utf-8", "replace")) if kind == "application/x-www-form-urlencoded" else []
        )
        sent = [v for k, v in fields if k == CSRF_FIELD]
        if not sent or not hmac.compare_digest(sent[-1].encode("utf-8"), session.csrf.encode("utf-8")):
            return "refused: missing or wrong CSRF token (reload the page and try again)\n", receive
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return "", replay
