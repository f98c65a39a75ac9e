"""Fixtures of the review page tests: a filled Home (:mod:`uikit`), copied for each test."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from uikit import Filled, fill


@pytest.fixture(scope="session")
def filled_once(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """One filled Home, made once (each command takes a second or more on a busy machine)."""
    return fill(tmp_path_factory.mktemp("filled"))


@pytest.fixture
def filled(filled_once: Filled, tmp_path: Path) -> Filled:
    """A copy of the filled Home for one test (its key file is shared: only read)."""
    root = tmp_path / "home"
    shutil.copytree(filled_once.root, root, symlinks=True)
    return replace(filled_once, root=root)
