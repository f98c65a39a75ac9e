"""Issue 20 case 3 and issue 19 case 5: holders that mean one Home, and receipts that name every export.

``cp -a A B; agent-memory erase ID --home B`` must never rewrite A's files: the export A kept
in ``A/exports/`` is logged relative to the Home (B rewrites its own copy), and an export
outside the Home is logged with the root of the Home that made it, so B lists it as
``unevaluated`` (``export-of-another-home``) and leaves it, while an erase in A rewrites it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from installed import Cli

PRIVATE = "The vault combination is zq7734 left right left."


def _home_with_exports(cli: Cli) -> tuple[Path, str, Path]:
    a = cli.home("a")
    record_id = cli.ok("remember", PRIVATE, "--source", "owner", "--home", str(a)).strip()
    (a / "exports").mkdir()
    cli.ok("export", str(a / "exports" / "x.json"), "--home", str(a))
    outside = cli.root / "backup.json"
    cli.ok("export", str(outside), "--home", str(a))
    return a, record_id, outside


def _erase(cli: Cli, home: Path, record_id: str) -> dict[str, str]:
    out = cli.ok(
        "erase",
        record_id,
        "--reason",
        "request",
        "--authority",
        "ada",
        "--yes",
        "--json",
        "--home",
        str(home),
    )
    receipt = json.loads(out)
    receipt = receipt.get("receipt", receipt)
    return {
        h["holder_ref"]: f"{h['result']} {h.get('limitation_ref') or ''}".strip() for h in receipt["holders"]
    }


def test_erasing_in_a_copied_home_never_touches_the_original_homes_files(cli: Cli) -> None:
    a, record_id, outside = _home_with_exports(cli)
    b = cli.root / "b"
    shutil.copytree(a, b, symlinks=True)
    before_a = {p: p.read_bytes() for p in sorted(a.rglob("*")) if p.is_file()}
    before_outside = outside.read_bytes()
    holders = _erase(cli, b, record_id)
    assert {p: p.read_bytes() for p in sorted(a.rglob("*")) if p.is_file()} == before_a
    assert outside.read_bytes() == before_outside and PRIVATE.encode() in before_outside
    assert PRIVATE.encode() not in (b / "exports" / "x.json").read_bytes()
    assert holders["exports/"] == "completed"
    assert holders[f"export:{outside}"] == "unevaluated export-of-another-home"


def test_the_receipt_names_every_logged_export_and_the_home_that_made_one_rewrites_it(cli: Cli) -> None:
    a, record_id, outside = _home_with_exports(cli)
    gone = cli.root / "gone.json"
    cli.ok("export", str(gone), "--home", str(a))
    gone.unlink()
    holders = _erase(cli, a, record_id)
    assert holders[f"export:{outside}"] == "completed"
    assert PRIVATE.encode() not in outside.read_bytes()
    assert holders[f"export:{gone}"] == "unevaluated export-missing"
    log = "".join(p.read_text("utf-8") for p in sorted((a / "log").glob("*.jsonl")))
    assert '"path":"exports/x.json"' in log and f'"home":"{a}"' in log
