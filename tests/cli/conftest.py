"""The ``cli`` fixture: the installed command in the test's own folder and config folder."""

from pathlib import Path

import pytest
from installed import Cli, make_cli

from pg import postgres_cluster, postgres_schema  # noqa: F401 - fixtures for the migrate tests


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return make_cli(tmp_path)
