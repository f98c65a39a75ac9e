import subprocess
import sys

import pytest

import agent_memory


def test_every_exported_name_resolves_to_an_object_defined_in_the_package() -> None:
    for name in agent_memory.__all__:
        value = getattr(agent_memory, name)
        module = getattr(value, "__module__", None) or "agent_memory"
        if isinstance(value, frozenset | str):  # constants carry no __module__ of their own
            continue
        assert module.startswith("agent_memory"), (name, module)


def test_the_public_names_are_the_documented_set() -> None:
    assert {"Memory", "MemoryRecord", "MemoryFile", "Home", "AgentMemoryError", "FORMAT_VERSION"} <= set(
        agent_memory.__all__
    )
    assert agent_memory.FORMAT_VERSION == "fg-agent-memory/0.1"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        agent_memory.no_such_name  # noqa: B018


def test_all_lists_exactly_the_lazily_exported_names() -> None:
    assert sorted(agent_memory.__all__) == sorted(agent_memory._EXPORTS)


def test_importing_the_package_and_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, agent_memory, agent_memory.cli; "
        "heavy = [m for m in ('yaml', 'numpy', 'cryptography', 'psycopg', 'onnxruntime', 'mcp', 'rich', "
        "'agent_memory.records.record', 'agent_memory.memory') if m in sys.modules]; print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
