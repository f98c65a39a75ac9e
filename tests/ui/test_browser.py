"""The review page in a real headless Chromium, served by the installed ``agent-memory ui`` command.

Debian's ``chromium`` and ``chromium-driver`` (installed by ``.ci/run``) through Selenium; the
browser gets a fresh profile and no network beyond 127.0.0.1. Each test drives the page as a
person would (type, click) and checks the outcome where the agent would meet it: the review
queue and ``MEMORY.md`` as the CLI reads them.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from uikit import COMMAND, QUARANTINED, Filled

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (apt-get install them, as .ci/run does)",
)

if CHROMIUM is not None and CHROMEDRIVER is not None:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


def open_browser(profile: Path) -> WebDriver:
    """Start headless Chromium with a fresh profile folder."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture
def served(filled: Filled) -> Iterator[str]:
    """Run ``agent-memory ui --no-browser`` on the Home; yield the address it printed (with its token)."""
    assert COMMAND
    process = subprocess.Popen(
        [COMMAND, "ui", "--home", str(filled.root), "--no-browser"],
        stderr=subprocess.PIPE,
        text=True,
        env=filled.env,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        assert found, f"agent-memory ui printed {line!r}"
        # Keep reading what it says, so a full pipe never stalls the server.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            assert process.wait(timeout=30) == 0, "agent-memory ui did not stop cleanly on Ctrl-C"
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stderr is not None:
                process.stderr.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    driver = open_browser(tmp_path / "profile")
    yield driver
    driver.quit()


def base(url: str) -> str:
    return url.split("/?token=")[0]


def wait_until(browser: WebDriver, condition: Callable[[WebDriver], object]) -> None:
    """Wait up to 30 s for ``condition``; an element gone with the page it was on means "not yet".

    A form's answer replaces the page while the condition reads it, so an element it just
    found can be stale by the time its text is asked for.
    """
    WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def submit(browser: WebDriver, form_css: str, reason: str | None = None) -> None:
    """Fill a form's reason (when given) and press its button; wait for the page it leads to."""
    form = browser.find_element(By.CSS_SELECTOR, form_css)
    if reason is not None:
        form.find_element(By.NAME, "reason").send_keys(reason)
    old = browser.find_element(By.TAG_NAME, "html")
    form.find_element(By.TAG_NAME, "button").click()
    wait_until(browser, lambda _: old.id != browser.find_element(By.TAG_NAME, "html").id)


def flash(browser: WebDriver) -> str:
    """The page's flash messages, read in one script (no element can go stale between finding and reading)."""
    return str(
        browser.execute_script(
            "return Array.from(document.querySelectorAll('.flash'), e => e.innerText).join('\\n')"
        )
    )


def page_text(browser: WebDriver) -> str:
    """The text of the page's body, read in one script (a page replaced meanwhile reads as empty)."""
    return str(browser.execute_script("return document.body ? document.body.innerText : ''"))


def test_opening_the_printed_address_searches_and_opens_a_record(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    browser.get(served)
    assert "token=" not in browser.current_url
    box = browser.find_element(By.ID, "q")
    box.send_keys("where does staging run")
    browser.find_element(By.CSS_SELECTOR, "form.search button").click()
    wait_until(browser, lambda b: "q=" in b.current_url)
    recalled = json.loads(filled.ok("recall", "where does staging run", "--json"))["records"]
    links = browser.find_elements(By.CSS_SELECTOR, "a.record-link")
    assert [a.get_attribute("href").rsplit("/", 1)[1] for a in links] == [r["id"] for r in recalled]
    assert browser.find_element(By.CSS_SELECTOR, "td.score").text == f"{recalled[0]['score']:.3f}"
    links[0].click()
    wait_until(browser, lambda b: "/record/" in b.current_url)
    assert browser.find_element(By.ID, "body").text == recalled[0]["body"]
    assert browser.find_element(By.CSS_SELECTOR, "h1.record-id").text == recalled[0]["id"]


def test_approving_a_quarantined_record_puts_it_in_the_rendered_memory_md(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    browser.get(served)
    browser.get(base(served) + "/agent")
    assert QUARANTINED not in browser.find_element(By.ID, "view").text
    browser.get(base(served) + "/review")
    submit(browser, f'.quarantined-item[data-record="{filled.quarantined}"] form.act', "checked the file")
    assert f"approved {filled.quarantined} (by owner)" in flash(browser)
    browser.get(base(served) + "/agent")
    submit(browser, "form.act", None)  # "Render the views now"
    assert "rendered: MEMORY.md" in flash(browser)
    view = browser.find_element(By.ID, "view")
    assert QUARANTINED in view.text
    assert (
        view.find_element(By.LINK_TEXT, filled.quarantined).get_attribute("href").endswith(filled.quarantined)
    )
    assert QUARANTINED in (filled.root / "MEMORY.md").read_text(encoding="utf-8")


def test_resolving_a_dispute_keeps_the_chosen_side(served: str, browser: WebDriver, filled: Filled) -> None:
    browser.get(served)
    browser.get(base(served) + "/review")
    sides = browser.find_elements(By.CSS_SELECTOR, "#disputes .side")
    chosen = next(s for s in sides if filled.staging in s.text)
    chosen.find_element(By.NAME, "reason").send_keys("db-3 is in the runbook")
    chosen.find_element(By.TAG_NAME, "button").click()
    wait_until(browser, lambda b: "resolved:" in flash(b))
    assert f"resolved: {filled.staging} active, {filled.disputer} superseded" in flash(browser)
    assert json.loads(filled.ok("show", filled.staging, "--json"))["state"] == "active"
    assert json.loads(filled.ok("show", filled.disputer, "--json"))["state"] == "superseded"
    assert "No open disputes." in browser.find_element(By.ID, "disputes").text


def test_accepting_then_reverting_a_proposal_moves_the_regret_rate(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    (proposal,) = json.loads(filled.ok("proposals", "--json"))["proposals"]
    browser.get(served)
    browser.get(base(served) + "/review")
    assert (
        "+body:"
        in browser.find_element(By.CSS_SELECTOR, f'.proposal[data-proposal="{proposal["id"]}"] pre.diff').text
    )
    submit(browser, f'.proposal[data-proposal="{proposal["id"]}"] form.act')
    assert f"accepted {proposal['id']}" in flash(browser)
    assert browser.find_element(By.ID, "regret").text == "0.00"
    submit(browser, f'.accepted-row[data-proposal="{proposal["id"]}"] form.act', "merged the wrong two")
    assert f"reverted {proposal['id']}" in flash(browser)
    assert browser.find_element(By.ID, "regret").text == "1.00"
    maintenance = json.loads(filled.ok("status", "--json"))["maintenance"]
    assert (maintenance["accepted"], maintenance["reverted"]) == (1, 1)


def test_without_the_token_the_browser_gets_no_page(served: str, browser: WebDriver, filled: Filled) -> None:
    browser.get(base(served) + "/")
    assert "refused: no session" in browser.find_element(By.TAG_NAME, "body").text
    assert filled.plain not in browser.page_source
    browser.get(base(served) + "/?token=not-the-token")
    assert "refused: wrong token" in browser.find_element(By.TAG_NAME, "body").text


def test_a_form_with_a_wrong_csrf_token_is_refused(served: str, browser: WebDriver, filled: Filled) -> None:
    browser.get(served)
    browser.get(base(served) + "/review")
    form = browser.find_element(
        By.CSS_SELECTOR, f'.quarantined-item[data-record="{filled.quarantined}"] form.act'
    )
    browser.execute_script("arguments[0].querySelector('input[name=csrf]').value = 'forged'", form)
    form.find_element(By.TAG_NAME, "button").click()
    wait_until(browser, lambda b: "CSRF" in page_text(b))
    assert filled.quarantined in [i["id"] for i in json.loads(filled.ok("review", "--json"))["items"]]


def test_a_stored_script_body_does_not_run(served: str, browser: WebDriver, filled: Filled) -> None:
    browser.get(served)
    for path in ("/", f"/record/{filled.script}", "/?q=page"):
        browser.get(base(served) + path)
        assert browser.execute_script("return window.pwned === undefined")
        assert browser.title != "pwned"
    browser.get(base(served) + f"/record/{filled.script}")
    assert browser.find_element(By.ID, "body").text.startswith('<script>document.title="pwned"')


def test_each_record_says_why_it_is_believed_in_the_words_recall_prints(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    printed = filled.ok("recall", QUARANTINED)
    reason = "quarantined: tainted (external) and not yet reviewed; never autoloaded"
    assert reason in printed  # what the CLI says of it
    browser.get(served)

    def headline(record_id: str) -> str:
        row = browser.find_element(By.CSS_SELECTOR, f'tr.record-row[data-record="{record_id}"]')
        return row.find_element(By.CSS_SELECTOR, ".trust .headline").text

    assert (
        headline(filled.plain)
        == "Believed: active and untainted, from "
        + json.loads(filled.ok("show", filled.plain, "--json"))["provenance"]["ref"]
        + "."
    )
    assert headline(filled.quarantined).startswith(
        "Not trusted yet: quarantined (taint: external; unreviewed)."
    )
    assert headline(filled.staging).startswith("In dispute:")
    browser.get(base(served) + f"/record/{filled.quarantined}")
    aspects = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#trust li.aspect")]
    assert f"Recall says: {reason}." in aspects
    assert "Signature: signed by this Home's key, and the signature verifies." in aspects
    assert any(a.startswith("Taint: external — it came from outside") for a in aspects)


def test_a_hand_edited_note_is_marked_stale_with_what_to_run_until_sync(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    browser.get(served)
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.record-row.stale")
    note = filled.root / "notes" / filled.plain.removeprefix("mem:") / "000001.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Tuesdays", "Thursdays"), encoding="utf-8")
    browser.get(base(served) + "/")
    (stale,) = browser.find_elements(By.CSS_SELECTOR, "tr.record-row.stale")
    assert stale.get_attribute("data-record") == filled.plain
    mark = stale.find_element(By.CSS_SELECTOR, ".stale-mark").text
    assert mark.startswith("stale its note changed on disk") and "run agent-memory sync" in mark
    filled.ok("sync")
    browser.get(base(served) + "/")
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.record-row.stale")
    row = browser.find_element(By.CSS_SELECTOR, f'tr.record-row[data-record="{filled.plain}"]')
    assert row.find_element(By.CSS_SELECTOR, ".trust .headline").text.startswith(
        "No longer current: superseded by mem:"
    )
    assert "Deploys happen on Thursdays" in browser.find_element(By.ID, "records").text


def test_a_view_older_than_the_notes_is_marked_stale_until_rendered(
    served: str, browser: WebDriver, filled: Filled
) -> None:
    browser.get(served)
    browser.get(base(served) + "/agent")
    assert browser.find_elements(By.ID, "current")
    filled.ok("remember", "The office moves to the fourth floor in June")
    browser.get(base(served) + "/agent")
    stale = browser.find_element(By.ID, "stale").text
    assert "MEMORY.md" in stale and "Run agent-memory render" in stale
    assert "stale" in browser.find_element(By.ID, "view-stale").text
    submit(browser, "form.act", None)  # "Render the views now"
    assert not browser.find_elements(By.ID, "stale") and browser.find_elements(By.ID, "current")
    assert "fourth floor" in browser.find_element(By.ID, "view").text
