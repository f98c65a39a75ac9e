"""Fixtures for governance: the porcelain's ``memory`` fixture (in-memory, Home, SQLite) and its clock."""

from memory.conftest import _config_home, memory  # noqa: F401 - fixtures shared with tests/memory
