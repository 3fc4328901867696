"""Configuration: the shipped defaults (``defaults.yaml``) overlaid by a user's YAML file.

Every heuristic is data here, validated by pydantic, so a typo in a user's config is an
error with the key's name rather than a silently ignored setting.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from miner.core.errors import ConfigError

# Where a fix that followed a clean candidate keeps it out, broadest first (miner.stages.clean).
Scope = Literal["directory", "file", "lines"]
SCOPES: tuple[Scope, ...] = ("directory", "file", "lines")

Tier = Literal["explicit", "blame", "plurality", "weak", "heuristic", "diffuse"]
TIERS: tuple[Tier, ...] = ("explicit", "blame", "plurality", "weak", "heuristic", "diffuse")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_regexes(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from exc
    return patterns


def _check_regex(pattern: str) -> str:
    return _check_regexes([pattern])[0]


class FixesConfig(_Section):
    keywords: list[str]
    reject_subjects: list[str]
    link_patterns: list[str]
    revert_pattern: str

    _regexes = field_validator("reject_subjects", "link_patterns")(_check_regexes)


class VetConfig(_Section):
    fix_types: list[str]
    non_fix_types: list[str]
    non_fix_scopes: list[str]
    non_behaviour_subjects: list[str]
    bug_subjects: list[str]
    dependency_files: list[str]
    body_fix_statements: list[str]
    feature_subjects: list[str]
    revert_not_defect: list[str]
    revert_min_words: int = Field(ge=0)

    _regexes = field_validator(
        "non_behaviour_subjects", "bug_subjects", "body_fix_statements", "feature_subjects", "revert_not_defect"
    )(_check_regexes)


class VendorSyncConfig(_Section):
    """How a commit that copies in a third party's code reads: a verb first, then a version, a
    commit id or an upstream named; the tree it changes is vendored from then on."""

    verbs: str
    upstream: str
    max_local_per_sync: int = Field(ge=0)

    _regexes = field_validator("verbs", "upstream")(_check_regex)


class PathsConfig(_Section):
    docs: list[str]
    tests: list[str]
    vendored: list[str]
    generated: list[str]
    config: list[str]
    lockfiles: list[str]
    generated_markers: list[str]
    vendor_syncs: VendorSyncConfig


class BotsConfig(_Section):
    patterns: list[str]

    _regexes = field_validator("patterns")(_check_regexes)


class LabelsConfig(_Section):
    min_tier: Tier
    blame_only: bool
    import_lines: int = Field(gt=0)
    max_intro_changed_lines: int = Field(gt=0)
    max_cosmetic_hops: int = Field(ge=0)
    max_blame_age_days: int = Field(gt=0)
    recent_carry_days: int = Field(ge=0)
    break_ties_by_recency: bool
    max_defect_lines: int = Field(gt=0)
    max_defect_ranges: int = Field(gt=0)
    victim_check: bool
    disturbed_lines: int = Field(ge=0)
    keywords: list[str]

    @field_validator("keywords", mode="before")
    @classmethod
    def _words(cls, value: object) -> object:
        return value.split() if isinstance(value, str) else value  # written as one folded string in YAML


class CleanConfig(_Section):
    _regexes = field_validator("corrections", "release_subjects")(_check_regexes)

    wait_days: int = Field(ge=0)
    admit_young: bool
    fix_window_days: int = Field(ge=0)
    fix_window_scope: Scope
    fix_window_fallback: list[Scope]
    judged_fix_window_fallback: list[Scope]
    survival: bool
    min_survival: float = Field(ge=0, le=1)
    max_changed_lines: int = Field(gt=0)
    min_code_lines: int = Field(ge=0)
    release_subjects: list[str]
    no_review_types: list[str]
    corrections: list[str]
    ratio: float = Field(ge=0)
    min_count: int = Field(ge=0)
    max_count: int = Field(ge=0)


class StripConfig(_Section):
    enabled: bool  # off only to show that `miner audit` catches what stripping removes
    description: Literal["original", "title", "none"]
    comment_markers: list[str]
    trailer_keys: list[str]
    lead_in_words: list[str]  # words that only introduce a reference go with it
    reference_words: list[str]  # what a reference is called ("issue", "PR"), gone when right before it
    auxiliary_words: list[str]  # before a participle, they make it the sentence's own verb
    clause_words: list[str]  # "until", "since": a reference after them may be its clause's subject
    filler_words: list[str]  # words that are no content of a sentence by themselves
    min_words: int = Field(ge=0)
    not_issue_keys: list[str]  # UTF-8, SHA-256: standards, not tickets


class SplitConfig(_Section):
    heldout: list[str]
    heldout_fraction: float = Field(ge=0, le=1)
    salt: str
    cutoffs: dict[str, dt.date]


class OutputConfig(_Section):
    max_file_bytes: int = Field(gt=0)


class Config(_Section):
    seed: int
    fixes: FixesConfig
    vet: VetConfig
    paths: PathsConfig
    bots: BotsConfig
    labels: LabelsConfig
    clean: CleanConfig
    strip: StripConfig
    split: SplitConfig
    output: OutputConfig

    def digest(self) -> str:
        """A hash of every setting, recorded in each output so a rebuild can be matched to it."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def with_overrides(self, **sections: dict[str, Any]) -> Config:
        data = self.model_dump()
        for name, values in sections.items():
            data[name] = {**data[name], **values}
        return Config.model_validate(data)


def _defaults() -> dict[str, Any]:
    text = resources.files("miner.core").joinpath("defaults.yaml").read_text(encoding="utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and key != "cutoffs":
            merged[key] = _merge(base[key], value)
        else:
            merged[key] = value
    return merged


def load_config(path: Path | None = None) -> Config:
    """The defaults, overlaid by the YAML file at ``path`` if given."""
    data = _defaults()
    if path is not None:
        try:
            user = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror}; check the --config path") from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark else ""
            raise ConfigError(f"config {path} is not valid YAML{where}; fix the file or drop --config") from exc
        if user is None:
            user = {}
        if not isinstance(user, dict):
            raise ConfigError(f"config {path} must be a YAML mapping of sections (fixes, clean, ...)")
        data = _merge(data, user)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        source = f"config {path}" if path else "built-in config"
        raise ConfigError(f"{source}: {key}: {first['msg']}; see docs/configuration.md") from exc
