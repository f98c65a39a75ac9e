"""Start and stop the review page: a uvicorn server on 127.0.0.1, the URL with its token, the browser.

Invariants: the server binds the loopback address only (there is no option to bind another);
the token is made fresh for every start and appears only in the URL printed to the person
(and handed to the browser); the Memory opened for the server is closed when it stops, which
commits what was left to commit.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_memory.ui.auth import new_token
from agent_memory.ui.opened import OpenedMemory

__all__ = ["HOST", "Running", "free_port", "run", "start"]

HOST = "127.0.0.1"
"""The only address the page is served on."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago (the system picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


@dataclass
class Running:
    """A started server.

    Attributes:
        url: The address to open, token included (``http://127.0.0.1:PORT/?token=…``).
        port: The port served.
        stop: Stop the server and close the memory; returns once both are done.
    """

    url: str
    port: int
    stop: Callable[[], None]


def _server(opened: OpenedMemory, port: int) -> tuple[object, str]:
    import uvicorn

    from agent_memory.ui.app import create_app

    token = new_token()
    app = create_app(opened, token=token, port=port)
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config), f"http://{HOST}:{port}/?token={token}"


def start(where: str | Path | None, *, port: int = 0) -> Running:
    """Serve ``where`` (a Home, or a ``sqlite:``/``postgresql://`` URL) from a background thread.

    For tests and scripts; :func:`run` is the command's foreground form.

    Args:
        where: As ``--home`` (``None``: ``$AGENT_MEMORY_HOME``, else ``./memory``).
        port: The port, or 0 for a free one.

    Raises:
        ConfigError: There is no Home there.
        OSError: The port cannot be bound.
    """
    opened = OpenedMemory.open(where)
    port = port or free_port()
    server, url = _server(opened, port)
    thread = threading.Thread(target=server.run, name="agent-memory-ui", daemon=True)  # type: ignore[attr-defined]
    thread.start()
    while not getattr(server, "started", False) and thread.is_alive():
        threading.Event().wait(0.02)
    if not thread.is_alive():
        opened.close()
        raise OSError(f"the review page could not start on {HOST}:{port}")

    def stop() -> None:
        server.should_exit = True  # type: ignore[attr-defined]
        thread.join()
        opened.close()

    return Running(url, port, stop)


def run(
    where: str | Path | None, *, port: int = 0, open_browser: bool = True, say: Callable[[str], None] = print
) -> None:
    """Serve ``where`` in the foreground until interrupted (Ctrl-C); say the URL, open the browser.

    Args:
        where: As ``--home``.
        port: The port, or 0 for a free one.
        open_browser: Open the URL in the default browser (:mod:`webbrowser`).
        say: Where the URL line goes (the CLI passes stderr).

    Raises:
        ConfigError: There is no Home there.
        OSError: The port cannot be bound.
    """
    opened = OpenedMemory.open(where)
    try:
        port = port or free_port()
        server, url = _server(opened, port)
        say(f"agent-memory: serving {opened.label} at {url}")
        say("agent-memory: only this address (with its token) opens the page; Ctrl-C stops it")
        if open_browser:
            import webbrowser

            threading.Timer(0.5, webbrowser.open, args=(url,)).start()
        server.run()  # type: ignore[attr-defined]
    finally:
        opened.close()
