import configparser
import plistlib
import shlex
import shutil
import subprocess
from datetime import time
from pathlib import Path

import pytest
from jobkit import T0, ZONE, at

from agent_memory.home import Home
from agent_memory.jobs.inbox import capture
from agent_memory.jobs.schedule import archive_due, schedule_text, unit_name

COMMAND = ["/opt/agent memory/bin/agent-memory"]


@pytest.fixture
def odd_home(tmp_path: Path) -> Home:
    """A Home whose path needs quoting in every format: a space, a percent sign, a quote, an ampersand."""
    return Home.init(tmp_path / 'my 100% "odd" & home', timezone=ZONE, git=False, now=T0)


def argv(home: Home) -> list[str]:
    return [*COMMAND, "archive-inbox", "--home", str(home.root.resolve())]


def test_the_crontab_line_runs_archive_inbox_daily_with_every_path_quoted(odd_home: Home) -> None:
    text = schedule_text("cron", odd_home, COMMAND, at=time(4, 10))
    (line,) = [line for line in text.splitlines() if not line.startswith("#")]
    minute, hour, day, month, weekday, command = line.split(" ", 5)
    assert (minute, hour, day, month, weekday) == ("10", "4", "*", "*", "*")
    # cron turns an unescaped % into a newline; after its unescaping the shell sees the argv.
    words = shlex.split(command.replace("\\%", "%"))
    assert words[: len(argv(odd_home))] == argv(odd_home)
    assert words[len(argv(odd_home)) :] == [
        f">>{odd_home.root.resolve() / '.cache/archive-inbox.log'}",
        "2>&1",
    ]
    assert "%" not in command.replace("\\%", "")


def systemd_units(text: str) -> dict[str, configparser.ConfigParser]:
    units: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("# file: "):
            current = line.removeprefix("# file: ")
            units[current] = []
        elif current and not line.startswith("#"):
            units[current].append(line)
    parsed = {}
    for name, lines in units.items():
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string("\n".join(lines))
        parsed[name] = parser
    return parsed


def test_the_systemd_timer_runs_the_service_daily_in_the_homes_zone(odd_home: Home) -> None:
    name = unit_name(odd_home)
    units = systemd_units(schedule_text("systemd", odd_home, COMMAND, at=time(4, 10)))
    service = units[f"~/.config/systemd/user/{name}.service"]
    timer = units[f"~/.config/systemd/user/{name}.timer"]
    exec_start = service["Service"]["ExecStart"]
    unescaped = shlex.split(exec_start.replace("%%", "%").replace("$$", "$"))
    assert unescaped == argv(odd_home)
    assert service["Service"]["Type"] == "oneshot"
    assert timer["Timer"]["OnCalendar"] == f"*-*-* 04:10:00 {ZONE}"
    assert timer["Timer"]["Persistent"] == "true" and timer["Install"]["WantedBy"] == "timers.target"


ANALYZE = shutil.which("systemd-analyze")


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_accepts_the_timer_calendar(home: Home) -> None:
    units = systemd_units(schedule_text("systemd", home, COMMAND))
    (calendar,) = [u["Timer"]["OnCalendar"] for u in units.values() if u.has_section("Timer")]
    result = subprocess.run([str(ANALYZE), "calendar", calendar], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "Next elapse:" in result.stdout


def test_the_launchd_plist_is_valid_xml_with_the_program_and_the_time(odd_home: Home) -> None:
    plist = plistlib.loads(schedule_text("launchd", odd_home, COMMAND, at=time(7, 30)).encode("utf-8"))
    assert plist["ProgramArguments"] == argv(odd_home)
    assert plist["StartCalendarInterval"] == {"Hour": 7, "Minute": 30}
    assert plist["Label"] == f"dev.agent-memory.archive.{odd_home.settings.home_id[:8]}"
    assert plist["StandardErrorPath"].endswith("/.cache/archive-inbox.log")


def test_an_unknown_scheduler_is_refused(home: Home) -> None:
    with pytest.raises(ValueError, match="unknown scheduler 'anacron'"):
        schedule_text("anacron", home, COMMAND)


def test_archiving_is_due_once_the_inbox_holds_an_item_from_an_earlier_local_day(home: Home) -> None:
    assert not archive_due(home, now=T0)  # empty inbox
    capture(home, "late note", source="test", at=T0)  # 23:30 in Tokyo on 11-29
    assert not archive_due(home, now=at(0.4))  # still 11-29 in Tokyo
    assert archive_due(home, now=at(0.6))  # 00:06 on 11-30 in Tokyo, 11-29 in UTC


def test_a_malformed_inbox_line_makes_archiving_due_so_the_refusal_is_reported(home: Home) -> None:
    with (home.root / "inbox.md").open("a", encoding="utf-8") as handle:
        handle.write("not an item\n")
    assert archive_due(home, now=T0)
