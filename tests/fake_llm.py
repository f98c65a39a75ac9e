"""A small OpenAI-compatible chat server on 127.0.0.1 for the distill tests (a fake, not a mock).

``POST /v1/chat/completions`` answers with the next canned reply in a ``chat.completion``
object, or with an HTTP error; every request is kept (path, Authorization header, JSON body)
so tests can check what the official ``openai`` client sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | int | Callable[[dict[str, Any]], str]
"""Message content, an HTTP status to fail with, or a function of the request body giving content."""


@dataclass
class FakeLLM:
    """The server's state: queued replies and the requests seen."""

    port: int = 0
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def lines_sent(self, index: int = -1) -> list[dict[str, Any]]:
        """The ``lines`` of the user message of request ``index``."""
        messages = self.requests[index]["body"]["messages"]
        lines: list[dict[str, Any]] = json.loads(messages[-1]["content"])["lines"]
        return lines


def _handler(state: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(size) or b"{}")
            state.requests.append(
                {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body}
            )
            reply = state.replies.pop(0) if state.replies else 500
            if isinstance(reply, int):
                self._send(reply, {"error": {"message": "canned failure", "type": "server_error"}})
                return
            content = reply(body) if callable(reply) else reply
            self._send(
                200,
                {
                    "id": f"chatcmpl-{len(state.requests)}",
                    "object": "chat.completion",
                    "created": 1_764_000_000,
                    "model": body.get("model", "?"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """Run the server on a free port of 127.0.0.1 for the duration of the ``with`` block."""
    state = FakeLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def items_reply(*items: dict[str, Any]) -> str:
    """A well-formed reply holding ``items``."""
    return json.dumps({"items": list(items)})


def echo_reply(body: dict[str, Any]) -> str:
    """A good reply built from the request: one item per line sent, its text unchanged."""
    lines = json.loads(body["messages"][-1]["content"])["lines"]
    return items_reply(*({"anchor": line["anchor"], "text": line["text"], "type": "fact"} for line in lines))


def llm_table(url: str, *, api_key_env: str = "AGENT_MEMORY_TEST_LLM_KEY", **more: Any) -> str:
    """A ``[llm]`` table for ``memory.toml`` pointing at ``url`` (no retries: failures are quick)."""
    lines = [
        "[llm]",
        f'base_url = "{url}"',
        'model = "fake-distiller"',
        f'api_key_env = "{api_key_env}"',
        "max_retries = 0",
        "timeout_seconds = 10",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in more.items()]
    return "\n" + "\n".join(lines) + "\n"
