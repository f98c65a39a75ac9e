"""The optimised copy of MiniLM's model: used when valid, never a different vector, refused when broken."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent_memory.search import model_cache
from agent_memory.search.embedders import MiniLMEmbedder
from agent_memory.stores.file_io import file_sha256

TEXTS = ["which host runs staging", "The staging host is db-2 in Frankfurt.", "Ship it on Friday."]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    """The vectors of the original model, loaded with no cache folder it could write."""
    blocked = tmp_path_factory.mktemp("blocked") / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(blocked))
        try:
            embedder = MiniLMEmbedder()
        except ImportError as exc:
            pytest.skip(f"the embeddings extra is not installed: {exc}")
        vectors = embedder.embed(TEXTS)
    assert list(blocked.parent.iterdir()) == [blocked]  # nothing was cached
    return vectors


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "agent-memory" / "onnx"


def copies(cache: Path) -> list[Path]:
    return sorted(cache.iterdir()) if cache.is_dir() else []


def test_the_first_load_makes_a_copy_and_the_next_loads_it_with_the_same_vectors(
    cache: Path, reference: np.ndarray
) -> None:
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    (copy,) = copies(cache)
    assert sorted(p.name for p in copy.iterdir()) == ["manifest.json", "model.onnx", "weights.bin"]
    made = copy.stat().st_mtime_ns
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert copies(cache) == [copy] and copy.stat().st_mtime_ns == made  # read, not made again


def _copy(cache: Path) -> Path:
    MiniLMEmbedder().load()
    (copy,) = copies(cache)
    return copy


def test_a_weights_file_changed_on_disk_is_refused_and_made_again(
    cache: Path, reference: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    weights = _copy(cache) / "weights.bin"
    with weights.open("r+b") as handle:  # same size, other bytes, a new change time
        handle.seek(weights.stat().st_size // 2)
        handle.write(b"\xff" * 4096)
    with caplog.at_level(logging.WARNING, logger="agent_memory.search.model_cache"):
        assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert "not usable" in caplog.text and "sha256" in caplog.text
    (copy,) = copies(cache)
    assert file_sha256(copy / "weights.bin") == _manifest(copy)["files"]["weights.bin"]["sha256"]


def _manifest(copy: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    return data


def test_a_truncated_copy_is_refused(cache: Path, reference: np.ndarray) -> None:
    weights = _copy(cache) / "weights.bin"
    stat = weights.stat()
    with weights.open("r+b") as handle:
        handle.truncate(stat.st_size // 3)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with its old change time
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    (copy,) = copies(cache)
    assert (copy / "weights.bin").stat().st_size == stat.st_size


def test_a_copy_whose_probe_vector_differs_is_refused(
    cache: Path, reference: np.ndarray, caplog: pytest.LogCaptureFixture
) -> None:
    copy = _copy(cache)
    manifest = _manifest(copy)
    manifest["probe"] = "AAAA"  # as if the copy computed another vector than the model it came from
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="agent_memory.search.model_cache"):
        assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert "probe vector differs" in caplog.text
    assert _manifest(copies(cache)[0])["probe"] != "AAAA"


def test_a_damaged_manifest_or_graph_is_refused(cache: Path, reference: np.ndarray) -> None:
    copy = _copy(cache)
    (copy / "model.onnx").write_bytes(b"not a model")
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    (copy / "manifest.json").write_text("{", encoding="utf-8")
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert len(copies(cache)) == 1


def test_a_new_copy_replaces_those_of_another_onnxruntime_and_stale_temporary_folders(
    cache: Path, reference: np.ndarray
) -> None:
    copy = _copy(cache)
    older = cache / (copy.name.split("-", 1)[0] + "-0000000000000000")
    older.mkdir()
    other_model = cache / "0123456789abcdef-0000000000000000"
    other_model.mkdir()
    leftover = cache / ".tmp-killed"
    leftover.mkdir()
    os.utime(leftover, (0, 0))
    for path in (copy / "manifest.json", copy / "weights.bin"):
        path.unlink()  # force a new copy
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert copies(cache) == sorted([other_model, copy])


def test_processes_making_the_copy_at_once_leave_one_copy_and_no_temporary_folder(cache: Path) -> None:
    probe = "from agent_memory.search.embedders import MiniLMEmbedder as M; print(M().embed(['q'])[0][:4])"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent.parent)}
    command = [sys.executable, "-c", probe]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, env=env) for _ in range(3)]
    outputs = {run.communicate(timeout=300)[0] for run in runs}
    assert all(run.returncode == 0 for run in runs) and len(outputs) == 1
    assert [p.name.startswith(".tmp-") for p in copies(cache)] == [False]


def test_a_cache_folder_that_cannot_be_written_only_costs_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()


def test_a_weights_file_touched_but_unchanged_is_used_and_hashed_only_once(
    cache: Path, reference: np.ndarray
) -> None:
    copy = _copy(cache)
    weights = copy / "weights.bin"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()
    assert copies(cache) == [copy]  # the same copy, not made again
    recorded = _manifest(copy)["files"]
    assert isinstance(recorded, dict) and recorded["weights.bin"]["mtime_ns"] == weights.stat().st_mtime_ns


def test_without_a_home_folder_the_original_model_is_loaded(
    monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(model_cache, "cache_root", no_home)
    assert (MiniLMEmbedder().embed(TEXTS) == reference).all()


def test_the_copy_leaves_the_slow_fused_layer_norm_out_and_keeps_the_vectors_close_to_it(
    cache: Path, reference: np.ndarray
) -> None:
    """DISABLED_FUSIONS: no SkipLayerNormalization node in the graph, vectors within float rounding."""
    graph = (_copy(cache) / "model.onnx").read_bytes()
    assert b"SkipLayerNormalization" not in graph and b"LayerNormalization" in graph
    ort = pytest.importorskip("onnxruntime")
    embedder = MiniLMEmbedder()
    options = model_cache._options(ort, 1)
    fused = ort.InferenceSession(
        str(embedder._model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    with_fusion = np.stack([embedder._run([_ids(embedder, text)], fused)[0] for text in TEXTS])
    # Vectors stored by a version with the fusion stay comparable with the new ones.
    assert ((with_fusion * reference).sum(axis=1) > 0.99999).all()


def _ids(embedder: MiniLMEmbedder, text: str) -> list[int]:
    embedder.load()
    assert embedder._tokenizer is not None
    return list(embedder._tokenizer.encode(text).ids)
