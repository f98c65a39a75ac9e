"""The demo on real input: a small git repository made here, and LoCoMo from the shared datasets."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from importkit import SHARED, git

from agent_memory.demo import MAX_ITEMS, MAX_SESSIONS, run_demo
from agent_memory.memory import Memory

STEPS = [
    "Make a Home",
    "Import the repository",
    "Capture into the inbox, then archive it",
    "Distill the archive into proposals, then accept them",
    "Consolidate",
    "Render the views",
    "Answer questions with recall",
    "Keep the questions as golden recall tests",
    "Supersede a state",
    "A dispute and its resolution",
    "Withdraw and reinstate",
    "Doctor",
]


def test_the_demo_walks_every_step_on_a_repository(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    result = run_demo(tmp_path / "demo", repo=str(repo), echo=lines.append)
    out = "\n".join(lines)
    assert [s.split(":")[0] for s in result.steps] == STEPS
    assert "2 proposal(s) filed" in out and "accepted 2: the records now cite their archive lines" in out
    assert "recalled again: absent" in out and "recalled again: back" in out
    assert "superseded mem:" in out and "resolved:" in out
    head = git(repo, "rev-parse", "HEAD")
    asked = {q.text: sources for q, sources in result.questions}
    assert asked["Who changed this, and when: Document grout widths?"][0] == f"git:{head}"
    assert result.found >= 1
    asked_with_answer = [q for q, _ in result.questions if q.expected]
    assert f"wrote {len(asked_with_answer)} question(s) to golden.yaml" in out
    from agent_memory.doctor.golden import load_golden

    golden = load_golden(tmp_path / "demo" / "golden.yaml")
    assert [q.query for q in golden][:1] == ["Who changed this, and when: Document grout widths?"]
    with Memory.open(tmp_path / "demo") as memory:
        bodies = [r.body for r in memory.store.list()]
    assert "Grace Hopper committed: Document grout widths" in bodies
    assert (tmp_path / "demo" / "MEMORY.md").read_text(encoding="utf-8").strip()
    if result.steps[-1] == "Doctor":
        assert "problems found" not in capsys.readouterr().out


def test_the_demo_refuses_a_home_that_is_not_empty(tmp_path: Path, repo: Path) -> None:
    from agent_memory.errors import ConfigError

    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ConfigError):
        run_demo(taken, repo=str(repo), echo=lambda _: None)
    assert (taken / "mine.txt").read_text(encoding="utf-8") == "keep me"


@pytest.mark.skipif(
    not (SHARED / "locomo" / "locomo.json").exists(), reason="../shared/datasets/locomo absent"
)
def test_the_demo_on_locomo_answers_from_the_imported_sessions(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_demo(tmp_path / "demo", dataset=str(SHARED / "locomo" / "locomo.json"), echo=lines.append)
    assert result.imported.read == MAX_ITEMS
    assert all(int(s.split("/D")[1].split(":")[0]) <= MAX_SESSIONS for s in result.imported.held)
    assert len(result.questions) == 3 and result.found >= 1
    home = tmp_path / "demo"
    files = [p for p in home.rglob("*") if p.is_file() and ".git" not in p.relative_to(home).parts]
    assert any(".cache" in p.parts for p in files)
    home_text = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    assert "answer_" not in home_text and "has_answer" not in home_text


def test_a_demo_whose_input_cannot_be_read_leaves_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "bad.json").write_text('{"bad": 1}', encoding="utf-8")
    (tmp_path / "plain").mkdir()  # not a git repository
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    for kwargs in ({"dataset": str(tmp_path / "bad.json")}, {"repo": str(tmp_path / "plain")}):
        with contextlib.suppress(Exception):  # a bad input may raise or report; no folder stays either way
            run_demo(echo=lambda line: None, **kwargs)
    assert list(scratch.iterdir()) == []
