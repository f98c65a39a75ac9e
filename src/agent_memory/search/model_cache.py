"""`open_session`: start an onnxruntime session from a saved, already optimised copy of its model.

Starting a session on MiniLM's int8 model spends most of its time in graph optimisation
(folding the weights' dequantisation into float32, fusing layer norms): about 0.15 s of the
0.2 s, which a ``recall`` in a fresh CLI process pays before it can embed the question (issue
24 item 3). onnxruntime can save the graph it optimised; this module keeps that copy under
the user's cache folder, and later sessions load it with nothing left to optimise, in about a
third of the time. The optimisation level is ``EXTENDED`` both ways (the copy is then portable
across CPUs) with one fusion left out, :data:`DISABLED_FUSIONS`: the copy's vectors are bit for
bit those of a session started from the source with the same options.

Layout: ``$XDG_CACHE_HOME/agent-memory/onnx/<key>/`` (``~/.cache`` by default) holding
``model.onnx`` (the graph), ``weights.bin`` (its float32 weights: ~90 MB for MiniLM) and
``manifest.json``. ``key`` names the source model's sha256 and hashes it with the
onnxruntime version and :data:`FORMAT`: another model, another onnxruntime or another layout
is another folder, and a new copy removes the older ones of the same model.

A cache must never change a result, so:

- A copy is written into a temporary folder and renamed into place whole: no reader sees
  half of one, and of two processes making one at once, one copy wins and the other is
  dropped.
- ``manifest.json`` records each file's size and sha256 as written, the weights file's
  change time, and a *probe*: the vector of a fixed text from the session that wrote the
  copy. A load checks the sizes and the graph's sha256, re-hashes the weights only when
  their change time moved (a 90 MB hash would cost what the copy saves), then embeds the
  probe with the new session and compares it bit for bit. Any failed check, or an error
  from onnxruntime, deletes the folder; the original model is loaded and copied again.
- A cache folder that cannot be written (read-only home, full disk) means no copy: the
  original model is loaded, as before.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_memory.stores.file_io import file_sha256, write_bytes_atomic

__all__ = ["DISABLED_FUSIONS", "FORMAT", "PROBE", "cache_root", "open_session"]

FORMAT = "agent-memory-onnx-copy/2"
"""The layout of a copy; part of its key, so a change of layout never reads an old copy."""
PROBE = "agent-memory checks a cached model with this sentence: the staging host is db-2."
"""The text whose vector must come out bit for bit the same from a copy as when it was made."""

DISABLED_FUSIONS = ("SkipLayerNormFusion",)
"""onnxruntime graph fusions a session of the source is started without (issue 21 item 5).

onnxruntime 1.32's CPU kernel for the fused residual add + layer norm took 329 ms of a
2,833 ms run embedding 400 LoCoMo turns on one thread, where the plain ``Add`` and
``LayerNormalization`` it replaces take about 75 (per-operator profile, session 19): without
the fusion MiniLM embeds with about 8% less CPU. The vectors differ from the fused graph's by
float rounding only (cosine at least 0.9999998 over 838 turns). Copy layout 2
(:data:`FORMAT`): a copy made with the fusion is never read again.
"""

_GRAPH, _WEIGHTS, _MANIFEST = "model.onnx", "weights.bin", "manifest.json"
_STALE_TEMP_SECONDS = 3600.0
_PROVIDERS = ["CPUExecutionProvider"]
_log = logging.getLogger(__name__)

Probe = Callable[[Any], bytes]
"""Embeds :data:`PROBE` with a session and returns the vector's bytes."""


def cache_root() -> Path:
    """Return ``$XDG_CACHE_HOME/agent-memory/onnx`` (``~/.cache/agent-memory/onnx`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-memory" / "onnx"


def open_session(
    ort: Any,
    model: Path,
    source_sha256: str,
    probe: Probe,
    *,
    verify_source: Callable[[], None] = lambda: None,
    threads: int | None = None,
) -> Any:
    """Return an onnxruntime session of ``model``, started from its saved optimised copy when one is valid.

    Args:
        ort: The imported ``onnxruntime`` module.
        model: The source ONNX file.
        source_sha256: The sha256 (hex) ``model`` must have: the copy's key.
        probe: Embeds :data:`PROBE` with a session (module docstring).
        verify_source: Called before the source itself is loaded (a valid copy was made
            from a verified source, so it is not read again); raises when it is not the
            pinned file.
        threads: onnxruntime intra-op threads (``None``: one per core).

    Raises:
        Exception: What ``verify_source`` raises, or what onnxruntime raises for a source
            model it cannot load (the caller words it); a broken copy is never an error,
            only a slower start.
    """
    try:
        folder = cache_root() / f"{source_sha256[:16]}-{_key(ort, source_sha256)}"
    except RuntimeError:  # no home folder (and no XDG_CACHE_HOME) to keep a copy in
        verify_source()
        return _source_session(ort, model, _options(ort, threads))
    if folder.is_dir():
        session = _load_copy(ort, folder, probe, threads)
        if session is not None:
            return session
    verify_source()
    return _load_source_and_copy(ort, model, folder, probe, threads)


def _key(ort: Any, source_sha256: str) -> str:
    return hashlib.sha256(f"{FORMAT} {source_sha256} {ort.__version__}".encode()).hexdigest()[:16]


def _source_session(ort: Any, model: Path, options: Any) -> Any:
    """Return a session of the source ``model``, optimised with ``options`` less :data:`DISABLED_FUSIONS`."""
    return ort.InferenceSession(
        str(model), sess_options=options, providers=_PROVIDERS, disabled_optimizers=list(DISABLED_FUSIONS)
    )


def _options(ort: Any, threads: int | None, level: str = "ORT_ENABLE_EXTENDED") -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    if threads:
        options.intra_op_num_threads = threads
    return options


def _load_copy(ort: Any, folder: Path, probe: Probe, threads: int | None) -> Any | None:
    """Return a session of the copy in ``folder`` if every check passes, else delete it and return None."""
    reason = "unreadable manifest"
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        weights = (folder / _WEIGHTS).stat()
        reason = "a file's size or sha256 differs from its manifest"
        sizes_ok = all((folder / name).stat().st_size == files[name]["size"] for name in (_GRAPH, _WEIGHTS))
        unchanged = weights.st_mtime_ns == files[_WEIGHTS]["mtime_ns"]
        if (
            sizes_ok
            and file_sha256(folder / _GRAPH) == files[_GRAPH]["sha256"]
            and (unchanged or file_sha256(folder / _WEIGHTS) == files[_WEIGHTS]["sha256"])
        ):
            if not unchanged:  # touched, not changed: note the new time so the next load need not hash
                files[_WEIGHTS]["mtime_ns"] = weights.st_mtime_ns
                write_bytes_atomic(folder / _MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
            reason = "onnxruntime cannot load it"
            options = _options(ort, threads, "ORT_DISABLE_ALL")
            session = ort.InferenceSession(str(folder / _GRAPH), sess_options=options, providers=_PROVIDERS)
            reason = "its probe vector differs"
            if probe(session) == base64.b64decode(manifest["probe"]):
                return session
    except Exception as exc:  # unreadable, malformed, or onnxruntime's own untyped errors: the copy is bad
        reason = f"{reason}: {exc}"
    _log.warning("the cached model copy in %s is not usable (%s): loading the original", folder, reason)
    shutil.rmtree(folder, ignore_errors=True)
    return None


def _load_source_and_copy(ort: Any, model: Path, folder: Path, probe: Probe, threads: int | None) -> Any:
    """Load ``model`` (optimised as a copy would be), saving the optimised graph into ``folder``."""
    temp: Path | None = folder.parent / f".tmp-{uuid.uuid4().hex}"
    try:
        _sweep(folder.parent)
        os.makedirs(str(temp))
    except OSError as exc:
        _log.info("no cached copy of the model (%s): %s", folder.parent, exc)
        temp = None
    if temp is not None:
        options = _options(ort, threads)
        options.optimized_model_filepath = str(temp / _GRAPH)
        external = "session.optimized_model_external_initializers"
        options.add_session_config_entry(f"{external}_file_name", _WEIGHTS)
        options.add_session_config_entry(f"{external}_min_size_in_bytes", "1024")
        try:
            session = _source_session(ort, model, options)
        except Exception:  # saving the copy failed (a full disk?): load without it; a bad model fails again
            shutil.rmtree(temp, ignore_errors=True)
            temp = None
    if temp is None:
        return _source_session(ort, model, _options(ort, threads))
    try:
        _publish(temp, folder, probe(session), ort)
    except OSError as exc:
        _log.info("the cached copy of the model could not be written (%s): %s", folder, exc)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return session


def _publish(temp: Path, folder: Path, probe_bytes: bytes, ort: Any) -> None:
    """Write the manifest of the copy in ``temp`` and rename it to ``folder``; drop older copies."""
    files = {}
    for name in (_GRAPH, _WEIGHTS):
        stat = (temp / name).stat()
        files[name] = {"size": stat.st_size, "sha256": file_sha256(temp / name), "mtime_ns": stat.st_mtime_ns}
    manifest = {
        "format": FORMAT,
        "onnxruntime": ort.__version__,
        "files": files,
        "probe": base64.b64encode(probe_bytes).decode("ascii"),
    }
    write_bytes_atomic(temp / _MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
    try:
        os.rename(temp, folder)
    except OSError:
        if not folder.is_dir():
            raise
        return  # another process published its copy first: keep that one
    prefix = folder.name.split("-", 1)[0] + "-"
    for other in folder.parent.iterdir():
        if other.name.startswith(prefix) and other != folder:
            shutil.rmtree(other, ignore_errors=True)  # the same model for an older onnxruntime or format


def _sweep(root: Path) -> None:
    """Remove temporary folders a killed process left (older than an hour)."""
    if not root.is_dir():
        return
    for entry in root.iterdir():
        try:
            if entry.name.startswith(".tmp-") and time.time() - entry.stat().st_mtime > _STALE_TEMP_SECONDS:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue
