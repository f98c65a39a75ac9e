"""`memory.toml`: the settings of a Home, read strictly (DESIGN.md §3, §9).

The file is small and human-edited; every key is documented in the template written by
``agent-memory init`` and in ``docs/settings.md``. Unknown keys are refused so that a typo
never silently falls back to a default. Settings are read with the standard library's
``tomllib`` (TOML 1.0).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_memory.errors import ConfigError
from agent_memory.governance.actors import Actors
from agent_memory.governance.secrets import SecretsSettings
from agent_memory.records.wire import toml_string
from agent_memory.search.recipes import SearchSettings

__all__ = [
    "HOME_FORMAT",
    "RECENCY_MODES",
    "LLMSettings",
    "RecallSettings",
    "Settings",
    "config_dir",
    "default_key_file",
]

HOME_FORMAT = "agent-memory-home/1"
_TOP_KEYS = {
    "format",
    "home_id",
    "timezone",
    "identity",
    "actors",
    "trust",
    "search",
    "secrets",
    "llm",
    "recall",
}

RECENCY_MODES: tuple[str, ...] = ("valid", "updated", "off")
"""How recall counts a record's age: from the start of its valid time (the default: when the fact
began to hold, ``occurred_at`` for an event), from ``updated_at`` (seed 001), or not at all."""
RECENCY_WEIGHT = 0.1
"""The default share of a match's score that recency can take away (issue 21; see RecallSettings)."""


def config_dir() -> Path:
    """Return the user's agent-memory config folder: ``$XDG_CONFIG_HOME/agent-memory`` or ``~/.config/…``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agent-memory"


def default_key_file(home_id: str) -> Path:
    """Return where a Home's key lives by default: outside its git tree, in the config folder."""
    return config_dir() / "keys" / f"{home_id}.key"


_LLM_KEYS = {
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "timeout_seconds": int,
    "max_retries": int,
    "batch_lines": int,
    "json_mode": bool,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMSettings:
    """The ``[llm]`` table of ``memory.toml``: where ``distill --operator llm`` sends archived lines.

    Attributes:
        base_url: The endpoint's base URL, ``http(s)://host[:port]/v1``.
        model: The model name the server knows.
        api_key_env: Name of the environment variable holding the API key; ``""`` for an
            endpoint that needs none.
        timeout_seconds: Per request, ≥ 1.
        max_retries: Retries of a failed request by the client (≥ 0).
        batch_lines: Archived lines per request, ≥ 1.
        json_mode: Ask for ``response_format: json_object`` (turn off for servers without it).
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout_seconds: int = 60
    max_retries: int = 2
    batch_lines: int = 20
    json_mode: bool = True

    @classmethod
    def from_toml(cls, table: Any, path: str | None = None) -> LLMSettings:
        """Read the ``[llm]`` table.

        Raises:
            ConfigError: Not a table, an unknown or mistyped key, a missing ``base_url`` or
                ``model``, a URL that is not http(s), or a number out of range (key named).
        """
        if not isinstance(table, Mapping):
            raise ConfigError("must be a table", path=path, field="llm")
        unknown = sorted(set(table) - set(_LLM_KEYS))
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=path, field=f"llm.{unknown[0]}")
        for key, kind in _LLM_KEYS.items():
            value = table.get(key)
            if key in table and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
                raise ConfigError(f"must be a {kind.__name__}", path=path, field=f"llm.{key}")
        for key in ("base_url", "model"):
            if not table.get(key):
                raise ConfigError("required setting is missing", path=path, field=f"llm.{key}")
        if not re.match(r"\Ahttps?://\S+\Z", table["base_url"]):
            raise ConfigError("must be an http:// or https:// URL", path=path, field="llm.base_url")
        found = cls(**table)
        for key, least in (("timeout_seconds", 1), ("max_retries", 0), ("batch_lines", 1)):
            if getattr(found, key) < least:
                raise ConfigError(f"must be at least {least}", path=path, field=f"llm.{key}")
        return found

    def to_toml(self) -> str:
        """Render the commented ``[llm]`` section."""
        return (
            "[llm]\n"
            "# An OpenAI-compatible chat endpoint for `agent-memory distill --operator llm`.\n"
            f"base_url = {toml_string(self.base_url)}\n"
            f"model = {toml_string(self.model)}\n"
            '# The environment variable holding the API key ("" when the endpoint needs none).\n'
            f"api_key_env = {toml_string(self.api_key_env)}\n"
            f"timeout_seconds = {self.timeout_seconds}\n"
            f"max_retries = {self.max_retries}\n"
            f"batch_lines = {self.batch_lines}\n"
            f"json_mode = {'true' if self.json_mode else 'false'}\n"
        )


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """The ``[recall]`` table of ``memory.toml``: how recall weighs a record's age.

    The score is multiplied by ``1 − w · (1 − max(0.1, 0.5^(age/half-life)))``: seed 001's decay
    (origin-notes §1.13, DESIGN.md §5) taking at most the share ``w`` of a match's score, so a
    recent record wins between matches of near-equal relevance but never buries a better match
    (issue 21: with ``w`` = 1, seed 001 exactly, ``Memory.recall`` on remembered LoCoMo turns
    found 0.36 of the evidence in its top 10 where its index found 0.81). The age counts from
    the start of the record's valid time by default, so remembered notes and imported ones with
    the same dates rank alike (docs/settings.md, docs/benchmarks.md "Retrieval quality").

    Attributes:
        recency: ``valid`` (default: age from ``valid_from``, else ``occurred_at``, else
            ``created_at``), ``updated`` (from ``updated_at``, seed 001) or ``off`` (every
            record's recency is 1.0).
        recency_half_life_days: Days (> 0, finite) after which the decay halves; 30 by default.
        recency_weight: ``w`` in [0, 1]; 0.1 by default, 1 for seed 001's rule.

    Raises:
        ConfigError: ``recency`` is not one of :data:`RECENCY_MODES`, the half-life is not a
            finite number of days above 0, or the weight is not a number in [0, 1] (the dotted
            field named).
    """

    recency: str = "valid"
    recency_half_life_days: float = 30.0
    recency_weight: float = RECENCY_WEIGHT

    def __post_init__(self) -> None:
        _check_recall(self.recency, self.recency_half_life_days, None)
        _check_weight(self.recency_weight, None)

    @property
    def half_life_days(self) -> float | None:
        """The half-life recall uses, in days; ``None`` when recency is off."""
        return None if self.recency == "off" else float(self.recency_half_life_days)

    @classmethod
    def from_toml(cls, table: Any, path: str | None = None) -> RecallSettings:
        """Read the ``[recall]`` table (``{}`` when absent: the defaults).

        Raises:
            ConfigError: Not a table, an unknown key, or a bad value (``path`` and the
                dotted key named).
        """
        if not isinstance(table, Mapping):
            raise ConfigError("must be a table", path=path, field="recall")
        unknown = sorted(set(table) - {"recency", "recency_half_life_days", "recency_weight"})
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=path, field=f"recall.{unknown[0]}")
        recency = table.get("recency", "valid")
        half_life = table.get("recency_half_life_days", 30.0)
        weight = table.get("recency_weight", RECENCY_WEIGHT)
        _check_recall(recency, half_life, path)
        _check_weight(weight, path)
        return cls(recency=recency, recency_half_life_days=float(half_life), recency_weight=float(weight))

    def to_toml(self) -> str:
        """Render the commented ``[recall]`` section of the template."""
        return (
            "[recall]\n"
            "# Recall multiplies each match by its recency, 1 - weight * (1 - max(0.1, 0.5^(age /\n"
            '# half-life))), the age counted from when the fact began to hold ("valid"), or from when\n'
            '# the record was last written ("updated"); "off" gives every record recency 1.0.\n'
            f"recency = {toml_string(self.recency)}\n"
            "# Days after which the decay halves.\n"
            f"recency_half_life_days = {float(self.recency_half_life_days)!r}\n"
            "# The share of a match's score recency can take away: 1.0 is seed 001's rule.\n"
            f"recency_weight = {float(self.recency_weight)!r}\n"
        )

    @property
    def weight(self) -> float:
        """The share of a score recency can take away, in [0, 1]; 0 when recency is off."""
        return 0.0 if self.recency == "off" else float(self.recency_weight)


def _check_weight(weight: Any, path: str | None) -> None:
    number = isinstance(weight, int | float) and not isinstance(weight, bool)
    if not number or not 0 <= weight <= 1:  # NaN fails both comparisons
        raise ConfigError(
            f"must be a number in [0, 1], got {weight!r}", path=path, field="recall.recency_weight"
        )


def _check_recall(recency: Any, half_life: Any, path: str | None) -> None:
    if not isinstance(recency, str) or recency not in RECENCY_MODES:
        raise ConfigError(
            f"must be one of {', '.join(RECENCY_MODES)}, got {recency!r}", path=path, field="recall.recency"
        )
    number = isinstance(half_life, int | float) and not isinstance(half_life, bool)
    if not number or not math.isfinite(half_life) or half_life <= 0:
        raise ConfigError(
            f"must be a number of days above 0, got {half_life!r}",
            path=path,
            field="recall.recency_half_life_days",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The parsed ``memory.toml`` of a Home.

    Attributes:
        home_id: A random hex id naming this Home (it names the default key file).
        timezone: IANA zone deciding the user's local day (inbox ids, archive file names).
        key_file: Path of the Home's Ed25519 key pair (outside the Home's git tree).
        actors: The ``[actors]`` table: the owner (whom CLI calls act as; every grant) and the
            grants of other actors (:mod:`agent_memory.governance.actors`).
        trusted_signers: ``amp:key:`` addresses whose signed records import untainted; the
            Home's own key is always trusted.
        format: The Home format tag, ``agent-memory-home/1``.
        search: The ``[search]`` table: which index recipes recall reads, and the Home's own
            recipes (:mod:`agent_memory.search.recipes`).
        secrets: The ``[secrets]`` table: refuse or redact a write holding a credential
            (:mod:`agent_memory.governance.secrets`).
        llm: The ``[llm]`` table: the OpenAI-compatible endpoint of ``distill --operator llm``
            (:mod:`agent_memory.jobs.distill_llm`), ``None`` when absent.
        recall: The ``[recall]`` table: how recall weighs a record's age (:class:`RecallSettings`).
    """

    home_id: str
    timezone: str = "UTC"
    key_file: Path
    actors: Actors = field(default_factory=Actors)
    trusted_signers: tuple[str, ...] = field(default_factory=tuple)
    format: str = HOME_FORMAT
    search: SearchSettings = field(default_factory=SearchSettings)
    secrets: SecretsSettings = field(default_factory=SecretsSettings)
    llm: LLMSettings | None = None
    recall: RecallSettings = field(default_factory=RecallSettings)

    @property
    def owner(self) -> str:
        """The actor CLI calls act as (``[actors] owner``, ``owner`` by default)."""
        return self.actors.owner

    @property
    def zone(self) -> ZoneInfo:
        """The time zone object for :attr:`timezone`."""
        return ZoneInfo(self.timezone)

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read and validate ``memory.toml``.

        Raises:
            ConfigError: Missing, not TOML, an unknown or mistyped key, an unknown format or
                time zone; the path and the key are named.
        """
        name = str(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(
                "no memory.toml here: this is not a Home",
                path=name,
                hint="create one with: agent-memory init PATH",
            ) from None
        except NotADirectoryError:
            # --home names a file: say so, as init does, instead of an errno about memory.toml.
            raise ConfigError(
                "is a file, not a Home folder",
                path=str(path.parent),
                hint="pass --home the folder of a Home (agent-memory init PATH makes one)",
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", path=name) from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"not valid TOML: {exc}", path=name) from None
        except ValueError as exc:  # valid TOML Python cannot hold, e.g. an integer of 5,000 digits
            raise ConfigError(f"not usable TOML: {exc}", path=name) from None
        return cls._from_toml(data, name)

    @classmethod
    def _from_toml(cls, data: dict[str, Any], name: str) -> Settings:
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise ConfigError(f"unknown settings {unknown}", path=name, field=unknown[0])
        fmt = _get(data, "format", str, name)
        if fmt != HOME_FORMAT:
            raise ConfigError(
                f"unsupported Home format {fmt!r} (this version reads {HOME_FORMAT})",
                path=name,
                field="format",
            )
        home_id = _get(data, "home_id", str, name)
        timezone = _get(data, "timezone", str, name, default="UTC")
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"unknown time zone {timezone!r}", path=name, field="timezone") from None
        identity = _table(data, "identity", {"key_file"}, name)
        trust = _table(data, "trust", {"trusted_signers"}, name)
        key_file = _get(identity, "key_file", str, name, prefix="identity.", default="")
        signers = _get(trust, "trusted_signers", list, name, prefix="trust.", default=[])
        if not all(isinstance(s, str) and s.startswith("amp:key:") for s in signers):
            raise ConfigError(
                "must be a list of amp:key: addresses", path=name, field="trust.trusted_signers"
            )
        return cls(
            home_id=home_id,
            timezone=timezone,
            key_file=Path(os.path.expanduser(key_file)) if key_file else default_key_file(home_id),
            actors=Actors.from_toml(data.get("actors", {}), name),
            trusted_signers=tuple(signers),
            format=fmt,
            search=SearchSettings.from_toml(data.get("search", {}), name),
            secrets=SecretsSettings.from_toml(data.get("secrets", {}), name),
            llm=LLMSettings.from_toml(data["llm"], name) if "llm" in data else None,
            recall=RecallSettings.from_toml(data.get("recall", {}), name),
        )

    def to_toml(self) -> str:
        """Render the settings as the commented ``memory.toml`` template ``init`` writes."""
        signers = ", ".join(toml_string(s) for s in self.trusted_signers)
        llm = "\n" + self.llm.to_toml() if self.llm is not None else ""
        return (
            "# agent-memory Home settings; docs/settings.md lists every key. Unknown keys are refused.\n"
            f"format = {toml_string(self.format)}\n"
            f"home_id = {toml_string(self.home_id)}\n"
            "# IANA time zone that decides the local day of inbox ids and archive files.\n"
            f"timezone = {toml_string(self.timezone)}\n"
            "\n[identity]\n"
            "# The Home's Ed25519 key pair; kept outside the Home so it is never committed.\n"
            f"key_file = {toml_string(str(self.key_file))}\n"
            "\n" + self.actors.to_toml() + "\n[trust]\n"
            "# Signers whose records import without the external taint (this Home's key always does).\n"
            f"trusted_signers = [{signers}]\n"
            "\n" + self.secrets.to_toml() + "\n" + self.recall.to_toml() + "\n" + self.search.to_toml() + llm
        )


def _table(data: dict[str, Any], key: str, allowed: set[str], name: str) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise ConfigError("must be a table", path=name, field=key)
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"unknown settings {unknown}", path=name, field=f"{key}.{unknown[0]}")
    return table


def _get(
    data: dict[str, Any], key: str, kind: type, name: str, *, prefix: str = "", default: Any = None
) -> Any:
    if key not in data:
        if default is None:
            raise ConfigError("required setting is missing", path=name, field=prefix + key)
        return default
    value = data[key]
    if not isinstance(value, kind):
        raise ConfigError(
            f"must be a {kind.__name__}, got {type(value).__name__}", path=name, field=prefix + key
        )
    return value
