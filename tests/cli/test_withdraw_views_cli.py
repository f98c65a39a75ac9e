"""Through the installed command: withdraw, forget, erase and render with a view edited by hand.

A fresh user's report: with a hand edit in ``MEMORY.md``, ``withdraw`` and ``forget`` left the
withdrawn text in every view and ``render`` wrote no view at all. Withdrawal fails closed on
the views (DESIGN.md §4, §9), and render writes every view that is not edited by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from installed import Cli

from agent_memory.memory import Memory
from agent_memory.search.recipes import SearchSettings, splice_search

DARK = "User prefers dark mode in every editor."
TABS = "User prefers tabs over spaces."
TERSE = "User prefers terse answers without preamble."


def preferences_home(cli: Cli) -> tuple[Path, list[str]]:
    """A BM25-only Home with three preference records, rendered."""
    home = cli.home()
    toml = home / "memory.toml"
    toml.write_text(splice_search(toml.read_text("utf-8"), SearchSettings(("bm25",))), "utf-8")
    with Memory.open(home) as memory:
        ids = [
            memory.remember(text, type="preference", source="chat").record_id for text in (DARK, TABS, TERSE)
        ]
    cli.ok("render", "--home", str(home))
    return home, ids


def views(home: Path) -> str:
    files = [home / "MEMORY.md", home / "index.md", *sorted((home / "topics").glob("*.md"))]
    return "".join(path.read_text("utf-8") for path in files)


def test_withdraw_with_a_hand_edited_memory_md_takes_the_record_out_of_every_view(cli: Cli) -> None:
    home, (dark, tabs, _) = preferences_home(cli)
    with (home / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write("- my hand note\n")
    result = cli("withdraw", "--record", dark, "--reason", "private", "--home", str(home))
    assert result.returncode == 0 and result.stdout.startswith("memwd-")
    assert DARK not in views(home) and dark not in views(home)
    memory_md = (home / "MEMORY.md").read_text("utf-8")
    assert "- my hand note\n" in memory_md and tabs in memory_md
    assert "removed 1 line(s) showing withdrawn records from MEMORY.md" in result.stderr
    assert "re-rendered index.md, topics/preference.md" in result.stderr
    checked = cli("render", "--check", "--home", str(home), "--json")
    assert json.loads(checked.stdout)["written"] == ["MEMORY.md"]  # only the hand-edited view differs


def test_forget_with_a_hand_edited_view_says_what_it_did_to_it(cli: Cli) -> None:
    home, (_, tabs, _) = preferences_home(cli)
    with (home / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write("- my hand note\n")
    receipt = cli.ok("forget", "--record", tabs, "--home", str(home))
    assert TABS not in views(home) and tabs not in views(home)
    assert "- my hand note\n" in (home / "MEMORY.md").read_text("utf-8")
    (memory_line,) = [line for line in receipt.splitlines() if line.startswith("Memory:")]
    assert "views edited by hand (MEMORY.md)" in memory_line and "removed 1 line(s)" in memory_line


def test_erase_drops_withdrawn_lines_a_hand_edit_brought_back(cli: Cli) -> None:
    home, (dark, tabs, _) = preferences_home(cli)
    cli.ok("withdraw", "--record", dark, "--reason", "private", "--home", str(home))
    with (home / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write(f"- pasted: {DARK}\n- my hand note\n")
    erased = cli(
        "erase", tabs, "--reason", "asked", "--authority", "ada", "--yes", "--json", "--home", str(home)
    )
    assert erased.returncode == 0, erased.stderr
    text = views(home)
    assert DARK not in text and TABS not in text and "- my hand note\n" in text


def test_render_writes_every_view_but_the_hand_edited_one_and_names_it(cli: Cli) -> None:
    home, _ = preferences_home(cli)
    index = home / "index.md"
    with index.open("a", encoding="utf-8") as handle:
        handle.write("my index note\n")
    edited = index.read_bytes()
    with Memory.open(home) as memory:
        memory.remember("User prefers metric units.", type="preference", source="chat")
    result = cli("render", "--home", str(home))
    assert result.returncode == 0
    assert "wrote MEMORY.md, topics/preference.md" in result.stdout
    assert f"{index}: edited by hand: text after the digest footer; left as it is" in result.stderr
    assert index.read_bytes() == edited
    assert "User prefers metric units." in (home / "topics" / "preference.md").read_text("utf-8")
    as_json = json.loads(cli.ok("render", "--home", str(home), "--json"))
    assert as_json["kept"] == ["index.md"] and as_json["written"] == []
