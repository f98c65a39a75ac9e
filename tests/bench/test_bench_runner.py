import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import plan  # noqa: E402
import report  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_runner", BENCH / "__main__.py")
assert _spec is not None and _spec.loader is not None
runner = importlib.util.module_from_spec(_spec)
sys.modules["bench_runner"] = runner  # dataclasses look their module up while the class is made
_spec.loader.exec_module(runner)


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(body, encoding="utf-8")
    return path


def test_replacing_a_section_keeps_every_other_section(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\n## A\n\nold a\n\n## B\n\nb stays\n", encoding="utf-8")
    report.replace_section("## A", "## A\n\nnew a\n", docs)
    report.replace_section("## C", "## C\n\nc added\n", docs)
    text = docs.read_text(encoding="utf-8")
    assert "new a" in text and "old a" not in text
    assert text.index("## A") < text.index("b stays") < text.index("c added")


def test_the_header_names_the_machine_and_keeps_sections_and_rows_of_benchmarks_not_rerun(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Old title\n\nold words\n\n## Stores\n\nstore figures\n", encoding="utf-8")
    report.write_header([report.Outcome("stores", "ok", 12.0, 80.0)], "python -m bench", 0.0, docs)
    report.write_header(
        [report.Outcome("scale", "failed", 3.0, 50.0, "exit 1: boom")],
        "python -m bench --only scale",
        0.0,
        docs,
    )
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n") and "old words" not in text
    for label in ("CPU", "cores", "RAM", "OS", "Python", "agent-memory", "packages"):
        assert f"- **{label}:**" in text
    finished = re.search(r"finished (\d{4}-\d\d-\d\d \d\d:\d\d) UTC", text)
    assert finished is not None
    assert f"| `stores` | ok | 12 | 80 | run of {finished.group(1)} UTC |  |" in text
    assert "| `scale` | **failed** | 3 | 50 | none (no section yet) | exit 1: boom |" in text
    assert "**Failed: scale**" in text
    assert text.endswith("## Stores\n\nstore figures\n")


def test_a_failed_benchmark_row_names_the_run_its_section_comes_from_even_from_the_old_table(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text(
        "# Benchmarks\n\nLast run: `python -m bench --only scale`, finished 2026-11-29 22:57 UTC, load 6.\n\n"
        "| benchmark | outcome | seconds | note |\n|---|---|--:|---|\n"
        "| `peers` | ok | 437 | peak RSS 335 MB |\n"
        "| `scale` | ok | 2,806 | peak RSS 1,035 MB |\n\n## Scale\n\nold\n",
        encoding="utf-8",
    )
    report.write_header(
        [report.Outcome("scale", "failed", 9.0, 0.0, "exit 1: x")], "python -m bench", 0.0, docs
    )
    text = docs.read_text(encoding="utf-8")
    assert "| `peers` | ok | 437 | 335 | run of 2026-11-29 22:57 UTC |  |" in text
    assert "| `scale` | **failed** | 9 |  | run of 2026-11-29 22:57 UTC | exit 1: x |" in text


def test_discovery_finds_scripts_with_a_main_and_folders_with_a_main_file_but_not_helpers(tmp_path):
    _script(tmp_path, "alpha", "def main():\n    pass\n")
    _script(tmp_path, "helper", "def util():\n    pass\n")
    _script(tmp_path, "report", "def main():\n    pass\n")
    (tmp_path / "peers").mkdir()
    _script(tmp_path / "peers", "__main__", "print('peers')\n")
    _script(tmp_path, "scale", "def main():\n    pass\n")
    assert [b.name for b in runner.discover(tmp_path)] == ["alpha", "scale", "peers"]


def test_a_benchmark_gets_quick_no_write_and_1m_options_only_where_it_declares_them(tmp_path):
    plain = runner.Benchmark("plain", _script(tmp_path, "plain", "def main():\n    pass\n"))
    aware = runner.Benchmark(
        "aware",
        _script(tmp_path, "aware", 'ARGS = ["--quick", "--no-write", "--with-1m"]\ndef main():\n    pass\n'),
    )
    assert runner.arguments(plain, quick=True, write=False, with_1m=True) == []
    assert runner.arguments(aware, quick=True, write=False, with_1m=True) == [
        "--quick",
        "--no-write",
        "--with-1m",
    ]
    assert runner.arguments(aware, quick=False, write=True, with_1m=False) == []


def test_the_runner_lists_failures_counts_skips_and_exits_non_zero(tmp_path, capsys):
    _script(tmp_path, "good", "def main():\n    pass\nprint('figures')\n")
    _script(tmp_path, "absent", "def main():\n    pass\nprint('skipped: no data here')\n")
    _script(tmp_path, "broken", "def main():\n    pass\nraise SystemExit('it broke')\n")
    docs = tmp_path / "benchmarks.md"
    assert runner.main([], folder=tmp_path, docs=docs) == 1
    assert "failed: broken" in capsys.readouterr().err
    text = docs.read_text(encoding="utf-8")
    assert "| `good` | ok |" in text
    assert "| `absent` | skipped |" in text and "skipped: no data here" in text
    assert "| `broken` | **failed** |" in text and "it broke" in text
    assert runner.main(["--only", "good", "--jobs", "1"], folder=tmp_path, docs=docs) == 0


def test_an_unknown_benchmark_name_is_refused_with_the_known_ones(tmp_path, capsys):
    _script(tmp_path, "good", "def main():\n    pass\n")
    with pytest.raises(SystemExit):
        runner.main(["--only", "nonesuch"], folder=tmp_path)
    assert "known: good" in capsys.readouterr().err


def test_a_log_log_plot_is_written_as_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "cost.png"
    report.loglog_plot(path, "cost", "seconds", {"files": [(10, 1.0), (100, 12.0)], "empty": []})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scale_texts_are_distinct_and_the_same_on_every_run():
    if not corpus.available():
        pytest.skip(corpus.missing())
    size = 102_000  # past the distinct turns and lines: the last notes are sentence mixes
    first = list(corpus.scale_texts(size))
    assert len({text for text, _ in first}) == size
    assert first[-1][1].startswith("mix/")
    assert first == list(corpus.scale_texts(size))
    assert all(text.strip() and len(text) <= 600 for text, _ in first[:-2_000])


def test_benchmarks_run_two_at_a_time_and_keep_the_plan_order_in_the_table(tmp_path, capsys):
    # Each waits until the other has started: they finish only when run side by side.
    body = (
        "import pathlib, sys, time\ndef main():\n    pass\nhere = pathlib.Path(sys.argv[0]).parent\n"
        "(here / (pathlib.Path(sys.argv[0]).stem + '.started')).touch()\n"
        "other = 'b' if pathlib.Path(sys.argv[0]).stem == 'a' else 'a'\n"
        "deadline = time.time() + 20\n"
        "while not (here / (other + '.started')).exists():\n"
        "    assert time.time() < deadline, 'not run in parallel'\n    time.sleep(0.05)\nprint('done')\n"
    )
    _script(tmp_path, "a", body)
    _script(tmp_path, "b", body)
    docs = tmp_path / "benchmarks.md"
    assert runner.main(["--jobs", "2"], folder=tmp_path, docs=docs) == 0
    out = capsys.readouterr().out
    assert "[a] done" in out and "[b] done" in out
    text = docs.read_text(encoding="utf-8")
    assert text.index("| `a` | ok |") < text.index("| `b` | ok |")


def test_a_successful_run_removes_its_stale_plots_and_a_failed_or_printing_one_keeps_them(tmp_path):
    plots = tmp_path / "plots"
    plots.mkdir()
    old = time.time() - 3600
    for name in ("alpha-old.png", "alpha.json", "alphabet-x.png", "beta-old.png"):
        (plots / name).write_bytes(b"x")
        os.utime(plots / name, (old, old))
    fresh = _script(
        tmp_path, "alpha", f"def main():\n    pass\nopen({str(plots / 'alpha-new.png')!r}, 'w').close()\n"
    )
    broken = _script(tmp_path, "beta", "def main():\n    pass\nraise SystemExit(2)\n")
    done = runner.run(runner.Benchmark("alpha", fresh), [], plots=plots)
    assert done.outcome == "ok" and "alpha-old.png" in done.note and "alpha.json" in done.note
    assert sorted(p.name for p in plots.iterdir()) == ["alpha-new.png", "alphabet-x.png", "beta-old.png"]
    assert runner.run(runner.Benchmark("beta", broken), [], plots=plots).outcome == "failed"
    assert (plots / "beta-old.png").exists()
    printing = _script(tmp_path, "beta", "def main():\n    pass\nprint('figures, not written')\n")
    assert (
        runner.run(runner.Benchmark("beta", printing), ["--no-write"], write=False, plots=plots).outcome
        == "ok"
    )
    assert (plots / "beta-old.png").exists()


def test_the_plan_lists_expected_minutes_and_a_schedule_total(tmp_path, capsys):
    _script(tmp_path, "alpha", "def main():\n    pass\n")
    assert runner.main(["--list", "--jobs", "2"], folder=tmp_path) == 0
    out = capsys.readouterr().out
    assert "alpha" in out and "expected:" in out and "--jobs 2" in out


def test_the_schedule_starts_the_longest_first_and_fills_free_slots():
    minutes = {name: plan.expected(name, quick=False) for name in ("scale", "retrieval", "stores", "cli")}
    names = list(minutes)
    assert plan.longest_first(names, quick=False)[0] == max(minutes, key=minutes.__getitem__)
    assert plan.schedule_minutes(names, 1, quick=False) == pytest.approx(sum(minutes.values()))
    two = plan.schedule_minutes(names, 2, quick=False)
    assert max(minutes.values()) <= two < sum(minutes.values())
    with pytest.raises(ValueError, match="at least 1"):
        plan.schedule_minutes(names, 0, quick=False)


def test_the_soak_runs_only_when_asked_for(tmp_path, capsys):
    _script(tmp_path, "soak", "def main():\n    pass\n")
    _script(tmp_path, "alpha", "def main():\n    pass\n")
    runner.main(["--list"], folder=tmp_path)
    assert "soak" not in capsys.readouterr().out
    runner.main(["--list", "--with-soak"], folder=tmp_path)
    assert "soak" in capsys.readouterr().out


def test_sections_written_by_benchmarks_side_by_side_are_all_kept(tmp_path):
    docs = tmp_path / "benchmarks.md"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import report, pathlib\n"
        "for n in range(150):\n"
        "    head = f'## {sys.argv[2]} {n}'\n"
        "    report.replace_section(head, head + '\\n\\nx\\n', pathlib.Path(sys.argv[3]))\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(BENCH), name, str(docs)])
        for name in ("A", "B", "C")
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0, 0]
    text = docs.read_text(encoding="utf-8")
    assert all(f"## {name} {n}\n" in text for name in "ABC" for n in range(150))


def test_a_stopped_run_ends_its_benchmarks_and_still_writes_the_table(tmp_path):
    _script(tmp_path, "done", "def main():\n    pass\nprint('figures')\n")
    _script(
        tmp_path,
        "slow",
        "def main():\n    pass\nimport time\nprint('started', flush=True)\ntime.sleep(120)\n",
    )
    docs = tmp_path / "benchmarks.md"
    drive = (
        "import importlib.util, pathlib, sys\n"
        f"spec = importlib.util.spec_from_file_location('runner', {str(BENCH / '__main__.py')!r})\n"
        "runner = importlib.util.module_from_spec(spec); sys.modules['runner'] = runner\n"
        "spec.loader.exec_module(runner)\n"
        f"sys.exit(runner.main(['--jobs', '2'], folder=pathlib.Path({str(tmp_path)!r}),"
        f" docs=pathlib.Path({str(docs)!r})))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", drive], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    seen: set[str] = set()
    for line in process.stdout:
        seen |= {word for word in ("[slow] started", "[done] figures") if word in line}
        if len(seen) == 2:
            break
    time.sleep(1)  # `done` has printed; let its process end
    process.terminate()
    assert process.wait(timeout=60) == 130
    process.stdout.close()
    text = docs.read_text(encoding="utf-8")
    assert "| `done` | ok |" in text and "| `slow` | **interrupted** |" in text


def test_missing_benchmark_packages_are_named_before_anything_runs(tmp_path, capsys, monkeypatch):
    absent = "agent_memory_no_such_package"
    assert runner.missing_packages(["json", absent]) == [absent]
    _script(tmp_path, "good", "def main():\n    pass\nprint('figures')\n")
    monkeypatch.setattr(runner, "NEEDED", ("agent_memory_no_such_package",))
    with pytest.raises(SystemExit) as stopped:
        runner.main(["--jobs", "1"], folder=tmp_path, docs=tmp_path / "benchmarks.md")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "agent_memory_no_such_package" in err and "pip install -e '.[bench,dev]'" in err
    assert not (tmp_path / "benchmarks.md").exists()


@pytest.mark.parametrize("name", sorted(path.stem for path in BENCH.glob("*.py") if path.stem != "__main__"))
def test_every_benchmark_module_imports(name):
    """A benchmark that no longer imports (a name moved in the package) fails here, not in a long run."""
    subprocess.run([sys.executable, "-c", f"import {name}"], cwd=BENCH, check=True, capture_output=True)
