"""A rule over MCP, through the real client over stdio: ``remember`` takes ``evidence`` (issue 24 item 5).

The tool offered ``type: rule`` yet had no way to name the records a rule rests on, so every
such call failed with ``a rule needs at least one evidence record id``. The CLI's
``remember --type rule --evidence ID`` and the tool now agree.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from mcp_harness import COMMAND, Connect


def run_cli(*args: str) -> str:
    """Run the installed command (the test's config folder comes from the environment)."""
    assert COMMAND is not None
    done = subprocess.run([COMMAND, *args], capture_output=True, text=True, check=False, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_rule_with_evidence_is_stored_and_one_without_names_the_evidence_argument(
    home: Path, stdio: Connect
) -> None:
    with stdio(home) as client:
        seen = client.ok("remember", text="The Friday deploy broke checkout twice.", type="episode")
        rule = client.ok(
            "remember", text="Never deploy on Fridays.", type="rule", evidence=[seen["record_id"]]
        )
        refused = client.error("remember", text="Always pin versions.", type="rule")
        unknown = client.error(
            "remember", text="Always pin versions.", type="rule", evidence=["mem:" + "0" * 32]
        )
        schema = next(t for t in client.tools() if t.name == "remember").input_schema
    assert rule["record_id"].startswith("mem:")
    assert "a rule needs at least one evidence record id" in refused and "evidence" in refused
    assert f"evidence mem:{'0' * 32} is not in this Home" in unknown
    assert schema["properties"]["evidence"]["anyOf"][0]["type"] == "array"
    shown = json.loads(run_cli("show", rule["record_id"], "--json", "--home", str(home)))
    assert shown["type"] == "rule" and shown["evidence"] == [seen["record_id"]]


def test_the_cli_stores_a_rule_with_evidence_as_the_tool_does(home: Path) -> None:
    seen = run_cli("remember", "The Friday deploy broke checkout.", "--type", "episode", "--home", str(home))
    rule = run_cli(
        "remember",
        "Never deploy on Fridays.",
        "--type",
        "rule",
        "--evidence",
        seen.strip(),
        "--home",
        str(home),
    )
    shown = json.loads(run_cli("show", rule.strip(), "--json", "--home", str(home)))
    assert shown["type"] == "rule" and shown["evidence"] == [seen.strip()]
