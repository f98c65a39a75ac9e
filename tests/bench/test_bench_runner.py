import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
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
    report.write_header([("stores", "ok", 12.0, "peak RSS 80 MB")], "python -m bench", docs)
    report.write_header([("scale", "failed", 3.0, "exit 1: boom")], "python -m bench --only scale", docs)
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n") and "old words" not in text
    for label in ("CPU", "cores", "RAM", "OS", "Python", "agent-memory", "packages"):
        assert f"- **{label}:**" in text
    assert "| `stores` | ok | 12 | peak RSS 80 MB |" in text
    assert "| `scale` | failed | 3 | exit 1: boom |" in text
    assert text.endswith("## Stores\n\nstore figures\n")


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
    assert "| `broken` | failed |" in text and "it broke" in text
    assert runner.main(["--only", "good"], folder=tmp_path, docs=docs) == 0


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
