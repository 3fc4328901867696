"""The records that flow between stages and into the output, typed and frozen (pydantic), in one
place. A stage's own small inputs (a ``FixtureJob``, a clean ``Quota``) are dataclasses beside it."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict

from miner.core.config import Tier


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


UTC_TIME = "UTC time as ISO 8601 text, written by iso()"
UtcTime = Annotated[str, UTC_TIME]  # text in JSON; an export that has a time type declares one (hf)


# -- what the walk reads from git ------------------------------------------------------


class FileStat(Record):
    """One file a commit changed, with line counts (``old_path`` set on renames)."""

    path: str
    old_path: str | None = None
    added: int
    removed: int
    binary: bool = False


class CommitMeta(Record):
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_time: int
    committer_time: int
    message: str
    files: tuple[FileStat, ...]

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip()

    @property
    def changed_lines(self) -> int:
        return sum(f.added + f.removed for f in self.files)

    @property
    def committed(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.committer_time, tz=dt.timezone.utc)

    @property
    def paths_are_utf8(self) -> bool:
        """Whether every path the commit changed is UTF-8. One that is not reaches Python with
        surrogate escapes; a fixture cannot show it in its UTF-8 JSON without changing it."""
        try:
            for f in self.files:
                f.path.encode("utf-8")
                (f.old_path or "").encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True

    @property
    def authored(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.author_time, tz=dt.timezone.utc)


class FileDiff(Record):
    """Line-level changes to one file: (line number, text) pairs, old numbering for removed lines."""

    old_path: str | None
    new_path: str | None
    binary: bool = False
    link: bool = False  # a symlink or a submodule on either side: its "lines" are a target, not code
    new_file: bool = False
    deleted_file: bool = False
    removed: tuple[tuple[int, str], ...] = ()
    added: tuple[tuple[int, str], ...] = ()
    insertions: tuple[int, ...] = ()


# -- the walk's output ---------------------------------------------------------------------

LinkKind = Literal["trailer", "revert", "keyword"]


class FixCommit(Record):
    """A commit whose message says it repairs something, with what it names explicitly."""

    meta: CommitMeta
    link: LinkKind
    named: tuple[str, ...] = ()  # full SHAs of commits the message names as the culprit
    reasons: tuple[str, ...] = ()  # why it is taken to repair behaviour (see miner.stages.vet)


# -- the blame stage's output ------------------------------------------------------------------


class Candidate(Record):
    sha: str
    lines: int
    rejected: str | None = None  # why it cannot be the introducing commit, if it cannot


class Verdict(Record):
    """What the judge said of one candidate (or one pair of a bug candidate): ``ok`` with the rubric's
    answers; ``error`` when it could not answer (after its retries); ``unasked`` when the build stopped
    asking (the token budget was spent, or the judge kept failing). What the answer cost, as the
    endpoint reported it, is kept with it (replies asked again included)."""

    status: Literal["ok", "error", "unasked"]
    error: str | None = None
    fix: str | None = None  # the fix a bug verdict is about
    fix_is_bugfix: Literal["yes", "no", "unsure"] | None = None
    defect_in_change: Literal["introduced", "carried", "not_present", "unsure"] | None = None
    lines_right: Literal["yes", "partly", "no", "n/a"] | None = None
    reviewable: Literal["yes", "hard", "no"] | None = None  # could a reviewer of the change alone see it
    plausible_pr: Literal["yes", "no"] | None = None
    later_fixed: Literal["yes", "no", "unsure"] | None = None
    real_defect: Literal["yes", "no", "unsure"] | None = None
    reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    retries: int | None = None


class Evidence(Record):
    link: Literal["trailer", "revert", "blame", "added-only"]
    tier: Tier
    lines_blamed: int  # code lines of the fix that blame traced to some commit
    lines_agreeing: int  # of those, the ones that landed on the introducing commit
    candidates: tuple[Candidate, ...]
    looked_through: tuple[str, ...] = ()  # whitespace-only commits blame saw past
    # The signals that placed the label in its tier (none on records written before they existed):
    age_days: int | None = None  # days from the introducing commit to the fix
    lines_authored: int | None = None  # agreeing lines it wrote from scratch (blame past it finds no
    # older author); None when not measured
    prior: tuple[str, ...] = ()  # commits that wrote the lines it only rewrote
    reasons: tuple[str, ...] = ()  # why this tier, e.g. ("unanimous", "authored")
    fix_reasons: tuple[str, ...] = ()  # why the fix is taken to repair behaviour (miner.stages.vet), e.g.
    # ("subject_keyword", "with_test")
    judge: Verdict | None = None  # what the optional judge said of this (change, fix) pair


class Defect(Record):
    path: str
    line_start: int
    line_end: int
    fix: str
    fix_date: UtcTime
    summary: str
    evidence: Evidence


class Label(Record):
    """One fix's verdict: the commit it blames, or none and why."""

    fix: str
    intro: str | None
    tier: Tier | None
    defects: tuple[Defect, ...] = ()
    dropped: str | None = None
    blamed: tuple[str, ...] = ()  # every commit any of the fix's lines led to, for the clean stage


class CleanPick(Record):
    sha: str
    observed_days: int
    stratum: str = ""
    # How near a fix followed the change within clean.fix_window_days: in its source files ("file"),
    # only elsewhere in their directories ("directory"), or not at all (None).
    fix_nearby: Literal["file", "directory"] | None = None


class CleanQuota(Record):
    """How a repository's clean sample fared against ``clean.ratio``: how many clean fixtures were wanted
    and found; how many commits are changes a clean fixture may be made of at all (``candidates``:
    they pass every rule of what a change is, before the waiting and fix windows and the checks that
    read git; fewer than wanted means too few changes exist, whatever a build relaxes); and of those,
    the reason that kept out the most."""

    wanted: int
    found: int
    reached: bool
    candidates: int
    too_few_changes: bool
    stopped_most: str | None = None
    stopped_most_count: int = 0


# -- the visible and answer parts of a fixture ---------------------------------------------------------


class VisibleFile(Record):
    path: str
    old_path: str | None = None
    status: Literal["added", "modified", "deleted", "renamed"]
    encoding: Literal["utf-8", "latin-1"] | None
    before: str | None
    after: str | None
    omitted: Literal["binary", "too-large", "missing", "submodule"] | None = None


class Visible(Record):
    id: str
    title: str
    description: str
    diff: str
    files: tuple[VisibleFile, ...]


class Blanked(Record):
    """Text removed from an added line of the visible part (a flagged comment, or a commit id):
    where, and what it said."""

    path: str
    line: int
    text: str


class Answer(Record):
    id: str
    kind: Literal["bug", "clean"]
    repository: str
    split: str
    base: str | None
    head: str
    head_date: UtcTime
    author_date: UtcTime
    defects: tuple[Defect, ...] | None = None
    observed_days: int | None = None
    fresh: dict[str, bool]
    description_mode: Literal["original", "title", "none"]
    blanked: tuple[Blanked, ...] = ()
    title_replaced: bool = False  # the author's title had no content once its references went; miner made one
    family: str | None = None  # fixtures sharing an introducing commit, a fix or a patch share a family
    clean_confidence: Literal["high", "medium", "low"] | None = None
    wait_days: int | None = None  # the waiting window a clean change was held to
    survival: float | None = None  # share of a clean change's added lines still unchanged at the mined commit
    stratum: str | None = None  # size/spread/language bucket a clean change was sampled from
    # How near a fix followed a clean change within the fix window ("file", "directory"; None: no fix):
    # set only for one the sample took past clean.fix_window_scope, to fill its quota.
    fix_nearby: Literal["file", "directory"] | None = None
    judge: Verdict | None = None  # what the optional judge said of a clean change
    # What a judged build decided of the fixture: "kept"; or, where it was told to keep them marked,
    # "refused" (--keep-refused) or "unjudged" (--keep-unjudged: no answer). None without a judge.
    screen: Literal["kept", "refused", "unjudged"] | None = None


class Fixture(Record):
    """One fixture: what the reviewer sees, and the answer kept from it."""

    visible: Visible
    answer: Answer

    @property
    def id(self) -> str:
        return self.answer.id

    @property
    def kind(self) -> Literal["bug", "clean"]:
        return self.answer.kind

    @property
    def split(self) -> str:
        return self.answer.split


def iso(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
