"""``miner validity``: how true a fixture set is, measured by the team that owns it, and how good its judge is.

The measure is the rubric of ``ADJUDICATION.md`` (``shared/ADJUDICATION.md`` in miner's steering notes, and
``docs/judge.md``): a person reads a fixture with git at hand and answers its questions.

- ``sample`` draws fixtures at random, stratified by kind and repository (each stratum gets its share of
  ``n``, at least one), in an order seeded by ``seed`` and the change's commit, so a redraw after a
  rebuild keeps the fixtures that are still there. For each it writes a reading page (the visible change,
  the answer's lines with their text, each fix's message and diff and the commits in between that touched
  the marked files; for a clean fixture the later commits that rewrote its lines: what the judge reads,
  with what the reviewer sees) and one line of ``verdicts.jsonl`` with the rubric's fields left empty.
- ``score`` reads the filled lines: per kind, how many were read and how many are valid, the validity with
  a Wilson 95% interval, by repository and by tier; and, when the set was judged, how the judge's
  decisions agree with the readers'. A bug fixture is valid when ``fix_is_bugfix`` is yes,
  ``defect_in_change`` introduced and ``lines_right`` yes or partly; a clean one when ``plausible_pr`` is
  yes, ``later_fixed`` no and ``real_defect`` no. A line with an empty required field is unread.

The rubric's fields and the validity rules here are the ones miner's own measurements use (its
``scripts/adjudication.py``): one implementation.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scipy.stats import binomtest

from miner.commands.sources import RepoSpec, mined_repositories
from miner.core.config import Config
from miner.core.errors import MinerError, TargetDirError
from miner.core.output import FixtureSet
from miner.core.records import Answer, Fixture
from miner.git import Repo
from miner.stages.judge import ANSWERS, read_bug_packet, read_clean_packet, refusal
from miner.stages.write import write_atomic

Kind = Literal["bug", "clean"]
KINDS: tuple[Kind, ...] = ("bug", "clean")

# The rubric's questions for each kind, with the answers each may take: the judge's (one rubric), and for
# a reader also whether the visible text gives the defect away. ``REQUIRED`` decide validity (and must be
# filled for a line to count as read).
RUBRIC: dict[Kind, dict[str, tuple[str, ...]]] = {
    "bug": {**ANSWERS["bug"], "hint": ("ok", "leak", "garbled")},
    "clean": dict(ANSWERS["clean"]),
}
REQUIRED: dict[Kind, tuple[str, ...]] = {
    "bug": ("fix_is_bugfix", "defect_in_change", "lines_right"),
    "clean": ("plausible_pr", "later_fixed", "real_defect"),
}
NOTES: dict[Kind, tuple[str, ...]] = {"bug": ("defect", "note"), "clean": ("later_fix", "note")}


def is_valid(kind: Kind, reading: Mapping[str, Any]) -> bool:
    """Whether a reading (the rubric's answers) makes a fixture of ``kind`` valid."""
    if kind == "bug":
        return (
            reading.get("fix_is_bugfix") == "yes"
            and reading.get("defect_in_change") == "introduced"
            and reading.get("lines_right") in ("yes", "partly")
        )
    return reading.get("plausible_pr") == "yes" and reading.get("later_fixed") == "no" and reading.get("real_defect") == "no"


@dataclass(frozen=True)
class Rate:
    """k of n, with a 95% Wilson interval."""

    k: int
    n: int

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        if not self.n:
            return None
        ci = binomtest(self.k, self.n).proportion_ci(confidence_level=0.95, method="wilson")
        return float(ci.low), float(ci.high)

    def text(self) -> str:
        if not self.n:
            return "-"
        low, high = self.interval or (0.0, 0.0)
        return f"{self.value:.2f} ({self.k}/{self.n}, {low:.2f}-{high:.2f})"

    def to_json(self) -> dict[str, float | None]:
        low, high = self.interval or (None, None)
        return {"value": self.value, "low": low, "high": high}


# -- sample ----------------------------------------------------------------------------------------------


def draw_order(change: str, seed: str) -> str:
    """Where a change stands in a seeded draw: fixtures whose salted hash is smallest are drawn first."""
    return hashlib.sha256(f"{seed}:{change}".encode()).hexdigest()


def allot(sizes: Mapping[tuple[Kind, str], int], n: int) -> dict[tuple[Kind, str], int]:
    """How many of ``n`` each stratum gets: one each while ``n`` allows (the largest first), the rest in
    proportion to what they hold beyond it (largest remainders), never more than a stratum holds."""
    strata = sorted(k for k, size in sizes.items() if size)
    if n >= sum(sizes[k] for k in strata):
        return {k: sizes[k] for k in strata}
    got = {k: 0 for k in strata}
    for k in sorted(strata, key=lambda k: (-sizes[k], k))[:n]:
        got[k] = 1
    left, room = n - sum(got.values()), sum(sizes[k] - got[k] for k in strata)
    exact = {k: (sizes[k] - got[k]) * left / room for k in strata}
    for k in strata:
        got[k] += int(exact[k])
    for k in sorted(strata, key=lambda k: (-(exact[k] % 1), k)):
        if sum(got.values()) >= n:
            break
        if got[k] < sizes[k]:
            got[k] += 1
    return got


def draw(answers: Iterable[Answer], n: int, seed: str, kinds: Sequence[Kind] = KINDS) -> list[Answer]:
    """A seeded random draw of ``n`` fixtures, stratified by kind and repository (``allot``)."""
    strata: dict[tuple[Kind, str], list[Answer]] = defaultdict(list)
    for answer in answers:
        if answer.kind in kinds:
            strata[(answer.kind, answer.repository)].append(answer)
    quota = allot({k: len(v) for k, v in strata.items()}, n)
    chosen: list[Answer] = []
    for key in sorted(quota):
        members = sorted(strata[key], key=lambda a: draw_order(a.head, seed))
        chosen += members[: quota[key]]
    return chosen


@dataclass(frozen=True)
class Sampled:
    to: Path
    fixtures: int
    by_kind: dict[str, int]


def sample(
    fixtures: FixtureSet,
    to: Path,
    n: int,
    seed: str,
    config: Config,
    repos: Iterable[RepoSpec] = (),
    kinds: Sequence[Kind] = KINDS,
) -> Sampled:
    """Draw ``n`` fixtures of ``fixtures`` (``draw``) and write a reading page for each, and
    ``verdicts.jsonl`` for the readers to fill, into ``to`` (new or empty)."""
    if to.exists() and (not to.is_dir() or any(to.iterdir())):
        raise TargetDirError(f"{to} exists and is not an empty directory; give --to a new directory")
    chosen = draw(fixtures.answers(), n, seed, kinds)
    if not chosen:
        raise MinerError(f"{fixtures.path} holds no fixtures of the kinds asked for; build it first, or ask for other kinds")
    sources = mined_repositories(fixtures.manifest, list(repos))
    lacking = sorted({a.repository for a in chosen} - set(sources))
    if lacking:
        raise MinerError(
            "the reading pages show each fix and the later history, so they need the repositories: "
            f"give --repo for {', '.join(lacking)}"
        )
    heads = {r.name: r.head for r in fixtures.manifest.repositories}
    (to / "pages").mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for answer in chosen:
        fixture = fixtures[answer.id]
        repo = sources[answer.repository]
        write_atomic(to / "pages" / f"{answer.id}.md", reading_page(fixture, repo, heads[answer.repository], config))
        lines.append(json.dumps(blank_reading(answer)))
    write_atomic(to / "verdicts.jsonl", "\n".join(lines) + "\n")
    write_atomic(to / "README.md", _instructions(fixtures.path, len(chosen), seed))
    return Sampled(to=to, fixtures=len(chosen), by_kind=dict(Counter(a.kind for a in chosen)))


def blank_reading(answer: Answer) -> dict[str, Any]:
    """A fixture's line of ``verdicts.jsonl``: what it is (by id, and by commits, which outlive ids), and
    the rubric's fields left empty."""
    kind: Kind = answer.kind
    line: dict[str, Any] = {"id": answer.id, "kind": kind, "repository": answer.repository, "change": answer.head}
    if kind == "bug":
        line["fixes"] = sorted({d.fix for d in answer.defects or ()})
    line.update({name: "" for name in RUBRIC[kind]})
    line.update({name: "" for name in NOTES[kind]})
    return line


def reading_page(fixture: Fixture, repo: Repo, head: str, config: Config) -> str:
    """The reading page of one fixture: what the reviewer sees, the answer, and what the judge reads."""
    answer, visible = fixture.answer, fixture.visible
    out = [
        f"# {answer.id}: a {answer.kind} fixture of {answer.repository}",
        "",
        f"change `{answer.head}`, committed {answer.head_date}; mined at `{head}`",
        "",
        "## What the reviewer sees",
        "",
        f"**Title:** {visible.title}",
        "",
        "**Description:**",
        "",
        _quoted(visible.description or "(none)"),
        "",
        _fenced(visible.diff, "diff"),
    ]
    if answer.kind == "bug":
        by_fix: dict[str, list[Any]] = defaultdict(list)
        for d in answer.defects or ():
            by_fix[d.fix].append(d)
        for fix, defects in sorted(by_fix.items()):
            packet: dict[str, Any] = read_bug_packet(repo, answer.repository, answer.head, fix, defects, repo.meta)
            out += ["", f"## The answer for fix `{fix}`", ""]
            for line in packet["defect_lines"]:
                out += [f"`{line['path']}` lines {line['line_start']}-{line['line_end']}:", "", _fenced(str(line["text"]), "")]
            fixed = packet["fix"]
            out += ["", f"### The fix `{fix}`", "", _quoted(str(fixed["message"])), "", _fenced(str(fixed["diff"]), "diff")]
            between = packet["between"]
            if between:
                left = packet["between_left_out"]
                older = f" ({left} older not shown)" if left else ""
                out += ["", "### Commits between the change and the fix that touched the marked files" + older]
                for c in between:
                    out += ["", f"`{c['commit']}`", "", _quoted(str(c["message"])), "", _fenced(str(c["diff"]), "diff")]
        out += ["", "## The questions", "", _QUESTIONS["bug"]]
    else:
        meta = repo.meta(answer.head)
        clean: dict[str, Any] = read_clean_packet(repo, answer.repository, meta, head, config) if meta else {"later": []}
        later = clean["later"]
        out += ["", f"## Later commits that rewrote or removed its lines, within {config.clean.wait_days} days", ""]
        if not later:
            out.append("(none)")
        for c in later:
            out += ["", f"`{c['commit']}`", "", _quoted(str(c["message"])), "", _fenced(str(c["diff"]), "diff")]
        out += ["", "## The questions", "", _QUESTIONS["clean"]]
    return "\n".join(out) + "\n"


def _quoted(text: str) -> str:
    return "\n".join("> " + line for line in text.strip().splitlines()) or "> "


def _fenced(text: str, lang: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


_QUESTIONS: dict[Kind, str] = {
    "bug": (
        "- `fix_is_bugfix`: does the fix correct a defect in behaviour? yes / no / unsure\n"
        "- `defect_in_change`: introduced / carried (it existed before; the change kept it) / not_present / unsure\n"
        "- `lines_right`: are the marked lines where a reviewer should comment? yes / partly / no / n/a\n"
        "- `reviewable`: could a careful reviewer of this change alone notice it? yes / hard / no\n"
        "- `hint`: does the visible title or description give it away (leak), read garbled, or neither (ok)?\n"
        "- `defect`: one sentence: what it is, or why there is none; `note`: anything odd"
    ),
    "clean": (
        "- `plausible_pr`: a change a team would review for defects? yes / no\n"
        "- `later_fixed`: did a later commit fix, revert or replace something it added because it was wrong? "
        "yes (name it in `later_fix`) / no / unsure\n"
        "- `real_defect`: is there a real defect in what it adds that deserves a warning? yes / no / unsure\n"
        "- `note`: anything odd"
    ),
}


def _instructions(out: Path, count: int, seed: str) -> str:
    return (
        f"# Reading {count} fixtures of {out}\n\n"
        f"Drawn by `miner validity sample` with seed {seed!r}, stratified by kind and repository.\n\n"
        "Read each page in `pages/` with the repository at hand (`git show SHA`, `git log -L a,b:path SHA..HEAD`, "
        "`git blame -L a,b SHA -- path`), and fill that fixture's line of `verdicts.jsonl` with the answers the page's "
        "questions list (leave a field empty for a fixture you did not read). Then:\n\n"
        f"    miner validity score {out} verdicts.jsonl\n"
    )


# -- score -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """One filled line of ``verdicts.jsonl``, checked against the fixture set."""

    answer: Answer
    valid: bool
    judged: Literal["kept", "refused"] | None  # what the set's judge decided, if it was judged


def read_verdicts(fixtures: FixtureSet, path: Path) -> tuple[list[Reading], int]:
    """The read lines of ``path`` (and how many were left unread); a line that names no fixture of the
    set, or holds an answer outside the rubric, is an error naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MinerError(f"cannot read {path}: {exc.strerror}; give the verdicts.jsonl that miner validity sample wrote") from exc
    answers = {a.id: a for a in fixtures.answers()}
    readings: list[Reading] = []
    unread = 0
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path} line {number}"
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise MinerError(f"{where} is not JSON ({exc}); fix the line or delete it") from exc
        if not isinstance(line, dict) or not isinstance(line.get("id"), str):
            raise MinerError(f"{where} has no fixture id; each line is one fixture, as miner validity sample wrote it")
        answer = answers.get(line["id"])
        if answer is None:
            raise MinerError(f"{where}: {line['id']} is not a fixture of {fixtures.path}; score the set it was drawn from")
        if line.get("kind", answer.kind) != answer.kind:
            raise MinerError(f"{where}: {line['id']} is a {answer.kind} fixture, not {line.get('kind')}")
        if line["id"] in seen:
            raise MinerError(f"{where}: {line['id']} is read twice; keep one line per fixture")
        seen.add(line["id"])
        kind: Kind = answer.kind
        for name, allowed in RUBRIC[kind].items():
            value = line.get(name)
            if value not in ("", None) and value not in allowed:
                raise MinerError(f"{where}: {name} is {value!r}, not one of {'|'.join(allowed)}")
        if any(line.get(name) in ("", None) for name in REQUIRED[kind]):
            unread += 1
            continue
        readings.append(Reading(answer, is_valid(kind, line), judge_decision(answer)))
    return readings, unread


def judge_decision(answer: Answer) -> Literal["kept", "refused"] | None:
    """What a judged build's judge decided of a fixture (None when it gave no answer or was not asked)."""
    if answer.screen in ("kept", "refused"):
        return answer.screen
    if answer.kind == "clean":
        verdicts = [answer.judge] if answer.judge is not None else []
    else:
        verdicts = [d.evidence.judge for d in answer.defects or () if d.evidence.judge is not None]
    answered = [v for v in verdicts if v.status == "ok"]
    if not answered:
        return None
    return "kept" if any(refusal(v) is None for v in answered) else "refused"


def tier(answer: Answer) -> str:
    """The tier a fixture is counted under: its strongest evidence tier, or a clean one's confidence."""
    if answer.kind == "clean":
        return answer.clean_confidence or "unknown"
    from miner.commands.score import strongest_tier

    return strongest_tier(answer) or "unknown"


def _rates(readings: Sequence[Reading]) -> dict[str, Any]:
    rate = Rate(sum(r.valid for r in readings), len(readings))
    return {"read": rate.n, "valid": rate.k, "validity": rate.to_json()}


def score(fixtures: FixtureSet, verdicts: Path) -> dict[str, Any]:
    """Validity per kind (by repository and by tier), and the judge's agreement with the readers."""
    readings, unread = read_verdicts(fixtures, verdicts)
    report: dict[str, Any] = {"unread": unread}
    judged = fixtures.manifest.judge is not None or any(r.judged for r in readings)
    judge: dict[str, Any] = {}
    for kind in KINDS:
        mine = [r for r in readings if r.answer.kind == kind]
        entry = _rates(mine)
        for by, key in (("by_repository", lambda r: r.answer.repository), ("by_tier", lambda r: tier(r.answer))):
            groups: dict[str, list[Reading]] = defaultdict(list)
            for r in mine:
                groups[key(r)].append(r)
            entry[by] = {name: _rates(group) for name, group in sorted(groups.items())}
        report[kind] = entry
        if judged:
            decided = [r for r in mine if r.judged is not None]
            judge[kind] = {
                "read": len(decided),
                "agree": sum((r.judged == "kept") == r.valid for r in decided),
                "kept_valid": sum(r.judged == "kept" and r.valid for r in decided),
                "kept_invalid": sum(r.judged == "kept" and not r.valid for r in decided),
                "refused_valid": sum(r.judged == "refused" and r.valid for r in decided),
                "refused_invalid": sum(r.judged == "refused" and not r.valid for r in decided),
            }
    if judged:
        report["judge"] = judge
    return report


def table(report: dict[str, Any]) -> str:
    """The score as a person reads it."""

    def rate(entry: dict[str, Any]) -> str:
        return Rate(entry["valid"], entry["read"]).text()

    lines: list[str] = []
    for kind in KINDS:
        entry = report[kind]
        lines.append(f"{kind}: read {entry['read']}, valid {entry['valid']}: validity {rate(entry)}")
        for by in ("by_repository", "by_tier"):
            for name, group in entry[by].items():
                lines.append(f"  {by[3:]:<10} {name:<24} {rate(group)}")
    for kind, j in report.get("judge", {}).items():
        kept, refused = j["kept_valid"] + j["kept_invalid"], j["refused_valid"] + j["refused_invalid"]
        valid = j["kept_valid"] + j["refused_valid"]
        lines.append(
            f"judge ({kind}): decided {j['read']} of those read, agrees with the readers on {j['agree']}; "
            f"kept {kept} (valid {j['kept_valid']}), refused {refused} (valid {j['refused_valid']})"
        )
        if kept:
            lines.append(f"  validity of what it keeps: {Rate(j['kept_valid'], kept).text()}")
        if valid:
            lines.append(f"  share of the valid ones it keeps (retention): {Rate(j['kept_valid'], valid).text()}")
    if report["unread"]:
        unread = report["unread"]
        lines.append(f"{unread} line{'s' if unread > 1 else ''} not read yet (a rubric field left empty)")
    return "\n".join(lines)
