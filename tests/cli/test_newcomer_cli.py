"""The rough edges a newcomer met in the first hour, as the installed command prints them (issue 24).

Each test names one case of the issue: the words for the two axes (item 6) and the small
ones of item 7.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from installed import Cli


def _home(cli: Cli) -> tuple[Path, tuple[str, str]]:
    home = cli.home()
    return home, ("--home", str(home))


def test_status_of_a_file_says_it_is_a_file_not_an_errno(cli: Cli) -> None:
    (cli.root / "notes.txt").write_text("not a Home", encoding="utf-8")
    result = cli("status", "--home", str(cli.root / "notes.txt"))
    assert result.returncode == 3
    first, hint = result.stderr.splitlines()
    assert first == f"agent-memory: error: {cli.root / 'notes.txt'}: is a file, not a Home folder"
    assert "Errno" not in result.stderr and hint.startswith("hint: pass --home the folder of a Home")


def test_status_prints_counts_as_words_with_both_axes(cli: Cli) -> None:
    _, h = _home(cli)
    cli.ok("remember", "Deploy with make ship.", "--type", "procedure", *h)
    cli.ok("remember", "Staging runs on db-3.", "--kind", "state", "--subject", "host:staging", *h)
    out = cli.ok("status", *h)
    assert "{" not in out and "'" not in out
    assert "records      2: 2 active\n" in out
    assert "types        1 fact, 1 procedure  (--type: what a record is)\n" in out
    assert "kinds        1 knowledge, 1 state  (--kind: state by subject, knowledge adds up)\n" in out


def test_a_procedure_lists_as_a_procedure_and_columns_stay_aligned_when_withdrawn(cli: Cli) -> None:
    _, h = _home(cli)
    how = cli.ok("remember", "Deploy with make ship", "--type", "procedure", *h).strip()
    cli.ok("remember", "Staging runs on db-3.", "--kind", "state", "--subject", "host:staging", *h)
    cli.ok("withdraw", "--record", how, "--reason", "wrong ticket", *h)
    lines = cli.ok("list", *h).splitlines()
    assert len(lines) == 2
    by_id = {line.split()[0]: line.split()[1:4] for line in lines}
    assert by_id[how] == ["active/withdrawn", "procedure", "knowledge"]
    # Every column starts at the same place on every row.
    assert len({re.search(r"  \d{4}-\d\d-\d\d  ", line).start() for line in lines}) == 1  # type: ignore[union-attr]
    assert (
        len({line.index(" knowledge") if "knowledge" in line else line.index(" state:") for line in lines})
        == 1
    )
    recalled = cli.ok("recall", "staging db-3", *h)
    assert "fact state/active" in recalled and "(state host:staging)" in recalled


def test_memory_md_keeps_a_body_apart_from_its_source_and_names_the_type(cli: Cli) -> None:
    home, h = _home(cli)
    cli.ok("remember", "We ship on Fridays", "--source", "standup", *h)
    cli.ok("remember", "Deploy with make ship.", "--type", "procedure", "--source", "wiki", *h)
    out = cli.ok("render", *h)
    assert "MEMORY.md: 2 records whose bodies use 9 of the 1000-token budget (4 characters a token" in out
    text = (home / "MEMORY.md").read_text(encoding="utf-8")
    assert "(knowledge) We ship on Fridays — Source: standup. · mem:" in text
    assert "(knowledge, procedure) Deploy with make ship. Source: wiki. · mem:" in text


def test_review_hints_decline_and_accept_says_one_version(cli: Cli) -> None:
    _, h = _home(cli)
    cli.ok("capture", "We ship on Fridays", "--source", "standup", *h)
    cli.ok("archive-inbox", *h)
    cli.ok("distill", *h)
    review = cli.ok("review", *h)
    assert "accept ID or decline ID" in review and "reject ID" not in review
    accepted = cli.ok("accept", "--all", *h)
    assert "wrote 1 version: mem:" in accepted and "1 versions" not in accepted


def test_recall_names_the_flag_that_shows_superseded_records(cli: Cli) -> None:
    _, h = _home(cli)
    cli.ok("remember", "Staging runs on db-3.", "--kind", "state", "--subject", "host:staging", *h)
    cli.ok("remember", "Staging runs on db-4.", "--kind", "state", "--subject", "host:staging", *h)
    notes = json.loads(cli.ok("recall", "staging db-3", "--json", *h))["notes"]
    assert any("shown with --include-history" in note for note in notes), notes
    assert not any("pass include_history" in note for note in notes)


def test_recall_says_how_many_notes_it_could_not_read_and_render_writes_the_rest(cli: Cli) -> None:
    home, h = _home(cli)
    broken = cli.ok("remember", "We ship on Fridays.", *h).strip()
    cli.ok("remember", "Deploy with make ship on Fridays.", "--type", "procedure", *h)
    cli.ok("recall", "ship", *h)  # the indexes hold both
    (note,) = (home / "notes" / broken.removeprefix("mem:")).glob("*.md")
    note.write_text(note.read_text(encoding="utf-8").replace("id: ", "id: [broken", 1), encoding="utf-8")
    result = cli("recall", "ship fridays", *h)
    assert result.returncode == 0
    assert "agent-memory: 1 note could not be read and was not searched: agent-memory doctor names it" in (
        result.stderr
    )
    notes = json.loads(cli.ok("recall", "ship fridays", "--json", *h))["notes"]
    assert any("1 note could not be read" in n for n in notes)
    rendered = cli("render", *h)
    assert broken in rendered.stderr
    assert "Deploy with make ship on Fridays." in (home / "MEMORY.md").read_text(encoding="utf-8")
    assert broken in cli("doctor", *h).stdout


def test_usage_mistakes_exit_2_and_write_nothing(cli: Cli) -> None:
    home, h = _home(cli)
    before = sorted(p.name for p in (home / "notes").iterdir())
    stateless = cli("remember", "Staging runs on db-3.", "--kind", "state", *h)
    assert stateless.returncode == 2 and "--kind state needs --subject KEY" in stateless.stderr
    for flag in ("--budget", "--k"):
        zero = cli("recall", "staging", flag, "0", *h)
        assert zero.returncode == 2 and f"Invalid value for '{flag}'" in zero.stderr
    assert sorted(p.name for p in (home / "notes").iterdir()) == before


def test_under_json_an_error_is_one_json_object_on_stderr(cli: Cli) -> None:
    _, h = _home(cli)
    missing = cli("show", "mem:" + "0" * 32, *h, "--json")
    assert missing.returncode == 3 and missing.stdout == ""
    error = json.loads(missing.stderr)
    assert error["exit"] == 3 and error["record_id"] == "mem:" + "0" * 32 and "error" in error
    usage = cli("recall", "staging", "--k", "0", *h, "--json")
    assert usage.returncode == 2 and json.loads(usage.stderr)["exit"] == 2
    plain = cli("show", "mem:" + "0" * 32, *h)
    assert plain.stderr.startswith("agent-memory: error: ")
