import json
import tomllib

import pytest

from agent_memory.bindings.mcp_config import merge_json_server, merge_toml_server
from agent_memory.errors import ConfigError

ENTRY = {"command": "agent-memory", "args": ["serve", "--home", "/h", "--agent", "codex"]}


def test_json_keeps_every_other_key_and_server_and_sets_ours() -> None:
    existing = json.dumps(
        {"theme": "dark", "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}
    )
    merged = json.loads(merge_json_server(existing, ("mcpServers",), ENTRY, path="settings.json"))
    assert merged == {
        "theme": "dark",
        "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}, "agent-memory": ENTRY},
    }
    again = json.loads(merge_json_server(json.dumps(merged), ("mcpServers",), {"command": "x"}, path="s"))
    assert again["mcpServers"]["agent-memory"] == {"command": "x"} and len(again["mcpServers"]) == 2


def test_a_new_json_file_starts_with_its_given_keys_and_nested_containers() -> None:
    text = merge_json_server(None, ("mcp", "servers"), ENTRY, path="opencode.json", new_file={"$schema": "s"})
    assert json.loads(text) == {"$schema": "s", "mcp": {"servers": {"agent-memory": ENTRY}}}
    assert text.endswith("}\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {', r"^\.mcp\.json: not valid JSON \(line 1, column 17"),
        ("// comment\n{}", r"^\.mcp\.json: not valid JSON"),
        ("[1, 2]", r"^\.mcp\.json: the top level must be a JSON object"),
        ('{"mcpServers": []}', r"^\.mcp\.json: mcpServers: must be an object, not list"),
    ],
)
def test_json_that_cannot_be_merged_is_an_error_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_json_server(text, ("mcpServers",), ENTRY, path=".mcp.json")


def test_toml_is_appended_after_the_existing_settings_which_stay_byte_for_byte() -> None:
    existing = '# my codex settings\nmodel = "o4"\n\n[mcp_servers.git]\ncommand = "uvx"\n'
    merged = merge_toml_server(existing, ENTRY, path="config.toml")
    assert merged.startswith(existing + "\n[mcp_servers.agent-memory]\n")
    assert tomllib.loads(merged) == {
        "model": "o4",
        "mcp_servers": {"git": {"command": "uvx"}, "agent-memory": ENTRY},
    }


def test_toml_replaces_our_table_and_its_sub_tables_in_place() -> None:
    before = '[mcp_servers.agent-memory]\ncommand = "old"\n\n[mcp_servers.agent-memory.env]\nX = "1"\n\n'
    after = '[profile]\nname = "work"\n'
    merged = merge_toml_server(before + after, ENTRY, path="config.toml")
    assert merged.endswith("\n" + after) and "old" not in merged and "env" not in merged
    assert tomllib.loads(merged) == {"mcp_servers": {"agent-memory": ENTRY}, "profile": {"name": "work"}}
    assert merge_toml_server(merged, ENTRY, path="config.toml") == merged


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('model = "o4\n', r"^config\.toml: not valid TOML"),
        ("mcp_servers = 3\n", r"^config\.toml: mcp_servers: must be a table"),
        (
            'mcp_servers = { agent-memory = { command = "x" } }\n',
            "without its own \\[mcp_servers.agent-memory\\] header",
        ),
    ],
)
def test_toml_that_cannot_be_merged_is_an_error_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merge_toml_server(text, ENTRY, path="config.toml")


def test_a_toml_edit_that_would_change_other_settings_is_refused() -> None:
    # The header text inside a multi-line string is not a table: replacing it would change the string.
    text = 'notes = """\n[mcp_servers.agent-memory]\n"""\n'
    with pytest.raises(ConfigError, match="would change other settings; nothing written"):
        merge_toml_server(text, ENTRY, path="config.toml")


def test_a_quoted_table_name_is_recognised_as_ours() -> None:
    quoted = '[mcp_servers."agent-memory"]\ncommand = "old"\n[mcp_servers."agent-memory".env]\nA = "b"\n'
    assert tomllib.loads(merge_toml_server(quoted, ENTRY, path="c"))["mcp_servers"] == {"agent-memory": ENTRY}
