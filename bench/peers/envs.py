"""Virtual environments of the peers, each installed from PyPI into a cache folder outside the repository.

A peer runs in its own venv, so its dependencies never meet ours: ``<cache>/<name>/venv``
with ``<cache>`` = ``$AGENT_MEMORY_BENCH_CACHE`` or ``~/.cache/agent-memory-bench/peers``.
A venv is made once, by :func:`ensure` with the Python the peer needs (3.12 for
basic-memory and memweave), and reused while the pinned version is the one installed.
Invariant: nothing here writes inside the repository.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(
    os.environ.get("AGENT_MEMORY_BENCH_CACHE", Path.home() / ".cache" / "agent-memory-bench" / "peers")
)


@dataclass(frozen=True)
class Peer:
    """A peer on PyPI: its name, the pinned version measured, and the Python it needs."""

    name: str
    version: str
    python: str = "3.12"

    @property
    def folder(self) -> Path:
        """Where its venv and scratch files live."""
        return CACHE / self.name

    @property
    def bin(self) -> Path:
        """The venv's ``bin`` folder."""
        return self.folder / "venv" / "bin"


def find_python(version: str) -> str | None:
    """Return a ``python<version>`` interpreter that runs (on PATH or under pyenv), or ``None``."""
    candidates = [shutil.which(f"python{version}") or ""]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}")))
    for candidate in candidates:
        if not candidate:
            continue
        done = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return candidate
    return None


def installed_version(peer: Peer) -> str | None:
    """Return the version of ``peer`` installed in its venv, or ``None``."""
    python = peer.bin / "python"
    if not python.exists():
        return None
    code = f"import importlib.metadata as m; print(m.version({peer.name!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def ensure(peer: Peer) -> str:
    """Make ``peer``'s venv and install its pinned version when absent; return the venv's Python.

    Installs take minutes (hundreds of MB); the output goes to ``install.log`` beside the venv.

    Raises:
        RuntimeError: No suitable Python, or ``pip install`` failed (the log's tail says why).
    """
    if installed_version(peer) == peer.version:
        return str(peer.bin / "python")
    python = find_python(peer.python)
    if python is None:
        raise RuntimeError(f"{peer.name} needs Python {peer.python}, which is not installed here")
    peer.folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(peer.folder / "venv", ignore_errors=True)
    log = peer.folder / "install.log"
    print(f"installing {peer.name}=={peer.version} into {peer.folder / 'venv'} (minutes)", flush=True)
    with log.open("w", encoding="utf-8") as sink:
        steps = [
            [python, "-m", "venv", str(peer.folder / "venv")],
            [str(peer.bin / "pip"), "install", "--quiet", f"{peer.name}=={peer.version}"],
        ]
        for step in steps:
            if subprocess.run(step, stdout=sink, stderr=subprocess.STDOUT, check=False).returncode != 0:
                tail = log.read_text(encoding="utf-8").strip().splitlines()[-1:]
                raise RuntimeError(f"installing {peer.name} failed: {' '.join(tail)[:200]}")
    return str(peer.bin / "python")
