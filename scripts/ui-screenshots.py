"""Take the screenshots of docs/ui.md: a small Home made with the CLI, served by ``agent-memory ui``.

Run from the repository root (needs Debian's chromium and chromium-driver, and the dev extra's
selenium)::

    .venv/bin/python scripts/ui-screenshots.py

It writes docs/ui/browse.png, search.png, record.png, review.png and agent.png.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "ui"
COMMAND = str(Path(sys.executable).parent / "agent-memory")
NOTES = [
    ("Deploys happen on Tuesdays after the standup", "--tag", "process", "--source", "standup-11-24"),
    ("Staging runs on db-3", "--kind", "state", "--subject", "host:staging", "--source", "ticket-481"),
    ("Staging runs on db-4", "--kind", "state", "--subject", "host:staging", "--source", "ticket-502"),
    (
        "Prod database is db-9 behind pgbouncer",
        "--kind",
        "state",
        "--subject",
        "host:prod",
        "--source",
        "runbook",
    ),
    ("Prod database is db-11", "--kind", "state", "--subject", "host:prod", "--taint", "external"),
    ("The release checklist lives in docs/release.md", "--taint", "external", "--source", "web:wiki"),
    ("Ada prefers green tea in the morning with lemon", "--type", "preference", "--source", "chat-11-20"),
    ("Ada prefers green tea in the morning with honey", "--type", "preference", "--source", "chat-11-27"),
    ("Always run the migrations on a copy first", "--type", "procedure", "--source", "postmortem-7"),
]
"""What the Home remembers: a superseded value, a dispute, quarantined notes, near-duplicates."""


def main() -> None:
    """Build the Home, serve it, and save one screenshot per page."""
    work = Path(tempfile.mkdtemp(prefix="ui-shots-"))
    env = {**os.environ, "XDG_CONFIG_HOME": str(work / "config")}
    env.pop("AGENT_MEMORY_HOME", None)
    home = work / "home"

    def cli(*args: str) -> str:
        done = subprocess.run(  # noqa: S603 - our own command, fixed arguments
            [COMMAND, *args, "--home", str(home)], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.strip()

    subprocess.run([COMMAND, "init", str(home)], env=env, check=True, capture_output=True)  # noqa: S603
    for args in NOTES:
        cli("remember", *args)
    old = cli("list", "--subject", "host:staging").split()[0]
    cli("consolidate")
    cli("render")
    # Remembered after the render, so "What the agent sees" shows the stale mark on MEMORY.md.
    cli("remember", "The office moves to the fourth floor in June", "--source", "all-hands-12-01")
    process = subprocess.Popen(  # noqa: S603 - our own command
        [COMMAND, "ui", "--home", str(home), "--no-browser"], stderr=subprocess.PIPE, text=True, env=env
    )
    url = re.search(r"(http://\S+)", process.stderr.readline() if process.stderr else "")
    if url is None:
        raise SystemExit("agent-memory ui printed no address")
    base = url.group(1).split("/?token=")[0]
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--hide-scrollbars", "--window-size=1280,1000", f"--user-data-dir={work / 'profile'}",
    ):  # fmt: skip
        options.add_argument(flag)
    service = Service(shutil.which("chromedriver") or "chromedriver")
    driver = webdriver.Chrome(service=service, options=options)
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        driver.get(url.group(1))
        driver.save_screenshot(str(OUT / "browse.png"))
        driver.get(f"{base}/?q=which+host+runs+staging")
        driver.save_screenshot(str(OUT / "search.png"))
        driver.get(f"{base}/record/{old}")
        driver.save_screenshot(str(OUT / "record.png"))
        driver.get(f"{base}/review")
        driver.save_screenshot(str(OUT / "review.png"))
        driver.get(f"{base}/agent")
        driver.save_screenshot(str(OUT / "agent.png"))
    finally:
        driver.quit()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        time.sleep(0.1)
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {', '.join(sorted(p.name for p in OUT.glob('*.png')))} under {OUT}")


if __name__ == "__main__":
    main()
