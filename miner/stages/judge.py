"""An optional judge: a team's own reader (a model, a script, a person) asked about each candidate.

``miner build --judge CMD`` runs CMD once per candidate with a JSON packet on stdin and reads the
rubric's answers (``ADJUDICATION.md``) as a JSON object on stdout:

- a bug candidate is asked once per (change, fix) pair. The packet holds the change's message and
  diff, the lines the answer marks (with their text), the fix's message and diff, and the commits in
  between that changed the marked lines' files (where a later cause of the defect shows); the judge
  answers ``fix_is_bugfix``, ``defect_in_change`` and ``lines_right``. A pair is kept when the fix is
  a bug fix (``yes``), the change introduced the defect, and the lines are right at least in part;
  a fixture is kept while one of its pairs is;
- a clean candidate's packet holds the change's message and diff, and the later commits within the
  waiting window that rewrote or removed lines it added (each with its message and its diff of those
  files: what a reader follows to tell whether the change was corrected later); the judge answers
  ``plausible_pr``, ``later_fixed`` and ``real_defect``: it is kept when it is a plausible pull
  request, never fixed, with no real defect.

Each verdict is kept in the answer (never in the visible part). A judge that fails (a non-zero
exit, a timeout, output that is not such an object) refuses nothing: the candidate is kept, its
verdict says ``error``, and the build reports how many failed. Verdicts are cached in the output by
a digest of the command and the packet, so a rebuild asks only about what is new. The packets are
read from the repository here (``judged_bugs``, ``JudgedClean``); the build decides when to ask.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import ValidationError
from tqdm import tqdm

from miner.core.config import Config
from miner.core.errors import MinerError, MissingObjectError
from miner.core.records import CommitMeta, Defect, Verdict
from miner.git import Repo
from miner.stages.clean import MISSING, Planned, later_changes
from miner.stages.fixture import decode

# 2: a clean packet holds the later commits that changed the change's lines; 3: a bug packet holds the
# commits between the change and the fix that changed the marked lines' files.
PACKET_VERSION = 3
BETWEEN = 8  # at most this many commits between a change and its fix are shown, the newest


def refusal(verdict: Verdict) -> str | None:
    """Why a verdict refuses its candidate (``judge_<what>``), or None when it keeps it."""
    if verdict.status != "ok":
        return None
    if verdict.fix is not None:  # a bug pair
        if verdict.fix_is_bugfix != "yes":
            return "judge_not_bugfix"
        if verdict.defect_in_change != "introduced":
            return "judge_not_introduced"
        if verdict.lines_right not in ("yes", "partly"):
            return "judge_lines_wrong"
        return None
    if verdict.plausible_pr != "yes":
        return "judge_not_plausible"
    if verdict.later_fixed != "no":
        return "judge_later_fixed"
    if verdict.real_defect != "no":
        return "judge_real_defect"
    return None


# The rubric's questions for each kind of packet, and the answers each may take (as records.Verdict has them).
ANSWERS: dict[str, dict[str, tuple[str, ...]]] = {
    "bug": {
        "fix_is_bugfix": ("yes", "no", "unsure"),
        "defect_in_change": ("introduced", "carried", "not_present", "unsure"),
        "lines_right": ("yes", "partly", "no", "n/a"),
    },
    "clean": {
        "plausible_pr": ("yes", "no"),
        "later_fixed": ("yes", "no", "unsure"),
        "real_defect": ("yes", "no", "unsure"),
    },
}
_FIELDS = {kind: tuple(questions) for kind, questions in ANSWERS.items()}


def _hints(kind: str) -> dict[str, str]:
    """What a packet tells the judge its answer holds."""
    return {question: f"one of {'|'.join(allowed)}" for question, allowed in ANSWERS[kind].items()}


class Judge:
    """Runs the judge's command; remembers verdicts by a digest of the command and the packet."""

    def __init__(self, command: str, timeout: float, known: dict[str, Verdict] | None = None) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise MinerError(f"--judge {command!r} is not a command line ({exc}); quote it as a shell would") from exc
        if not self.argv:
            raise MinerError("--judge needs a command, e.g. --judge 'python judge.py'")
        self.command = command
        self.timeout = timeout
        self.known: dict[str, Verdict] = dict(known or {})
        self.new: dict[str, Verdict] = {}

    def key(self, packet: dict[str, object]) -> str:
        text = json.dumps({"command": self.command, "packet": packet}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def ask(self, packet: dict[str, object], fix: str | None = None) -> Verdict:
        key = self.key(packet)
        if key in self.known:
            return self.known[key]
        verdict = self._run(packet, fix)
        if verdict.status == "ok":  # a failure is the run's, not an answer: asked again next time
            self.known[key] = self.new[key] = verdict
        return verdict

    def _run(self, packet: dict[str, object], fix: str | None) -> Verdict:
        kind = str(packet["kind"])
        try:
            proc = subprocess.run(self.argv, input=json.dumps(packet).encode(), capture_output=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Verdict(status="error", error=f"timed out after {self.timeout:g} s", fix=fix)
        except OSError as exc:
            return Verdict(status="error", error=f"could not run: {exc.strerror}", fix=fix)
        if proc.returncode != 0:
            last = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            return Verdict(status="error", error=f"exit {proc.returncode}: {last[-1] if last else 'no message'}", fix=fix)
        try:
            answer = json.loads(proc.stdout)
            if not isinstance(answer, dict):
                raise ValueError("not a JSON object")
            fields = {k: answer.get(k) for k in _FIELDS[kind]}
            return Verdict(status="ok", fix=fix, reason=str(answer.get("reason") or answer.get("note") or "") or None, **fields)
        except (ValueError, ValidationError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return Verdict(status="error", error=f"unreadable answer: {first[:200]}", fix=fix)


@dataclass(frozen=True)
class Shown:
    """One commit as a judge reads it: its id, its message and its diff."""

    commit: str
    message: str
    diff: str


def bug_packet(
    repository: str, change: Shown, fix: Shown, lines: list[dict[str, object]], between: list[Shown], left_out: int = 0
) -> dict[str, object]:
    """What a judge reads of one (change, fix) pair of a bug candidate: the change, the marked lines,
    the fix, and the commits in between that changed the marked lines' files (``left_out`` more, older,
    are not shown): where a reader sees that the defect came later than the change."""
    return {
        "version": PACKET_VERSION,
        "kind": "bug",
        "repository": repository,
        "change": change.commit,
        "message": change.message,
        "diff": change.diff,
        "defect_lines": lines,
        "fix": {"commit": fix.commit, "message": fix.message, "diff": fix.diff},
        "between": [{"commit": c.commit, "message": c.message, "diff": c.diff} for c in between],
        "between_left_out": left_out,
        "answer": _hints("bug"),
    }


def clean_packet(repository: str, change: Shown, later: list[Shown]) -> dict[str, object]:
    """What a judge reads of a clean candidate: the change, and the later commits that changed its lines."""
    return {
        "version": PACKET_VERSION,
        "kind": "clean",
        "repository": repository,
        "change": change.commit,
        "message": change.message,
        "diff": change.diff,
        "later": [{"commit": c.commit, "message": c.message, "diff": c.diff} for c in later],
        "answer": _hints("clean"),
    }


@dataclass(frozen=True)
class Asked:
    """Where a judge's questions about one repository come from: the repository the packets are
    read from, its name in the output, how many questions run side by side, whether to show
    progress, and the mined commit."""

    repo: Repo
    name: str
    jobs: int = 1
    progress: bool = False
    head: str = "HEAD"  # the mined commit: later history shown to a judge ends there


def judged_bugs(
    judge: Judge,
    asked: Asked,
    bugs: dict[str, tuple[Defect, ...]],
    lookup: Callable[[str], CommitMeta | None],
    dropped: Counter[str],
) -> dict[str, tuple[Defect, ...]]:
    """The bug candidates the judge keeps, each defect carrying the verdict on its (change, fix) pair."""
    name = asked.name
    pairs = [(sha, fix) for sha, defects in sorted(bugs.items()) for fix in sorted({d.fix for d in defects})]
    # The packets are read here, in this thread (the repository and its caches are not shared across
    # threads); only the judge's own runs, which are slow, go side by side.
    packets = [_bug_packet(asked, sha, fix, [d for d in bugs[sha] if d.fix == fix], lookup) for sha, fix in pairs]

    def ask(n: int) -> Verdict:
        return judge.ask(packets[n], pairs[n][1])

    with (
        ThreadPoolExecutor(max_workers=max(1, asked.jobs)) as threads,
        tqdm(total=len(pairs), desc=f"{name}: judge", disable=not asked.progress, unit="pair", leave=False) as bar,
    ):
        found: dict[tuple[str, str], Verdict] = {}
        for pair, verdict in zip(pairs, threads.map(ask, range(len(pairs)))):
            found[pair] = verdict
            bar.update()
    kept: dict[str, tuple[Defect, ...]] = {}
    for sha, defects in sorted(bugs.items()):
        mine: list[Defect] = []
        refused: list[str] = []
        for fix in sorted({d.fix for d in defects}):
            verdict = found[(sha, fix)]
            if verdict.status != "ok":
                dropped["judge_failed"] += 1
            why = refusal(verdict)
            if why:
                refused.append(why)
                continue
            mine += [
                d.model_copy(update={"evidence": d.evidence.model_copy(update={"judge": verdict})})
                for d in defects
                if d.fix == fix
            ]
        if mine:
            kept[sha] = tuple(mine)
        else:
            dropped[refused[0]] += 1
    return kept


def _bug_packet(
    asked: Asked, sha: str, fix: str, defects: list[Defect], lookup: Callable[[str], CommitMeta | None]
) -> dict[str, object]:
    repo, name = asked.repo, asked.name
    meta, fix_meta = lookup(sha), lookup(fix)
    lines: list[dict[str, object]] = []
    for d in defects:
        text = decode(repo.blob(sha, d.path) or b"")[0].split("\n")
        lines.append(
            {
                "path": d.path,
                "line_start": d.line_start,
                "line_end": d.line_end,
                "text": "\n".join(text[d.line_start - 1 : d.line_end]),
            }
        )
    change = Shown(sha, meta.message if meta else "", _patch_text(repo, sha))
    paths = sorted({d.path for d in defects})
    parent = repo.first_parent(fix)
    middle = repo.later_commits(sha, parent, paths, fix_meta.committer_time) if parent and fix_meta else []
    shown = [Shown(m.sha, m.message, _patch_text(repo, m.sha, 20_000, tuple(paths))) for m in middle[-BETWEEN:]]
    fixed = Shown(fix, fix_meta.message if fix_meta else "", _patch_text(repo, fix))
    return bug_packet(name, change, fixed, lines, shown, max(0, len(middle) - BETWEEN))


def _patch_text(repo: Repo, sha: str, limit: int = 200_000, paths: tuple[str, ...] = ()) -> str:
    """A commit's diff (of ``paths`` only, if given) for a judge, cut at ``limit`` characters (a judge
    reads it whole otherwise)."""
    text = decode(repo.patch(repo.first_parent(sha), sha, paths))[0]
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


class JudgedClean:
    """The clean stage's check, then the judge's: a refused candidate gives way to the next in the
    sample. What the judge says of a kept one goes into ``verdicts``. ``head`` and ``config`` say how
    far the later history shown to the judge goes (the waiting window, up to the mined commit)."""

    def __init__(
        self, checks: Planned, judge: Judge, asked: Asked, verdicts: dict[str, Verdict], dropped: Counter[str], config: Config
    ) -> None:
        self.checks, self.judge, self.verdicts, self.dropped = checks, judge, verdicts, dropped
        self.repo, self.name, self.head, self.config = asked.repo, asked.name, asked.head, config

    def plan(self, order: list[CommitMeta]) -> None:
        self.checks.plan(order)

    def __call__(self, meta: CommitMeta) -> str | None:
        reason = self.checks(meta)
        if reason:
            return reason
        try:
            packet = self._packet(meta)
        except MissingObjectError:  # the later history cannot be shown whole: refused as the clean check would
            return MISSING
        verdict = self.judge.ask(packet)
        if verdict.status != "ok":
            self.dropped["judge_failed"] += 1
        why = refusal(verdict)
        if why is None:
            self.verdicts[meta.sha] = verdict
        return why

    def _packet(self, meta: CommitMeta) -> dict[str, object]:
        repo = self.repo
        diffs = next(iter(repo.diffs([meta.sha])), (meta.sha, []))[1]
        later = [
            Shown(m.sha, m.message, _patch_text(repo, m.sha, 50_000, tuple(paths)))
            for m, paths in later_changes(meta, diffs, repo, self.head, self.config)
        ]
        return clean_packet(self.name, Shown(meta.sha, meta.message, _patch_text(repo, meta.sha)), later)
