"""The embedders: literal hash vectors (seed 001), MiniLM offline, and the OpenAI-compatible adapter."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from agent_memory.search import embedders
from agent_memory.search.base import Embedder
from agent_memory.search.embedders import (
    EmbeddingError,
    HashEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    default_embedder,
)

# ---------------------------------------------------------------------- HashEmbedder (seed 001)
# sha256("hello") = 2cf24dba5f…: bucket 0x2cf24dba, byte 4 = 0x5f (odd, so −1).
# sha256("world") = 486ea46224…: bucket 0x486ea462, byte 4 = 0x24 (even, so +1).
# sha256("cat")   = 77af778b51…: bucket 0x77af778b, byte 4 = 0x51 (odd, so −1).


def test_a_single_token_sets_one_bucket_to_plus_or_minus_one() -> None:
    vector = HashEmbedder().embed(["hello"])[0]
    expected = np.zeros(256, dtype=np.float32)
    expected[186] = -1.0  # 0x2cf24dba mod 256 = 0xba
    assert np.array_equal(vector, expected)


def test_repeated_tokens_add_up_before_the_vector_is_normalised() -> None:
    vector = HashEmbedder().embed(["Hello, hello WORLD!"])[0]
    expected = np.zeros(256, dtype=np.float32)
    expected[186] = -2 / math.sqrt(5)
    expected[98] = 1 / math.sqrt(5)  # 0x486ea462 mod 256 = 0x62
    assert np.allclose(vector, expected, atol=1e-7)
    assert np.count_nonzero(vector) == 2


def test_the_bucket_is_the_whole_big_endian_prefix_modulo_the_dimensions() -> None:
    vectors = HashEmbedder(dimensions=7).embed(["hello", "world", "cat"])
    expected = np.array(
        [
            [-1, 0, 0, 0, 0, 0, 0],  # 754077114 mod 7 = 0
            [0, 0, 0, 1, 0, 0, 0],  # 1215210594 mod 7 = 3
            [0, 0, 0, 0, 0, 0, -1],  # 2008020875 mod 7 = 6
        ],
        dtype=np.float32,
    )
    assert np.array_equal(vectors, expected)


def test_text_without_ascii_letters_or_digits_gives_the_zero_vector() -> None:
    vectors = HashEmbedder().embed(["", "   ", "!?-", "日本語", "ÿ"])
    assert not vectors.any()


def test_case_and_punctuation_do_not_change_a_hash_vector() -> None:
    a, b = HashEmbedder().embed(["Staging-DB: port 5432", "staging db port 5432"])
    assert np.array_equal(a, b)


def test_hash_vectors_are_float32_rows_of_unit_norm() -> None:
    embedder = HashEmbedder(dimensions=64)
    vectors = embedder.embed(["one two three", "four", "five six"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert embedder.embed([]).shape == (0, 64)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.version, embedder.dimensions) == ("hash", "sha256-sign/1", 64)


def _hash_vector_by_the_rule(text: str, dimensions: int) -> np.ndarray:
    """The seed-001 rule written out token by token, with no cache (the reference)."""
    out = np.zeros(dimensions, dtype=np.float64)
    for token in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        out[int.from_bytes(digest[:4], "big") % dimensions] += 1.0 if digest[4] % 2 == 0 else -1.0
    return embedders.normalise_rows(out[None, :])[0]


def test_hash_vectors_are_the_rule_bit_for_bit_however_the_token_cache_is_filled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [f"note {i}: the {i % 7} staging db on port {5400 + i % 13} moved {i} times" for i in range(60)]
    texts += ["", "word word word", "Ünïcode and ascii 42"]
    monkeypatch.setattr(embedders, "_CACHE_TOKENS", 5)  # the cache is emptied many times
    embedder = HashEmbedder(dimensions=97)
    for batch in (texts, texts[::-1], texts[:1]):
        got = embedder.embed(batch)
        expected = np.stack([_hash_vector_by_the_rule(text, 97) for text in batch])
        assert np.array_equal(got, expected)
    assert len(embedder._buckets) <= 5


def test_hash_dimensions_must_be_positive() -> None:
    with pytest.raises(ValueError, match="dimensions"):
        HashEmbedder(dimensions=0)


# ---------------------------------------------------------------------- MiniLM


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """One loaded model for the whole session (about a second to load)."""
    try:
        embedder = MiniLMEmbedder()
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the dev extra, which includes the embeddings extra: {exc}")
        pytest.skip(f"the embeddings extra is not installed: {exc}")
    embedder.load()
    return embedder


def test_minilm_gives_float32_unit_vectors_of_384_dimensions(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["The staging database listens on port 5432.", "Ship it on Friday.", "ok"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dimensions == 384
    assert minilm.version == "onnx-int8-8199be6f/256"


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    anchor, paraphrase, unrelated = minilm.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly revenue grew by four percent.",
        ]
    )
    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.3


def test_a_text_gets_the_same_vector_alone_or_in_any_batch(minilm: MiniLMEmbedder) -> None:
    short = "Melanie painted a sunrise last year."
    long = "Caroline went to the support group and said it was powerful. " * 12
    alone = minilm.embed([short])[0]
    batched = minilm.embed([long, short, "hi"])[1]
    assert np.allclose(alone, batched, atol=1e-6)


def test_batches_run_side_by_side_give_the_vectors_of_batches_run_in_turn(minilm: MiniLMEmbedder) -> None:
    texts = [f"Note {i}: " + "the garden fence needs paint " * (i % 7) for i in range(23)] + ["", "  "]
    paths = {"model_path": minilm._model_path, "tokenizer_path": minilm._tokenizer_path}
    in_turn = MiniLMEmbedder(batch_size=4, workers=1, **paths)
    side_by_side = MiniLMEmbedder(batch_size=4, workers=3, **paths)
    two_threads_each = MiniLMEmbedder(batch_size=4, workers=1, threads=2, **paths)
    expected = in_turn.embed(texts)
    assert (side_by_side.embed(texts) == expected).all()
    assert np.allclose(two_threads_each.embed(texts), expected, atol=1e-6)
    assert not expected[-2:].any() and expected[:-2].any(axis=1).all()


def test_runs_hold_at_most_their_token_budget_and_a_longer_text_runs_alone(minilm: MiniLMEmbedder) -> None:
    paths = {"model_path": minilm._model_path, "tokenizer_path": minilm._tokenizer_path}
    embedder = MiniLMEmbedder(batch_size=5, batch_tokens=40, **paths)
    lengths = [3, 12, 7, 7, 50, 2, 9, 9, 9, 9, 9, 9, 41, 1]
    batches = embedder._batches([[1] * n for n in lengths])
    assert sorted(j for batch in batches for j in batch) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[j] for j in batch)
        assert len(batch) <= 5
        assert len(batch) * longest <= 40 or len(batch) == 1  # 50 and 41 tokens: alone
        assert [lengths[j] for j in batch] == sorted(lengths[j] for j in batch)
    assert [lengths[j] for j in batches[-1]] == [50] and [lengths[j] for j in batches[-2]] == [41]


def test_a_text_gets_the_same_vector_whatever_the_token_budget(minilm: MiniLMEmbedder) -> None:
    # A budget of one token runs every text alone; the default packs several per run.
    texts = [f"Turn {i}: " + "we talked about the trip to the lake " * (i % 9) for i in range(30)] + [""]
    paths = {"model_path": minilm._model_path, "tokenizer_path": minilm._tokenizer_path}
    alone = MiniLMEmbedder(batch_tokens=1, **paths)
    assert len(alone._batches([[1, 2]] * 4)) == 4
    assert (alone.embed(texts) == minilm.embed(texts)).all()


def test_minilm_truncates_long_text_and_zeroes_blank_text(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["word " * 2000, "", "  \n"])
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)
    assert not vectors[1:].any()


def test_minilm_without_its_packages_raises_import_error_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedders, "_MODEL_FILE", ("agent-memory-absent-model", "model.onnx"))
    with pytest.raises(
        ImportError, match=r"agent-memory-absent-model.*pip install 'agent-memory\[embeddings\]'"
    ):
        MiniLMEmbedder()


def test_the_default_embedder_is_none_and_says_so_without_the_extra(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(embedders, "_MODEL_FILE", ("agent-memory-absent-model", "model.onnx"))
    with caplog.at_level(logging.WARNING, logger="agent_memory.search"):
        assert default_embedder() is None
    assert "BM25 alone" in caplog.text and "agent-memory[embeddings]" in caplog.text


def test_the_default_embedder_is_minilm_when_the_extra_is_installed(minilm: MiniLMEmbedder) -> None:
    assert isinstance(default_embedder(), MiniLMEmbedder)


def test_minilm_loads_its_model_on_the_first_embed_not_when_made(minilm: MiniLMEmbedder) -> None:
    made = MiniLMEmbedder(model_path=minilm._model_path, tokenizer_path=minilm._tokenizer_path)
    assert not made.loaded  # a vector index over it is "cold": writes leave it to the next query
    made.embed(["a question"])
    assert made.loaded


def test_custom_model_files_get_a_version_from_their_contents(minilm: MiniLMEmbedder) -> None:
    custom = MiniLMEmbedder(model_path=minilm._model_path, tokenizer_path=minilm._tokenizer_path)
    assert re.fullmatch(r"onnx-int8-[0-9a-f]{8}/256", custom.version)
    assert custom.version != minilm.version
    assert np.allclose(custom.embed(["same model"]), minilm.embed(["same model"]))


def test_a_missing_custom_model_file_is_an_embedding_error(tmp_path: Any, minilm: MiniLMEmbedder) -> None:
    with pytest.raises(EmbeddingError, match="no such file"):
        MiniLMEmbedder(model_path=tmp_path / "absent.onnx")


# ---------------------------------------------------------------------- OpenAI-compatible endpoint

API_KEY = "sk-test-0123456789"


@dataclass
class FakeServer:
    """A real HTTP server on 127.0.0.1 answering like an embeddings endpoint."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def canned_vector(text: str) -> list[float]:
    """[len(text), 1, 0, 0]: recognisable after normalisation, and not unit length as sent."""
    return [float(len(text)), 1.0, 0.0, 0.0]


class Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.fake.requests.append(
            {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body}
        )
        if self.path == "/fail/v1/embeddings":
            self.reply(500, f'{{"error": "upstream broke for key {API_KEY}"}}'.encode())
        elif self.path == "/garbage/v1/embeddings":
            self.reply(200, b"<html>not json</html>")
        elif self.path == "/short/v1/embeddings":
            self.reply(200, json.dumps({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0, 0.0]}]}).encode())
        else:
            # Reversed on purpose: the client must order by "index".
            data = [{"index": i, "embedding": canned_vector(t)} for i, t in enumerate(body["input"])]
            self.reply(200, json.dumps({"object": "list", "data": data[::-1]}).encode())

    def reply(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def running_server() -> Iterator[FakeServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = FakeServer(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def server(running_server: FakeServer) -> FakeServer:
    running_server.requests.clear()
    return running_server


def test_openai_vectors_come_back_normalised_in_input_order(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url + "/v1", "tiny-embed", api_key=API_KEY, dimensions=4)
    vectors = embedder.embed(["abc", "a"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 4)
    assert np.allclose(vectors[0], np.array([3, 1, 0, 0]) / math.sqrt(10))
    assert np.allclose(vectors[1], np.array([1, 1, 0, 0]) / math.sqrt(2))
    (request,) = server.requests
    assert request["path"] == "/v1/embeddings"
    assert request["authorization"] == f"Bearer {API_KEY}"
    assert request["body"] == {
        "model": "tiny-embed",
        "input": ["abc", "a"],
        "encoding_format": "float",
        "dimensions": 4,
    }


def test_openai_texts_go_in_batches_and_blank_texts_are_not_sent(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url, "tiny-embed", dimensions=4, batch_size=2)
    vectors = embedder.embed(["a", " ", "bb", "ccc", "", "dddd"])
    assert [r["body"]["input"] for r in server.requests] == [["a", "bb"], ["ccc", "dddd"]]
    assert not vectors[[1, 4]].any()
    assert np.allclose(np.linalg.norm(vectors[[0, 2, 3, 5]], axis=1), 1.0)
    assert all(r["authorization"] is None for r in server.requests)


def test_openai_dimensions_are_asked_of_the_server_once_when_not_configured(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url + "/v1/", "tiny-embed")
    assert embedder.dimensions == 4
    assert embedder.embed(["x"]).shape == (1, 4)
    assert len(server.requests) == 2
    assert "dimensions" not in server.requests[0]["body"]
    assert (embedder.name, embedder.version) == ("tiny-embed", server.url + "/v1/embeddings")


def test_openai_dimensions_are_learnt_from_the_first_reply_without_a_probe(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url, "tiny-embed")
    assert embedder.embed(["x", "yy"]).shape == (2, 4)
    assert embedder.dimensions == 4
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("https://api.example.com/v1", "https://api.example.com/v1/embeddings"),
        ("https://api.example.com/v1/", "https://api.example.com/v1/embeddings"),
        ("https://api.example.com", "https://api.example.com/v1/embeddings"),
        ("http://localhost:8080/openai/v1", "http://localhost:8080/openai/v1/embeddings"),
        ("http://localhost:8080/v1/embeddings", "http://localhost:8080/v1/embeddings"),
    ],
)
def test_the_endpoint_url_is_derived_from_the_base_url(base_url: str, endpoint: str) -> None:
    assert OpenAIEmbedder(base_url, "m").url == endpoint


def test_a_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAIEmbedder("file:///etc/passwd", "m")


def test_an_http_error_names_the_url_and_status_but_never_the_api_key(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url + "/fail/v1", "m", api_key=API_KEY, dimensions=4)
    with pytest.raises(EmbeddingError, match="HTTP 500") as caught:
        embedder.embed(["x"])
    assert caught.value.path == server.url + "/fail/v1/embeddings"
    assert server.url in str(caught.value) and API_KEY not in str(caught.value)
    assert API_KEY not in repr(embedder)


def test_a_reply_that_is_not_json_names_the_url(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url + "/garbage/v1", "m", dimensions=4)
    with pytest.raises(EmbeddingError, match="not an embeddings response") as caught:
        embedder.embed(["x"])
    assert server.url in str(caught.value)


def test_a_reply_with_the_wrong_number_of_vectors_is_refused(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url + "/short/v1", "m", dimensions=4)
    with pytest.raises(EmbeddingError, match="expected 2 finite vectors"):
        embedder.embed(["x", "y"])


def test_a_reply_of_the_wrong_length_is_refused(server: FakeServer) -> None:
    embedder = OpenAIEmbedder(server.url, "m", dimensions=8)
    with pytest.raises(EmbeddingError, match="length 4, expected 8"):
        embedder.embed(["x"])


def test_a_server_that_never_answers_times_out_with_the_url() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # accepted by the kernel, never answered
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        embedder = OpenAIEmbedder(url, "m", api_key=API_KEY, dimensions=4, timeout=0.2)
        with pytest.raises(EmbeddingError, match=r"request failed: .*timed out") as caught:
            embedder.embed(["x"])
    assert url in str(caught.value) and API_KEY not in str(caught.value)


def test_a_refused_connection_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound but not listening: connections are refused
        embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}", "m", dimensions=4, timeout=2)
        with pytest.raises(
            EmbeddingError, match=re.escape(f"127.0.0.1:{port}/v1/embeddings: request failed")
        ):
            embedder.embed(["x"])


def test_off_topic_questions_find_nothing_with_the_built_in_minilm_recipe(minilm: MiniLMEmbedder) -> None:
    from agent_memory.records.record import MemoryRecord, Provenance
    from agent_memory.search.recipes import BUILTIN_RECIPES
    from agent_memory.search.vectors import VectorIndex, scoring_options

    turns = [
        "I repotted the spider plant and gave cuttings to my neighbour.",
        "The tomato seedlings need more sun on the balcony.",
        "I water the herb garden every morning before work.",
    ]
    records = [
        MemoryRecord.create(
            type="episode",
            body=text,
            provenance=Provenance(kind="import", ref=f"chat.json#s1/{i}"),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        for i, text in enumerate(turns)
    ]
    with VectorIndex(
        ":memory:", minilm, **scoring_options(BUILTIN_RECIPES["vectors-minilm"].options)
    ) as index:
        index.index(records)
        assert index.thread_weight > 0
        assert index.query("What is the capital of Peru's neighbouring country's currency?", k=5) == []
        assert index.query("quantum chromodynamics lattice simulation", k=5) == []
        assert records[0].id in [h.record_id for h in index.query("spider plant cuttings", k=5)]
