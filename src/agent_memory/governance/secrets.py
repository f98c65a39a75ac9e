"""Secret screening: credentials never enter memory (seed 000 §3; issue 6 item 6).

Seed 000 §3: memory is "not a place to store secrets or credentials". Every write path calls
:func:`screen_text` on the text it is about to store, before anything is written:
``Memory.remember`` and ``Memory.supersede`` (the record body), ``capture`` (the inbox line)
and ``import_memory_file`` (each imported body). The ``[secrets]`` table of ``memory.toml``
decides what happens to a finding::

    [secrets]
    on_detect = "refuse"   # or "redact"

- ``refuse`` (the default): a :class:`~agent_memory.errors.RecordError` naming the field and
  the kind of secret, never the secret itself; nothing is written.
- ``redact``: each secret span is replaced by ``[redacted:<kind>]`` and the record is tagged
  ``redacted-secret``.

Detection uses the pattern plugins of ``detect-secrets`` (pinned), called through each
plugin's pure ``analyze_string`` so no process-wide settings are touched. Its entropy plugins
flag ordinary words, its keyword plugin is made for source code and its IP plugin flags
addresses that are not credentials, so those are left out. A plugin may report only part of
a token (``GitHubTokenDetector`` yields the ``ghp`` prefix), so every finding is widened to
the whole token around it. The library is imported only for a line that one of its plugins'
patterns matches (:mod:`.secret_patterns`, a verbatim copy checked against it): an ordinary
sentence is screened without paying ~0.1 s for its import. Our own patterns add what the
library lacks: whole PEM private-key blocks (the library sees only the header), Google API
keys, and the LLM providers' keys that people paste into an agent's chat most often (OpenAI
``sk-…``/``sk-proj-…``, Anthropic ``sk-ant-…``, Hugging Face ``hf_…``, Slack ``xox?-…``,
Stripe ``sk_live_…``/``rk_live_…``) and ``NAME_API_KEY=value`` assignments; each counts only
when what follows its prefix mixes digits and letters as a generated key does, so ordinary
words are never refused.

Invariant: the secret never appears in an error, a log event or a stored byte; only its kind
and position do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from agent_memory.errors import ConfigError, ScreenError
from agent_memory.governance.secret_patterns import PATTERNS, may_hold_secret

__all__ = [
    "ON_DETECT",
    "REDACTED_TAG",
    "SecretFinding",
    "SecretsSettings",
    "find_secrets",
    "policy_of",
    "redact_secrets",
    "screen_text",
]

ON_DETECT: tuple[str, ...] = ("refuse", "redact")
"""What a write does with a secret: refuse it (default) or store the body redacted."""

REDACTED_TAG = "redacted-secret"
"""The tag a record gets when a secret was redacted from its body."""

# detect-secrets plugin class -> our kind word. Entropy, keyword and public-IP plugins are
# deliberately absent (see the module docstring).
_PLUGINS: dict[str, str] = {
    "ArtifactoryDetector": "artifactory-token",
    "AWSKeyDetector": "aws-key",
    "AzureStorageKeyDetector": "azure-storage-key",
    "BasicAuthDetector": "url-password",
    "CloudantDetector": "cloudant-credentials",
    "DiscordBotTokenDetector": "discord-token",
    "GitHubTokenDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "IbmCloudIamDetector": "ibm-cloud-key",
    "IbmCosHmacDetector": "ibm-cos-key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp-key",
    "NpmDetector": "npm-token",
    "OpenAIDetector": "openai-key",
    "PrivateKeyDetector": "private-key",
    "PypiTokenDetector": "pypi-token",
    "SendGridDetector": "sendgrid-key",
    "SlackDetector": "slack-token",
    "SoftlayerDetector": "softlayer-key",
    "SquareOAuthDetector": "square-oauth-secret",
    "StripeDetector": "stripe-key",
    "TelegramBotTokenDetector": "telegram-token",
    "TwilioKeyDetector": "twilio-key",
}

_OWN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # The whole block, in a file or JSON-escaped in a service-account key ("\n" as two characters).
    (
        "private-key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
            re.DOTALL,
        ),
    ),
    ("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
    # The LLM providers' keys, the ones people paste into an agent's chat most (issue 18 case 10).
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("slack-token", re.compile(r"\bx(?:ox[abeoprs]|app)-[A-Za-z0-9\-]{10,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}\b")),
)
"""Our own patterns; a match counts only when the part after its prefix looks random
(:func:`_looks_random`), so ``sk-learn-is-a-python-library`` is not a key."""

# ``NAME_API_KEY=value`` and its kin, in an .env line, a shell export or a config snippet; the
# finding is the value (group 1), so a redacted text keeps the name.
_ASSIGNMENT = re.compile(
    r"\b[A-Z][A-Z0-9_]*(?:API_KEY|APIKEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY|_PASSWORD|_PASSWD)"
    r"\s*[:=]\s*[\"']?([^\s\"'`]{8,})"
)

_PREFIX = re.compile(
    r"\A(?:sk-ant-[A-Za-z0-9]{2,8}-|sk-(?:proj-|svcacct-|admin-)?|hf_|x(?:ox[abeoprs]|app)-|[rs]k_live_)"
)


def _looks_random(token: str, *, assigned: bool = False) -> bool:
    """Whether ``token`` (past its known prefix) looks generated rather than written.

    A provider's key is 20 or more random characters: upper and lower case letters, and a
    digit unless it is long (Hugging Face tokens are letters only). Words joined by hyphens
    (``sk-2024-budget-notes``), placeholders (``<your-key>``, ``${OPENAI_API_KEY}``,
    ``xxxxxxxx``) and file names are not. The value of a ``NAME_API_KEY=`` assignment (``assigned``)
    needs less: a digit or both cases (``hunter2hunter2`` counts, ``your_key_here`` does not).
    """
    rest = _PREFIX.sub("", token)
    if rest[:1] in ("$", "<", "{", "%", "*", ".", "\u2026") or len(set(rest)) < 6:
        return False
    upper = any(c.isupper() for c in rest)
    lower = any(c.islower() for c in rest)
    digit = any(c.isdigit() for c in rest)
    if assigned:
        return digit or (upper and lower)
    return upper and lower and (digit or len(rest) >= 30)


# A secret is never half a token: findings widen over these characters on both sides.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_+=\-]")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One secret found in a text.

    Attributes:
        kind: The kind word (``github-token``, ``aws-key``, ``private-key``, ``url-password``…).
        start: Offset of its first character (characters, not bytes).
        end: Offset one past its last character.
    """

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SecretsSettings:
    """The ``[secrets]`` table of ``memory.toml``.

    Attributes:
        on_detect: ``refuse`` (default) or ``redact``.

    Raises:
        ConfigError: ``on_detect`` is not one of :data:`ON_DETECT`.
    """

    on_detect: str = "refuse"

    def __post_init__(self) -> None:
        if self.on_detect not in ON_DETECT:
            raise ConfigError(
                f"must be one of {', '.join(ON_DETECT)}, got {self.on_detect!r}", field="secrets.on_detect"
            )

    @classmethod
    def from_toml(cls, table: Any, path: str | None = None) -> SecretsSettings:
        """Read the ``[secrets]`` table (``{}`` when absent).

        Raises:
            ConfigError: Not a table, an unknown key, or an ``on_detect`` value not in
                :data:`ON_DETECT` (``path`` and the dotted key named).
        """
        if not isinstance(table, Mapping):
            raise ConfigError("must be a table", path=path, field="secrets")
        unknown = sorted(set(table) - {"on_detect"})
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=path, field=f"secrets.{unknown[0]}")
        value = table.get("on_detect", "refuse")
        if value not in ON_DETECT:
            raise ConfigError(
                f"must be one of {', '.join(ON_DETECT)}, got {value!r}", path=path, field="secrets.on_detect"
            )
        return cls(on_detect=value)

    def to_toml(self) -> str:
        """Render the commented ``[secrets]`` section of the template."""
        return (
            "[secrets]\n"
            "# Memory never stores credentials (keys, tokens, passwords in URLs). On a finding:\n"
            '# "refuse" the write with an error naming the kind, or "redact" the secret to\n'
            '# [redacted:<kind>] and tag the record "redacted-secret".\n'
            f'on_detect = "{self.on_detect}"\n'
        )


def policy_of(owner: object) -> SecretsSettings:
    """Return the secrets policy of a Home, or of the Home a Memory was opened on.

    Args:
        owner: A :class:`~agent_memory.home.Home` (its ``settings``), a Memory opened on a
            Home (its ``home.settings``), or anything else (an in-memory Memory).

    Returns:
        The Home's ``[secrets]`` settings; the default (``refuse``) when there is no Home.
    """
    home = getattr(owner, "home", owner)
    settings = getattr(home, "settings", None)
    found = getattr(settings, "secrets", None)
    return found if isinstance(found, SecretsSettings) else SecretsSettings()


def find_secrets(text: str) -> list[SecretFinding]:
    """Return the secrets in ``text``, sorted by position, overlapping findings merged.

    Args:
        text: Any text (a body, an inbox line); scanned line by line by the library
            plugins and as a whole by our own patterns (PEM blocks span lines).

    Returns:
        Non-overlapping findings; where two overlap, the merged span keeps the kind of the
        one that starts first.
    """
    found: list[SecretFinding] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if not may_hold_secret(line):  # no plugin pattern matches: the library would find nothing
            offset += len(line)
            continue
        for kind, plugin in _plugins():
            for value in set(plugin.analyze_string(line)):
                if not value:
                    continue
                for match in re.finditer(re.escape(value), line):
                    start, end = _widen(line, match.start(), match.end())
                    found.append(SecretFinding(kind, offset + start, offset + end))
        offset += len(line)
    for kind, pattern in _OWN_PATTERNS:
        for match in pattern.finditer(text):
            if kind in ("private-key", "gcp-api-key") or _looks_random(match.group()):
                found.append(SecretFinding(kind, match.start(), match.end()))
    for match in _ASSIGNMENT.finditer(text):
        if _looks_random(match.group(1), assigned=True):
            found.append(SecretFinding("api-key-assignment", match.start(1), match.end(1)))
    return _merge(found)


def redact_secrets(text: str, findings: Iterable[SecretFinding]) -> str:
    """Return ``text`` with each finding's span replaced by ``[redacted:<kind>]``."""
    parts: list[str] = []
    cursor = 0
    for finding in sorted(findings, key=lambda f: f.start):
        parts.append(text[cursor : finding.start])
        parts.append(f"[redacted:{finding.kind}]")
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def screen_text(
    text: str,
    *,
    field: str,
    policy: object = None,
    tags: Iterable[str] = (),
    record_id: str | None = None,
    path: str | None = None,
) -> tuple[str, tuple[str, ...]]:
    """Screen ``text`` for secrets before it is stored; return the text and tags to store.

    Args:
        text: What the caller is about to store.
        field: The field it goes to (``text``, ``body``), named in the error.
        policy: The ``[secrets]`` settings, or a Home or Memory whose settings decide
            (:func:`policy_of`); refuse when ``None`` or there is no Home.
        tags: The record's tags; :data:`REDACTED_TAG` is appended when something was redacted.
        record_id: The record concerned (imports), named in the error.
        path: The file concerned (imports), named in the error.

    Returns:
        ``(text, tags)`` unchanged when no secret is found; with ``redact``, the text with
        every secret replaced by ``[redacted:<kind>]`` and the tags plus ``redacted-secret``.

    Raises:
        ScreenError: With ``refuse``, a secret was found: the message names the field and the
            kinds found, never the secret; the caller has written nothing.
    """
    kept = tuple(tags)
    findings = find_secrets(text)
    if not findings:
        return text, kept
    kinds = sorted({finding.kind for finding in findings})
    settings = policy if isinstance(policy, SecretsSettings) else policy_of(policy)
    if settings.on_detect == "refuse":
        raise ScreenError(
            f"holds what looks like a secret ({', '.join(kinds)}): memory never stores credentials "
            "(seed 000 §3); refused, nothing was written",
            path=path,
            record_id=record_id,
            field=field,
            hint='remove it and keep a pointer to where it lives, or set [secrets] on_detect = "redact"',
            hazard="secret",
        )
    tagged = kept if REDACTED_TAG in kept else (*kept, REDACTED_TAG)
    return redact_secrets(text, findings), tagged


@cache
def _plugins() -> tuple[tuple[str, Any], ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugin_classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    classes = {plugin.__name__: plugin for plugin in plugin_classes}
    missing = sorted(set(_PLUGINS) - set(classes))
    if missing:  # a detect-secrets release that renamed a plugin must not narrow screening silently
        raise ImportError(f"detect-secrets lacks the plugins {missing}; agent-memory pins 1.5.0")
    plugins = tuple((kind, classes[name]()) for name, kind in _PLUGINS.items())
    # The pre-screen skips the library on lines its table does not match: a release whose
    # patterns differ from the table would narrow screening silently, so it is refused.
    changed = sorted(
        name
        for (_, plugin), name in zip(plugins, _PLUGINS, strict=True)
        if tuple((p.pattern, p.flags & ~re.UNICODE) for p in plugin.denylist) != PATTERNS.get(name)
    )
    if changed:
        raise ImportError(
            f"the patterns of the detect-secrets plugins {changed} differ from"
            " agent_memory.governance.secret_patterns; agent-memory pins 1.5.0"
        )
    return plugins


def _widen(line: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _TOKEN_CHAR.match(line[start - 1]):
        start -= 1
    while end < len(line) and _TOKEN_CHAR.match(line[end]):
        end += 1
    return start, end


def _merge(found: list[SecretFinding]) -> list[SecretFinding]:
    merged: list[SecretFinding] = []
    for finding in sorted(found, key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = SecretFinding(last.kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged
