"""The pre-screen of the secrets screen: the library's own patterns, so skipping it never misses a secret."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from test_secrets import ORDINARY, SECRETS  # the fake secrets and ordinary prose of the screen's tests

from agent_memory.governance import secret_patterns, secrets
from agent_memory.governance.secret_patterns import GUARDS, PATTERNS, may_hold_secret
from agent_memory.governance.secrets import find_secrets

CLASSES = {plugin.__name__: plugin for plugin in get_mapping_from_secret_type_to_class().values()}
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "locomo" / "locomo.json"


def test_the_table_holds_exactly_the_denylists_of_the_plugins_the_screen_uses() -> None:
    assert set(PATTERNS) == set(secrets._PLUGINS)
    for name, table in PATTERNS.items():
        denylist = CLASSES[name]().denylist
        assert tuple((p.pattern, p.flags) for p in denylist) == tuple(
            (pattern, flags | 32)
            for pattern, flags in table  # 32: re.UNICODE, implied for str
        ), name


def test_every_plugin_reports_only_matches_of_its_denylist() -> None:
    # The soundness argument of the pre-screen: a plugin finds nothing on a line none of its
    # patterns matches, because it is a RegexBasedDetector whose analyze_string is the base
    # class's findall loop (the JWT plugin filters that loop's output).
    for name in PATTERNS:
        plugin = CLASSES[name]
        assert issubclass(plugin, RegexBasedDetector), name
        own = plugin.analyze_string
        assert own is RegexBasedDetector.analyze_string or plugin is JwtTokenDetector, name


def _lines() -> Iterator[str]:
    for text in [*(text for text, _ in SECRETS.values()), *ORDINARY]:
        yield from text.splitlines(keepends=True)
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text(encoding="utf-8"))
        for sample in data[:3]:
            for key, turns in sample["conversation"].items():
                if key.startswith("session_") and isinstance(turns, list):
                    yield from (turn["text"] for turn in turns)


def test_a_line_the_library_flags_is_always_one_the_table_matches() -> None:
    plugins = secrets._plugins()
    seen = 0
    for line in _lines():
        flagged = any(value for _, plugin in plugins for value in plugin.analyze_string(line))
        seen += flagged
        assert may_hold_secret(line) or not flagged, line
    assert seen >= 8  # the fake secrets were among the lines


# One line per guarded pattern that it matches, in upper and mixed case where its flags fold case.
GUARDED_MATCHES = [
    " AKC" + "a1B2" * 4 + " ",
    '"APB' + "x9" * 6 + '"',
    'aws_secret_token = "' + "A1b2" * 10 + '"',
    'AWS PASSWORD is "' + "Zz09" * 10 + '"',
    'cloudant_apikey = "' + "ab12" * 16 + '"',
    "CL-PWD: " + "abcdefgh" * 3,
    "ibm_cloud_iam_api_token: " + "aB3_" * 11,
    "IBM_COS_HMAC_SECRET_ACCESS_KEY = " + "abcdef12" * 6,
    "ab12" * 8 + "-us12",
    "softlayer_api_Pass => " + "a1b2" * 16,
]


def _every_pattern() -> dict[str, re.Pattern[str]]:
    """Each plugin pattern compiled on its own, as the pre-screen tried them before its guards."""
    return {pattern: re.compile(pattern, flags) for table in PATTERNS.values() for pattern, flags in table}


def test_every_guarded_pattern_is_guarded_by_a_piece_of_its_own_matches() -> None:
    compiled = _every_pattern()
    assert set(GUARDS) <= set(compiled)
    matched = set()
    for line in GUARDED_MATCHES:
        for pattern, (guard, flags) in GUARDS.items():
            found = compiled[pattern].search(line)
            if found is not None:
                matched.add(pattern)
                assert re.search(guard, found.group(), flags), (pattern, line)
        assert may_hold_secret(line), line
    assert matched == set(GUARDS)  # each guarded pattern met at least once


def test_the_guards_change_no_answer_of_the_pre_screen() -> None:
    every = _every_pattern().values()
    lines = [*_lines(), *GUARDED_MATCHES, "the KEY is in the vault", "ſecret_key: nothing"]
    for line in lines:
        assert may_hold_secret(line) == any(p.search(line) for p in every), line


def test_an_ordinary_sentence_is_screened_without_loading_the_library() -> None:
    probe = (
        "import sys; from agent_memory.governance.secrets import find_secrets;"
        " assert find_secrets('Staging runs on db-9 since Monday.') == [];"
        " print('detect_secrets' in sys.modules, 'requests' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_library_whose_patterns_differ_from_the_table_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = {**PATTERNS, "AWSKeyDetector": (("AKIA[0-9A-Z]{16}", 0),)}
    monkeypatch.setattr(secrets, "PATTERNS", changed)
    secrets._plugins.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"AWSKeyDetector.*differ.*pins 1\.5\.0"):
            find_secrets("token ghp_" + "a" * 36)
    finally:
        monkeypatch.undo()
        secrets._plugins.cache_clear()
    assert secret_patterns.PATTERNS is PATTERNS and find_secrets("Staging runs on db-9.") == []
