"""The git importer: commits as dated episodes with authors, documentation chunked to file and line range."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from importkit import README, git

from agent_memory.importers import import_path
from agent_memory.importers.git import chunk_markdown
from agent_memory.memory import Memory


def test_commits_become_episodes_with_author_date_and_sha(home: Path, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    first = git(repo, "rev-parse", "HEAD~1")
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "git", str(repo))
        latest, start = memory.get(report.held[f"git:{head}"]), memory.get(report.held[f"git:{first}"])
    assert latest.body == "Grace Hopper committed: Document grout widths"
    assert latest.occurred_at == datetime(2024, 4, 2, 9, 30, tzinfo=UTC)
    assert start.body == "Ada Lovelace committed: Start the tiles library\n\nThe first layout engine."
    assert start.occurred_at == datetime(2024, 3, 1, 10, 0, tzinfo=timezone(timedelta(hours=1)))
    assert latest.type.value == "episode"


def test_documentation_chunks_cite_the_lines_they_came_from(home: Path, repo: Path) -> None:
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "git", str(repo))
        docs = {s: memory.get(i).body for s, i in report.held.items() if "#L" in s}
    assert any(s.startswith("docs/grout.md#L") for s in docs)
    for source, body in docs.items():
        name, lines = source.split("#L")
        first, last = (int(n.lstrip("L")) for n in lines.split("-"))
        cited = (repo / name).read_text(encoding="utf-8").split("\n")[first - 1 : last]
        # Every line of the chunk but a repeated heading comes from the cited range, in order.
        own = [line for line in body.split("\n") if line.strip()]
        assert [line for line in cited if line.strip()][-1] == own[-1]
        assert set(own[1:]) <= set(cited), source


def test_the_limit_keeps_only_the_latest_commits(home: Path, repo: Path) -> None:
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "git", str(repo), limit=1)
    assert [s for s in report.held if s.startswith("git:")] == [f"git:{git(repo, 'rev-parse', 'HEAD')}"]


def test_importing_a_repository_twice_adds_nothing(home: Path, repo: Path) -> None:
    with Memory.open(home, source_kind="import") as memory:
        first = import_path(memory, "git", str(repo))
        again = import_path(memory, "git", str(repo))
        count = len(memory.store.list())
    assert again.added == [] and again.present == first.read
    assert count == len(first.added)


def test_a_folder_that_is_not_a_repository_is_reported_by_path(home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with Memory.open(home, source_kind="import") as memory:
        report = import_path(memory, "git", str(plain))
        assert memory.store.list() == []
    assert report.error is not None and str(plain) in report.error


def test_chunks_split_at_headings_and_keep_fenced_blocks_whole() -> None:
    chunks = chunk_markdown(README)
    assert [(first, last) for first, last, _ in chunks] == [(1, 3), (5, 13), (15, 17)]
    install = chunks[1][2]
    assert install.startswith("## Install") and "# not a heading" in install and install.endswith("```")


def test_long_sections_are_split_by_paragraph_and_repeat_their_heading() -> None:
    text = "## Big\n\n" + "\n\n".join(f"Paragraph {n} " + "x" * 60 for n in range(6))
    chunks = chunk_markdown(text, max_chars=150)
    assert len(chunks) > 1
    assert all(body.startswith("## Big") for _, _, body in chunks)
    assert chunks[-1][1] == len(text.split("\n"))
