"""``agent-memory import --from …`` and ``demo`` run as a user runs them (the installed command)."""

from __future__ import annotations

import json
from pathlib import Path

from importkit import LOCOMO, run, write_json


def test_import_from_locomo_twice_adds_nothing_the_second_time(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", LOCOMO)
    assert run(tmp_path, "init", str(tmp_path / "h")).returncode == 0
    first = run(tmp_path, "import", "--home", str(tmp_path / "h"), "--from", "locomo", data, "--json")
    again = run(tmp_path, "import", "--home", str(tmp_path / "h"), "--from", "locomo", data)
    assert first.returncode == 0, first.stderr
    assert len(json.loads(first.stdout)[0]["added"]) == 3
    assert again.returncode == 0 and "added 0, 3 already present" in again.stdout


def test_import_reports_a_bad_file_and_imports_the_good_one(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", LOCOMO)
    assert run(tmp_path, "init", str(tmp_path / "h")).returncode == 0
    done = run(tmp_path, "import", "--home", str(tmp_path / "h"), "--from", "locomo", "missing.json", data)
    assert done.returncode == 4  # done with exceptions (issue 18): the good file was taken in
    assert "missing.json" in done.stderr and "cannot read" in done.stderr
    assert "locomo.json: read 3, added 3" in done.stdout


def test_the_demo_command_runs_on_a_repository(tmp_path: Path, repo: Path) -> None:
    done = run(tmp_path, "demo", "--home", str(tmp_path / "demo"), "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    assert "== 1. Make a Home" in done.stdout and "Withdraw and reinstate" in done.stdout
    built, where, _ = done.stdout.splitlines()[-3:]
    assert built.startswith("Built a Home of ") and (tmp_path / "demo" / "notes").is_dir()
    assert where.startswith(f"It is in {tmp_path / 'demo'}; its signing key is ")


def test_a_dataset_import_is_quarantined_unless_trust_is_given(tmp_path: Path) -> None:
    data = write_json(tmp_path / "locomo.json", LOCOMO)
    counts = {}
    for name, trust in (("plain", ()), ("trusted", ("--trust",))):
        assert run(tmp_path, "init", str(tmp_path / name)).returncode == 0
        done = run(tmp_path, "import", "--home", str(tmp_path / name), "--from", "locomo", data, *trust)
        assert done.returncode == 0 and "read 3, added 3" in done.stdout, done.stderr
        status = json.loads(run(tmp_path, "status", "--home", str(tmp_path / name), "--json").stdout)
        counts[name] = (status["records"], status["quarantined"])
    assert counts == {"plain": (3, 3), "trusted": (3, 0)}
