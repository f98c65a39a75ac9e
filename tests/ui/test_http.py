"""The review page over plain HTTP (starlette's in-process client): who is let in, and what a form may do."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from uikit import SCRIPT_BODY, Filled, text_of

from agent_memory.ui.app import create_app
from agent_memory.ui.auth import CONTENT_SECURITY_POLICY, COOKIE
from agent_memory.ui.opened import OpenedMemory

TOKEN = "the-token-of-this-test"  # noqa: S105 - a test token, not a secret


@pytest.fixture
def opened(filled: Filled, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenedMemory]:
    monkeypatch.setenv("XDG_CONFIG_HOME", filled.env["XDG_CONFIG_HOME"])
    served = OpenedMemory.open(filled.root)
    yield served
    served.close()


@pytest.fixture
def client(opened: OpenedMemory) -> TestClient:
    """A client that has not opened the token's address yet."""
    return TestClient(create_app(opened, token=TOKEN, port=0), follow_redirects=False)


@pytest.fixture
def signed_in(client: TestClient) -> TestClient:
    assert client.get(f"/?token={TOKEN}").status_code == 303
    return client


def csrf_of(client: TestClient, path: str = "/review") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def queue(filled: Filled) -> list[str]:
    return [item["id"] for item in json.loads(filled.ok("review", "--json"))["items"]]


def test_a_request_without_the_token_is_refused_and_shows_no_record(
    client: TestClient, filled: Filled
) -> None:
    for path in ("/", "/review", f"/record/{filled.plain}", "/agent", "/static/ui.css"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "no session" in response.text and filled.plain not in response.text


def test_a_wrong_token_is_refused_and_starts_no_session(client: TestClient) -> None:
    response = client.get("/?token=guessed")
    assert response.status_code == 403 and "wrong token" in response.text
    assert COOKIE not in response.headers.get("set-cookie", "")
    assert client.get("/").status_code == 403


def test_the_token_becomes_a_strict_session_cookie_and_leaves_the_address(client: TestClient) -> None:
    response = client.get(f"/review?token={TOKEN}&x=1")
    assert response.status_code == 303 and response.headers["location"] == "/review?x=1"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/review").status_code == 200


def test_every_page_carries_a_strict_content_security_policy(signed_in: TestClient, filled: Filled) -> None:
    for path in ("/", "/review", f"/record/{filled.plain}", "/agent", "/doctor", "/static/ui.js"):
        response = signed_in.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert (
            "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY
        )
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"


def test_a_stored_script_is_shown_as_text_on_every_page(signed_in: TestClient, filled: Filled) -> None:
    for path in ("/", "/?q=page", f"/record/{filled.script}", "/agent"):
        text = signed_in.get(path).text
        assert "<script>document" not in text and "<img src=x" not in text, path
    assert "&lt;script&gt;document.title=" in signed_in.get(f"/record/{filled.script}").text
    assert SCRIPT_BODY in json.loads(filled.ok("show", filled.script, "--json"))["body"]


@pytest.mark.parametrize("sent", [None, "wrong"])
def test_a_post_without_the_right_csrf_token_is_refused_and_changes_nothing(
    signed_in: TestClient, filled: Filled, sent: str | None
) -> None:
    form = {"record_id": filled.quarantined, "reason": "looks fine", **({"csrf": sent} if sent else {})}
    response = signed_in.post("/action/approve", data=form)
    assert response.status_code == 403 and "CSRF" in response.text
    assert filled.quarantined in queue(filled)


def test_a_post_from_another_origin_is_refused_even_with_the_token(
    signed_in: TestClient, filled: Filled
) -> None:
    form = {"record_id": filled.quarantined, "csrf": csrf_of(signed_in)}
    response = signed_in.post("/action/approve", data=form, headers={"origin": "http://evil.example"})
    assert response.status_code == 403 and "another site" in response.text
    assert filled.quarantined in queue(filled)


def test_a_host_header_other_than_loopback_is_refused(signed_in: TestClient) -> None:
    response = signed_in.get("/", headers={"host": "evil.example"})
    assert response.status_code == 400 and "127.0.0.1" in response.text


def test_a_server_on_a_port_refuses_another_port_and_the_test_host(opened: OpenedMemory) -> None:
    client = TestClient(create_app(opened, token=TOKEN, port=8123), base_url="http://127.0.0.1:8123")
    assert client.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    assert client.get("/", headers={"host": "127.0.0.1:9999"}).status_code == 400
    assert client.get("/", headers={"host": "testserver"}).status_code == 400


def test_approving_on_the_page_is_logged_as_the_configured_person(
    signed_in: TestClient, filled: Filled
) -> None:
    form = {
        "record_id": filled.quarantined,
        "reason": "checked the file",
        "csrf": csrf_of(signed_in),
        "next": "/review",
    }
    response = signed_in.post("/action/approve", data=form)
    assert response.status_code == 303 and response.headers["location"] == "/review"
    assert f"approved {filled.quarantined} (by owner)" in text_of(signed_in.get("/review").text)
    assert filled.quarantined not in queue(filled)
    (entry,) = [
        e for e in filled.ok("log", "--json").splitlines() if filled.quarantined in e and "approve" in e
    ]
    assert json.loads(entry)["actor"] == "owner"


def test_a_refused_action_shows_the_cli_message_and_writes_nothing(
    signed_in: TestClient, filled: Filled
) -> None:
    cli = filled.cli("approve", filled.plain)
    assert cli.returncode == 3
    before = filled.ok("log", "--json")
    form = {"record_id": filled.plain, "csrf": csrf_of(signed_in), "next": "/"}
    signed_in.post("/action/approve", data=form)
    page = text_of(signed_in.get("/").text)
    assert cli.stderr.strip() and cli.stderr.strip() in page
    assert filled.ok("log", "--json") == before


def test_erase_needs_the_confirmation_and_the_authority_as_in_the_cli(
    signed_in: TestClient, filled: Filled
) -> None:
    csrf = csrf_of(signed_in)
    form = {"record_id": filled.plain, "reason": "asked", "authority": "ana", "csrf": csrf, "next": "/"}
    signed_in.post("/action/erase", data=form)
    assert "aborted: erasing cannot be undone" in text_of(signed_in.get("/").text)
    signed_in.post("/action/erase", data={**form, "authority": "", "confirm": "yes"})
    assert "an erasure needs a non-empty authority" in text_of(signed_in.get("/").text)
    assert not json.loads(filled.ok("show", filled.plain, "--json")).get("redacted")
    signed_in.post("/action/erase", data={**form, "confirm": "yes"})
    assert "memerase-" in signed_in.get("/").text
    assert json.loads(filled.ok("show", filled.plain, "--json"))["redacted"] is True


def test_a_filter_outside_its_vocabulary_is_refused_naming_it(signed_in: TestClient) -> None:
    response = signed_in.get("/?state=deleted")
    assert response.status_code == 400 and "state" in response.text and "deleted" in response.text


def test_filters_select_by_review_state_and_taint(signed_in: TestClient, filled: Filled) -> None:
    quarantined = signed_in.get("/?review=quarantined").text
    assert filled.quarantined in quarantined and filled.plain not in quarantined
    untainted = signed_in.get("/?taint=none").text
    assert filled.plain in untainted and filled.quarantined not in untainted


def test_search_shows_recalls_ranking_with_scores_and_reasons(signed_in: TestClient, filled: Filled) -> None:
    recalled = json.loads(filled.ok("recall", "staging db", "--json"))["records"]
    text = signed_in.get("/?q=staging+db").text
    shown = re.findall(r'class="record-link" href="/record/(mem:[0-9a-f]{32})"', text)
    assert shown == [r["id"] for r in recalled]
    assert f"{recalled[0]['score']:.3f}" in text and recalled[0]["reasons"][0] in text_of(text)


def test_a_note_the_index_has_not_read_is_marked_stale_until_the_next_search(
    signed_in: TestClient, filled: Filled
) -> None:
    from agent_memory.home import Home
    from agent_memory.records.record import MemoryRecord, Provenance
    from agent_memory.records.signing import sign_record
    from agent_memory.records.wire import utc_now
    from agent_memory.ui.browse import INDEX_BEHIND

    late = MemoryRecord.create(
        type="fact",
        body="Payroll runs on the 25th",
        provenance=Provenance(kind="file", ref="pay.md"),
        created_at=utc_now(),
    )
    assert 'id="stale"' not in signed_in.get(f"/record/{filled.plain}").text
    opened = Home.open(filled.root)  # another writer of this Home (signing as it does): notes only
    opened.store().put(sign_record(late, opened.identity()))
    page = signed_in.get(f"/record/{late.id}").text
    assert 'id="stale"' in page and INDEX_BEHIND in text_of(page)
    assert late.id in signed_in.get("/?q=when+does+payroll+run").text  # the search reads it in
    assert 'id="stale"' not in signed_in.get(f"/record/{late.id}").text


def test_a_view_older_than_the_notes_is_marked_stale_with_what_to_run(
    signed_in: TestClient, filled: Filled
) -> None:
    assert 'id="current"' in signed_in.get("/agent").text
    filled.ok("remember", "The office moves to the fourth floor in June")
    page = signed_in.get("/agent").text
    stale = text_of(page.split('id="stale"')[1].split("</p>")[0])
    assert "MEMORY.md" in stale and "Run agent-memory render" in stale
    assert 'id="view-stale"' in page
    filled.ok("render")
    again = signed_in.get("/agent").text
    assert 'id="current"' in again and 'id="stale"' not in again


def test_a_tampered_note_is_refused_on_its_page_and_left_out_of_the_list(
    signed_in: TestClient, filled: Filled, opened: OpenedMemory
) -> None:
    # Issue 20 item d: the record page and Memory.history read through the verified read path.
    from uikit import QUARANTINED

    from agent_memory.errors import SignatureError

    assert QUARANTINED in text_of(signed_in.get(f"/record/{filled.quarantined}").text)
    before = re.findall(r'href="/record/(mem:[0-9a-f]{32})"', signed_in.get("/?state=active").text)
    assert filled.quarantined in before  # the list is loaded: later changes are read one by one
    note = filled.root / "notes" / filled.quarantined.removeprefix("mem:") / "000001.md"
    note.write_text(re.sub(r"(?m)^taint: .*\n", "", note.read_text("utf-8")), "utf-8")
    page = signed_in.get(f"/record/{filled.quarantined}")
    assert page.status_code == 400 and "does not verify" in text_of(page.text)
    assert QUARANTINED not in text_of(page.text)
    with pytest.raises(SignatureError, match="version 1"):
        opened.memory.history(filled.quarantined)
    opened.memory.log.append("put", actor="test", record_ids=(filled.quarantined,))  # a logged change
    listed = re.findall(r'href="/record/(mem:[0-9a-f]{32})"', signed_in.get("/?state=active").text)
    assert filled.plain in listed and filled.quarantined not in listed
