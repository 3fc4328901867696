"""The findings format: what a reviewer said about one fixture, one line of a run file each.

``miner review`` writes it (``OUT/runs/NAME.jsonl``), ``miner score`` reads it, and anyone may
write it from their own runner: ``miner schema findings`` prints its JSON Schema. On input a finding
may say ``file`` for ``path``, ``line`` for ``line_start`` and ``body`` for ``message``; any other
unknown key is refused with one line naming it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from miner.core.errors import MinerError


class ReviewFinding(BaseModel):
    """One comment of a reviewer: where (``path``, lines of the changed version) and what."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    path: str = Field(validation_alias=AliasChoices("path", "file"))
    line_start: int = Field(ge=0, validation_alias=AliasChoices("line_start", "line"))
    line_end: int | None = Field(default=None, ge=0)
    severity: str | None = None
    category: str | None = None
    message: str = Field(default="", validation_alias=AliasChoices("message", "body"))
    confidence: float | None = None

    @property
    def end(self) -> int:
        return max(self.line_start, self.line_end or self.line_start)


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class RunRecord(BaseModel):
    """One reviewer's answer on one fixture, one repeat. ``status: error`` (a non-zero exit,
    unparsable output, a timeout) is never a clean review: the score counts it apart."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fixture_id: str
    reviewer: str
    repeat: int = Field(ge=0)
    status: Literal["ok", "error"]
    error: str | None = None
    seconds: float = Field(ge=0)
    usage: Usage | None = None
    findings: tuple[ReviewFinding, ...] = ()
    fixture_set: str | None = None  # digest of the fixture set the run was made on (see FixtureSet.digest)


# Severities that are not a warning: a reviewer's note on a clean change is not a false alarm.
QUIET_SEVERITIES = frozenset({"info", "information", "note", "nit", "hint", "style", "suggestion"})


def is_alarm(finding: ReviewFinding) -> bool:
    """A finding of severity warning or worse (every finding, when it gives no severity)."""
    return finding.severity is None or finding.severity.strip().lower() not in QUIET_SEVERITIES


def parse_output(text: str) -> tuple[tuple[ReviewFinding, ...], Usage | None]:
    """What a reviewer printed: a JSON list of findings, or ``{"findings": [...], "usage": {...}}``.
    Raises MinerError with one line naming what is wrong."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MinerError(f"the output is not JSON ({exc.msg} at line {exc.lineno})") from None
    usage = None
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"findings", "usage"})
        if unknown:
            raise MinerError(f"unknown key {unknown[0]!r} in the output; give findings and usage")
        try:
            usage = Usage.model_validate(data["usage"]) if data.get("usage") is not None else None
        except ValidationError as exc:
            raise MinerError(f"usage: {_first(exc)}") from None
        data = data.get("findings", [])
    if not isinstance(data, list):
        raise MinerError("the output is neither a list of findings nor an object with findings")
    found = []
    for n, item in enumerate(data):
        try:
            found.append(ReviewFinding.model_validate(item))
        except ValidationError as exc:
            raise MinerError(f"finding {n}: {_first(exc)}") from None
    return tuple(found), usage


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown field {where!r}"
    return f"{where}: {error['msg']}" if where else error["msg"]


def schema() -> dict[str, Any]:
    """The JSON Schema of one line of a run file."""
    return RunRecord.model_json_schema(by_alias=False)
