"""The regular expressions of the detect-secrets plugins the screen uses: a sound pre-screen.

Importing ``detect-secrets`` costs about 0.1 s (its plugins import ``requests``), more than the
rest of a CLI ``remember`` together (issue 24 item 3). Every plugin :mod:`.secrets` uses is a
``RegexBasedDetector``: it reports on a line only matches of its ``denylist`` patterns on that
line (the JWT plugin keeps only some of them). So a line that none of :data:`PATTERNS` matches
holds no finding of the library, and :func:`.secrets.find_secrets` imports the library only for
a line one of them matches (a URL with a password, something shaped like a token); an ordinary
sentence never loads it.

The patterns are copied verbatim from detect-secrets 1.5.0 (Apache License 2.0, Yelp), the
version pinned in ``pyproject.toml``. Invariant: :data:`PATTERNS` equals the plugins' denylists,
pattern for pattern and flag for flag; ``tests/governance/test_secret_patterns.py`` compares
them, and :mod:`.secrets` compares them again whenever it loads the library, refusing to screen
with a table that is not the library's.

Most of a line's cost was four keyword-and-value patterns (Cloudant, IBM, SoftLayer) that
sre tries at every position. :data:`GUARDS` puts a guard before some patterns: a literal that
every match of the pattern holds, compiled with the pattern's own flags (so case folding is
the same). A line the guard finds nothing in cannot match the pattern, which is then not tried,
so :func:`may_hold_secret` answers as before (issue 23: the pre-screen 2.3x faster per note,
``bench/screen.py``).
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["GUARDS", "PATTERNS", "may_hold_secret"]

PATTERNS: dict[str, tuple[tuple[str, int], ...]] = {
    "ArtifactoryDetector": (
        ('(?:\\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\\s|"|$)', 0),
        ('(?:\\s|=|:|"|^)AP[\\dABCDEF][a-zA-Z0-9]{8,}(?:\\s|"|$)', 0),
    ),
    "AWSKeyDetector": (
        ("(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", 0),
        (
            "aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\\'\\\"]([0-9a-zA-Z/+]{40})[\\'\\\"]",
            re.IGNORECASE,
        ),
    ),
    "AzureStorageKeyDetector": (("AccountKey=[a-zA-Z0-9+\\/=]{88}", 0),),
    "BasicAuthDetector": (
        (
            "://[^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+:([^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s"
            "]+)@",
            0,
        ),
    ),
    "CloudantDetector": (
        (
            "(?:(?<=\\W)|(?<=^))(?:\\[|)(?:\"|\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?"
            ":key|pwd|pw|password|pass|token)(?:\"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::"
            ")(?: *)(?:\"|\\'|)([0-9a-f]{64})(?:\"|\\'|)",
            re.IGNORECASE,
        ),
        (
            "(?:(?<=\\W)|(?<=^))(?:\\[|)(?:\"|\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?"
            ":key|pwd|pw|password|pass|token)(?:\"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::"
            ")(?: *)(?:\"|\\'|)([a-z]{24})(?:\"|\\'|)",
            re.IGNORECASE,
        ),
        ("(?:https?\\:\\/\\/)[\\w\\-]+\\:([0-9a-f]{64})\\@[\\w\\-]+\\.cloudant\\.com", re.IGNORECASE),
        ("(?:https?\\:\\/\\/)[\\w\\-]+\\:([a-z]{24})\\@[\\w\\-]+\\.cloudant\\.com", re.IGNORECASE),
    ),
    "DiscordBotTokenDetector": (("[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}", 0),),
    "GitHubTokenDetector": (("(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", 0),),
    "GitLabTokenDetector": (
        ("(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)", 0),
        ("GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)", 0),
        ("glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)", 0),
        ("glimt-[A-Za-z0-9_\\-]{25}(?!\\w)", 0),
        ("glptt-[A-Za-z0-9_\\-]{40}(?!\\w)", 0),
        ("glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)", 0),
        ("gloas-[A-Za-z0-9_\\-]{64}(?!\\w)", 0),
    ),
    "IbmCloudIamDetector": (
        (
            "(?:(?<=\\W)|(?<=^))(?:\\[|)(?:\"|\\'|)(?:ibm(?:_|-|)cloud(?:_|-|)iam|cloud(?"
            ":_|-|)iam|ibm(?:_|-|)cloud|ibm(?:_|-|)iam|ibm|iam|cloud|)(?:_|-|)(?:api|"
            ")(?:_|-|)(?:key|pwd|password|pass|token)(?:\"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|"
            "=>| +|::)(?: *)(?:\"|\\'|)([a-zA-Z0-9_\\-]{44}(?![a-zA-Z0-9_\\-]))(?:\"|\\'|)",
            re.IGNORECASE,
        ),
    ),
    "IbmCosHmacDetector": (
        (
            "(?:(?<=\\W)|(?<=^))(?:\\[|)(?:\"|\\'|)(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)(?:"
            "_|-|)(?:secret[-_]?(?:access)?[-_]?key)(?:\"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|="
            ">| +|::)(?: *)(?:\"|\\'|)([a-f0-9]{48}(?![a-f0-9]))(?:\"|\\'|)",
            re.IGNORECASE,
        ),
    ),
    "JwtTokenDetector": (("eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?", 0),),
    "MailchimpDetector": (("[0-9a-z]{32}-us[0-9]{1,2}", 0),),
    "NpmDetector": (("\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", 0),),
    "OpenAIDetector": (("sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", 0),),
    "PrivateKeyDetector": (
        ("BEGIN DSA PRIVATE KEY", 0),
        ("BEGIN EC PRIVATE KEY", 0),
        ("BEGIN OPENSSH PRIVATE KEY", 0),
        ("BEGIN PGP PRIVATE KEY BLOCK", 0),
        ("BEGIN PRIVATE KEY", 0),
        ("BEGIN RSA PRIVATE KEY", 0),
        ("BEGIN SSH2 ENCRYPTED PRIVATE KEY", 0),
        ("PuTTY-User-Key-File-2", 0),
    ),
    "PypiTokenDetector": (
        ("pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", 0),
        ("pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", 0),
    ),
    "SendGridDetector": (("SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}", 0),),
    "SlackDetector": (
        ("xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+", re.IGNORECASE),
        (
            "https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
            re.IGNORECASE | re.VERBOSE,
        ),
    ),
    "SoftlayerDetector": (
        (
            "(?:(?<=\\W)|(?<=^))(?:\\[|)(?:\"|\\'|)(?:softlayer|sl)(?:_|-|)(?:api|)(?:_|-"
            "|)(?:key|pwd|password|pass|token)(?:\"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|:"
            ":)(?: *)(?:\"|\\'|)([a-z0-9]{64})(?:\"|\\'|)",
            re.IGNORECASE,
        ),
        ("(?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/([a-z0-9]{64})", re.IGNORECASE),
    ),
    "SquareOAuthDetector": (("sq0csp-[0-9A-Za-z\\\\\\-_]{43}", 0),),
    "StripeDetector": (("(?:r|s)k_live_[0-9a-zA-Z]{24}", 0),),
    "TelegramBotTokenDetector": (("\\d{8,10}:[0-9A-Za-z_-]{35}", 0),),
    "TwilioKeyDetector": (
        ("AC[a-z0-9]{32}", 0),
        ("SK[a-z0-9]{32}", 0),
    ),
}
"""Plugin class name -> its ``denylist`` as ``(pattern, flags)`` (``re.UNICODE`` left implied)."""


_KEYWORD = ("key|pw|pass|token", re.IGNORECASE)
"""Every keyword alternative of the assignment patterns below holds one of these (``pwd``,
``password``; IBM COS's ``secret…key``), so one search stands before all six."""

GUARDS: dict[str, tuple[str, int]] = {
    PATTERNS["ArtifactoryDetector"][0][0]: ("AKC", 0),
    PATTERNS["ArtifactoryDetector"][1][0]: ("AP", 0),
    PATTERNS["AWSKeyDetector"][1][0]: _KEYWORD,
    PATTERNS["CloudantDetector"][0][0]: _KEYWORD,
    PATTERNS["CloudantDetector"][1][0]: _KEYWORD,
    PATTERNS["IbmCloudIamDetector"][0][0]: _KEYWORD,
    PATTERNS["IbmCosHmacDetector"][0][0]: _KEYWORD,  # secret[-_]?(?:access)?[-_]?key
    PATTERNS["MailchimpDetector"][0][0]: ("-us", 0),
    PATTERNS["SoftlayerDetector"][0][0]: _KEYWORD,
}
"""Pattern -> ``(guard, flags)``: a literal (or literals) every match of the pattern contains."""


@cache
def _screens() -> tuple[tuple[re.Pattern[str] | None, tuple[re.Pattern[str], ...]], ...]:
    """Return ``(guard or None, patterns)`` groups holding every pattern of :data:`PATTERNS` once."""
    groups: dict[tuple[str, int] | None, list[re.Pattern[str]]] = {}
    for patterns in PATTERNS.values():
        for pattern, flags in patterns:
            groups.setdefault(GUARDS.get(pattern), []).append(re.compile(pattern, flags))
    return tuple(
        (None if guard is None else re.compile(*guard), tuple(found)) for guard, found in groups.items()
    )


def may_hold_secret(line: str) -> bool:
    """Return whether any plugin pattern matches ``line``: False means the library finds nothing there.

    A pattern whose guard (:data:`GUARDS`) finds nothing in the line is not tried: it cannot match.

    Args:
        line: One line of the text being screened (the library scans line by line too).
    """
    for guard, patterns in _screens():
        if guard is not None and guard.search(line) is None:
            continue
        if any(pattern.search(line) for pattern in patterns):
            return True
    return False
