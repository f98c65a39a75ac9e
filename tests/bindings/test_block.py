import pytest

from agent_memory.bindings import BEGIN, END, render_block, upsert_block
from agent_memory.errors import ConfigError


def test_the_block_does_the_five_things_of_the_hot_entry() -> None:
    block = render_block("memory", mcp=True)
    assert block.startswith(BEGIN + "\n") and block.endswith(END + "\n")
    # 1 identity and hard rules, 2 memory root, 3 when to read, 4 when to write, 5 withdrawal routing
    assert "Identity and hard rules: follow `memory/conventions.md`" in block
    assert "Memory root: `memory`" in block
    assert "Read memory when:" in block and 'agent-memory recall "QUERY" --home memory' in block
    assert "Write memory when:" in block and "--source REF --home memory" in block
    assert "Withdraw memory influence when" in block and "resolved before any retrieval" in block
    assert "`agent-memory forget --record ID --home memory`" in block and "Irreversible erasure" in block
    assert "the `recall` tool of the `agent-memory` MCP server" in block and "the `forget` tool" in block


def test_without_mcp_the_block_names_only_the_command_line_and_quotes_odd_paths() -> None:
    block = render_block("/srv/team memory", mcp=False)
    assert "MCP" not in block and "`recall` tool" not in block
    assert "--home '/srv/team memory'" in block and "Memory root: `/srv/team memory`" in block


def test_a_block_is_appended_after_the_existing_text_which_stays_as_it_was() -> None:
    existing = "# Project rules\n\nUse tabs.\n"
    updated = upsert_block(existing, render_block("memory", mcp=True), path="CLAUDE.md")
    assert updated.startswith(existing + "\n") and updated.count(BEGIN) == 1
    assert upsert_block(None, "B\n", path="x") == "B\n"
    assert upsert_block("no newline", "B\n", path="x") == "no newline\n\nB\n"


def test_binding_again_replaces_the_block_in_place_and_nothing_else() -> None:
    head, tail = "# Rules\n\nBefore.\n\n", "\n## After\n\nKeep me.\n"
    once = upsert_block(
        head + render_block("old-root", mcp=True) + tail, render_block("memory", mcp=True), path="x"
    )
    assert once == head + render_block("memory", mcp=True) + tail
    assert upsert_block(once, render_block("memory", mcp=True), path="x") == once
    assert "old-root" not in once and once.count(BEGIN) == once.count(END) == 1


@pytest.mark.parametrize(
    "text",
    [
        f"{BEGIN}\nno end\n",
        f"{END}\n{BEGIN}\n",
        f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
    ],
)
def test_stray_or_doubled_markers_are_an_error_naming_the_file(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^AGENTS.md: holds \d '<!-- agent-memory:begin -->'") as caught:
        upsert_block(text, render_block("memory", mcp=False), path="AGENTS.md")
    assert caught.value.hint and "stray markers" in caught.value.hint
