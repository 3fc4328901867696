"""An optional judge: a team's own reader (a model, a script, a person) asked about each candidate.

``miner build --judge CMD`` asks CMD about each candidate: a JSON packet on stdin, the rubric's answers
(``ADJUDICATION.md``) as a JSON object on stdout:

- a bug candidate is asked once per (change, fix) pair. The packet holds the change's message and
  diff, the lines the answer marks (with their text), the fix's message and diff, and the commits in
  between that changed the marked lines' files (where a later cause of the defect shows); the judge
  answers ``fix_is_bugfix``, ``defect_in_change``, ``lines_right`` and, if it can, ``reviewable``. A
  pair is kept when the fix is a bug fix (``yes``), the change introduced the defect, and the lines are
  right at least in part; a fixture is kept while one of its pairs is;
- a clean candidate's packet holds the change's message and diff, and the later commits within the
  waiting window that rewrote or removed lines it added (each with its message and its diff of those
  files: what a reader follows to tell whether the change was corrected later); when fixes followed it
  within ``clean.fix_window_days`` in its source files or their directories without rewriting its
  lines, those too (``nearby``: the evidence the fix window rule guesses from, so that a judged build
  may take such candidates, ``clean.judged_fix_window_fallback``); the judge answers
  ``plausible_pr``, ``later_fixed`` and ``real_defect``: it is kept when it is a plausible pull
  request, never fixed, with no real defect.

The answer may say what it cost: ``"usage": {"input_tokens", "output_tokens"}`` (or OpenAI's
``prompt_tokens``, ``completion_tokens``) and ``"retries"``; an answer with ``"error"`` is a failure
that still reports its cost. ``miner judge`` answers so, and is asked in the build's own process.

Each verdict is kept in the answer (never in the visible part), with its cost. A candidate the judge
could not answer (it failed after its own retries, or the build stopped asking: the token budget was
spent, or the judge failed ``STOP_AFTER`` times in a row; a command's exit 3 says "no answer yet" and
is no failure of the judge) is never passed as screened: it is left out
and counted (``judge_unanswered``, ``judge_unasked``), and a rerun asks again; a build may keep such
candidates marked instead (``Keep``). Verdicts are cached in the output by a digest of the command and
the packet, appended as they come, so an interrupted build loses none and a rebuild asks only about
what is new. The packets are read from the repository here (``judged_bugs``, ``JudgedClean``); the
judge's calls run side by side on the judge's own threads (``jobs``).
"""

from __future__ import annotations

import hashlib
import json
import queue
import shlex
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypeVar

from pydantic import ValidationError
from tqdm import tqdm

from miner.core.config import Config
from miner.core.errors import MinerError, MissingObjectError
from miner.core.records import CommitMeta, Defect, Verdict
from miner.git import Repo
from miner.stages.clean import MISSING, FixTouches, Planned, fixes_nearby, later_changes
from miner.stages.fixture import decode

# 2: a clean packet holds the later commits that changed the change's lines; 3: a bug packet holds the
# commits between the change and the fix that changed the marked lines' files; 4: a bug packet asks
# whether the defect is reviewable from the change.
PACKET_VERSION = 4
BETWEEN = 8  # at most this many commits between a change and its fix are shown, the newest
NEARBY = 8  # at most this many fixes that followed a clean candidate nearby are shown, the oldest
STOP_AFTER = 10  # failures in a row after which the build stops asking (the judge is down, not unlucky)
DEFERRED = 3  # a judge command's exit status for "no answer yet" (it answers in batches): never a fault

Screen = Literal["kept", "refused", "unjudged"]
T = TypeVar("T")


def refusal(verdict: Verdict) -> str | None:
    """Why a verdict refuses its candidate (``judge_<what>``), or None when it keeps it (or did not answer)."""
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


def unanswered(verdict: Verdict) -> str | None:
    """Why a candidate has no answer (``judge_unanswered``: the judge failed; ``judge_unasked``: the build
    stopped asking), or None when it has one."""
    return {"ok": None, "error": "judge_unanswered", "unasked": "judge_unasked"}[verdict.status]


# The rubric's questions for each kind of packet, and the answers each may take (as records.Verdict has them).
ANSWERS: dict[str, dict[str, tuple[str, ...]]] = {
    "bug": {
        "fix_is_bugfix": ("yes", "no", "unsure"),
        "defect_in_change": ("introduced", "carried", "not_present", "unsure"),
        "lines_right": ("yes", "partly", "no", "n/a"),
        "reviewable": ("yes", "hard", "no"),
    },
    "clean": {
        "plausible_pr": ("yes", "no"),
        "later_fixed": ("yes", "no", "unsure"),
        "real_defect": ("yes", "no", "unsure"),
    },
}
_FIELDS = {kind: tuple(questions) for kind, questions in ANSWERS.items()}
# What a plan (``Judge(plan=True)``) takes every candidate to be: kept, so the build goes on as if it were.
_PASSING = {
    "bug": {"fix_is_bugfix": "yes", "defect_in_change": "introduced", "lines_right": "yes"},
    "clean": {"plausible_pr": "yes", "later_fixed": "no", "real_defect": "no"},
}


def _hints(kind: str) -> dict[str, str]:
    """What a packet tells the judge its answer holds."""
    return {question: f"one of {'|'.join(allowed)}" for question, allowed in ANSWERS[kind].items()}


@dataclass(frozen=True)
class Reply:
    """One judge's answer to one packet: the rubric's answers (and ``reason``), or the error; and what
    it cost, as the endpoint reported it."""

    answers: dict[str, Any] | None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    deferred: bool = False  # no answer yet, as a judge that answers in batches says (exit 3): not a fault


Runner = Callable[[dict[str, object]], Reply]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parsed_reply(stdout: bytes, failure: str | None = None) -> Reply:
    """A judge command's output read as a ``Reply``: its JSON object, with its ``usage`` and ``retries``
    if it says them; ``failure`` (its exit) or an ``error`` in the object makes it a failure."""
    try:
        found = json.loads(stdout)
    except ValueError as exc:
        found = None
        if failure is None:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            failure = f"unreadable answer: {text[:200]}"
    if not isinstance(found, dict):
        return Reply(None, failure or "unreadable answer: not a JSON object")
    usage = found["usage"] if isinstance(found.get("usage"), dict) else {}
    error = failure or (str(found["error"]) if found.get("error") else None)
    return Reply(
        None if error else found,
        error,
        input_tokens=_count(usage.get("input_tokens", usage.get("prompt_tokens"))),
        output_tokens=_count(usage.get("output_tokens", usage.get("completion_tokens"))),
        retries=_count(found.get("retries")),
    )


def command_runner(command: str, timeout: float) -> Runner:
    """Ask by running ``command`` once per packet (the packet on stdin, the answer on stdout)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise MinerError(f"--judge {command!r} is not a command line ({exc}); quote it as a shell would") from exc
    if not argv:
        raise MinerError("--judge needs a command, e.g. --judge 'python judge.py'")

    def run(packet: dict[str, object]) -> Reply:
        try:
            proc = subprocess.run(argv, input=json.dumps(packet).encode(), capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Reply(None, f"timed out after {timeout:g} s")
        except OSError as exc:
            return Reply(None, f"could not run: {exc.strerror}")
        if proc.returncode != 0:
            last = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            reply = parsed_reply(proc.stdout, f"exit {proc.returncode}: {last[-1] if last else 'no message'}")
            return replace(reply, deferred=proc.returncode == DEFERRED)
        return parsed_reply(proc.stdout)

    return run


@dataclass
class JudgeCounts:
    """What a repository's candidates cost the judge in this run (``asked`` went to the judge, ``cached``
    were answered by an earlier build's verdicts, ``unasked`` were not asked: the budget was spent or the
    judge kept failing), and what every verdict the build relied on cost when it was asked (``set_*``:
    the same for an interrupted build and its resumption). ``characters``: of the packets asked."""

    asked: int = 0
    answered: int = 0
    failed: int = 0
    unasked: int = 0
    cached: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    characters: int = 0
    set_retries: int = 0
    set_input_tokens: int = 0
    set_output_tokens: int = 0

    def run_json(self) -> dict[str, int]:
        """This run's figures, as the build report gives them."""
        names = ("asked", "answered", "failed", "unasked", "cached", "retries", "input_tokens", "output_tokens", "characters")
        return {name: getattr(self, name) for name in names}

    def set_json(self) -> dict[str, int]:
        """What screening the fixture set cost, as the manifest keeps it (the same on a resumed build)."""
        return {
            "verdicts": self.answered + self.cached,
            "unanswered": self.failed,
            "unasked": self.unasked,
            "retries": self.set_retries,
            "input_tokens": self.set_input_tokens,
            "output_tokens": self.set_output_tokens,
        }

    def add(self, other: JudgeCounts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class Judge:
    """Asks the judge (``run``) about packets, ``jobs`` at a time; remembers verdicts by a digest of the
    command and the packet (``known``: an earlier build's; ``save`` is told each new one); stops asking
    once ``budget`` tokens are spent or after ``STOP_AFTER`` failures in a row. With ``plan`` it asks
    nothing: it counts the packets it would ask and lets every candidate pass."""

    def __init__(
        self,
        command: str,
        run: Runner,
        known: dict[str, Verdict] | None = None,
        *,
        jobs: int = 8,
        budget: int | None = None,
        save: Callable[[str, Verdict], None] | None = None,
        plan: bool = False,
    ) -> None:
        self.command, self.run, self.budget, self.plan = command, run, budget, plan
        self.known: dict[str, Verdict] = dict(known or {})
        self.spent = 0  # tokens, in and out, this run
        self.stopped: str | None = None  # why the build stopped asking
        self._save = save
        self._failures = 0  # in a row
        self._lock = threading.Lock()
        self._pending: dict[str, Future[Verdict]] = {}
        self._threads = _Threads(max(1, jobs))

    def key(self, packet: dict[str, object]) -> str:
        text = json.dumps({"command": self.command, "packet": packet}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def submit(self, packet: dict[str, object], counts: JudgeCounts, fix: str | None = None) -> Future[Verdict]:
        """The verdict on ``packet``, asked on the judge's threads (or known already)."""
        key = self.key(packet)
        with self._lock:
            if key in self.known:
                counts.cached += 1
                return _done(self._charged(self.known[key], counts))
            if self.plan:
                counts.asked += 1
                counts.characters += len(json.dumps(packet))
                return _done(Verdict(status="ok", fix=fix, **_PASSING[str(packet["kind"])]))
            if key not in self._pending:  # one packet asked twice (two candidates alike) is asked once
                self._pending[key] = self._threads.submit(self._ask, key, packet, counts, fix)
            return self._pending[key]

    def ask(self, packet: dict[str, object], counts: JudgeCounts, fix: str | None = None) -> Verdict:
        return self.submit(packet, counts, fix).result()

    def _ask(self, key: str, packet: dict[str, object], counts: JudgeCounts, fix: str | None) -> Verdict:
        with self._lock:
            if self.stopped is None and self.budget is not None and self.spent >= self.budget:
                self.stopped = f"the judge budget of {self.budget:,} tokens was spent"
            if self.stopped is not None:
                counts.unasked += 1
                self._pending.pop(key, None)
                return Verdict(status="unasked", error=self.stopped, fix=fix)
            counts.asked += 1
            counts.characters += len(json.dumps(packet))
        try:
            reply = self.run(packet)
        except MinerError as exc:  # a packet the judge cannot take at all
            reply = Reply(None, str(exc))
        verdict = _verdict(reply, str(packet["kind"]), fix)
        with self._lock:
            self.spent += reply.input_tokens + reply.output_tokens
            counts.retries += reply.retries
            counts.input_tokens += reply.input_tokens
            counts.output_tokens += reply.output_tokens
            self._pending.pop(key, None)
            if verdict.status != "ok":  # a failure is the run's, not an answer: asked again next time
                counts.failed += 1
                self._failures += not reply.deferred
                if self._failures >= STOP_AFTER and self.stopped is None:
                    self.stopped = f"the judge failed {STOP_AFTER} times in a row (the last: {verdict.error})"
                return verdict
            self._failures = 0
            counts.answered += 1
            self.known[key] = verdict
        if self._save is not None:  # on disk at once (outside the lock: the other calls need not wait for it)
            self._save(key, verdict)
        with self._lock:
            return self._charged(verdict, counts)

    @staticmethod
    def _charged(verdict: Verdict, counts: JudgeCounts) -> Verdict:
        """``verdict``, its cost added to what the set's verdicts cost."""
        counts.set_retries += verdict.retries or 0
        counts.set_input_tokens += verdict.input_tokens or 0
        counts.set_output_tokens += verdict.output_tokens or 0
        return verdict

    def close(self) -> None:
        self._threads.shutdown()


class _Threads:
    """The judge's threads: daemons, so that an interrupted build stops at once instead of waiting for
    the replies of a model (a ``ThreadPoolExecutor``'s threads are waited for when the process ends)."""

    def __init__(self, count: int) -> None:
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._count = count
        self._started: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if len(self._started) < self._count:
                thread = threading.Thread(target=self._run, name=f"miner-judge-{len(self._started)}", daemon=True)
                self._started.append(thread)
                thread.start()
        self._work.put((future, fn, args))
        return future

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - raised where the result is asked for
                future.set_exception(exc)

    def shutdown(self) -> None:
        """Cancel what has not started, and let the threads end once their call is done."""
        while True:
            try:
                item = self._work.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in self._started:
            self._work.put(None)


def _done(verdict: Verdict) -> Future[Verdict]:
    future: Future[Verdict] = Future()
    future.set_result(verdict)
    return future


def _verdict(reply: Reply, kind: str, fix: str | None) -> Verdict:
    """The verdict a reply gives: its answers for the packet's kind, or why there are none."""
    cost = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens, "retries": reply.retries}
    if reply.answers is None:
        return Verdict(status="error", error=reply.error or "no answer", fix=fix, **cost)
    answers = reply.answers
    try:
        found = {k: answers.get(k) for k in _FIELDS[kind]}
        reason = str(answers.get("reason") or answers.get("note") or "") or None
        return Verdict(status="ok", fix=fix, reason=reason, **found, **cost)
    except ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Verdict(status="error", error=f"unreadable answer: {first[:200]}", fix=fix, **cost)


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


def clean_packet(
    repository: str,
    change: Shown,
    later: list[Shown],
    nearby: Sequence[Shown] = (),
    left_out: int = 0,
) -> dict[str, object]:
    """What a judge reads of a clean candidate: the change, the later commits that changed its lines,
    and the fixes that followed in its files or their directories within the fix window without
    rewriting its lines (``nearby``; ``left_out`` more, newer, are not shown). ``nearby`` is in the
    packet only when there are such fixes, so the packets of other candidates, and their verdicts, are
    the same as before it was."""
    packet: dict[str, object] = {
        "version": PACKET_VERSION,
        "kind": "clean",
        "repository": repository,
        "change": change.commit,
        "message": change.message,
        "diff": change.diff,
        "later": [{"commit": c.commit, "message": c.message, "diff": c.diff} for c in later],
    }
    if nearby:
        packet["nearby"] = [{"commit": c.commit, "message": c.message, "diff": c.diff} for c in nearby]
        packet["nearby_left_out"] = left_out
    return packet | {"answer": _hints("clean")}


@dataclass(frozen=True)
class Keep:
    """What a judged build keeps besides what the judge passed, marked in the answer (``screen``):
    candidates it has no answer for (``unjudged``), and candidates it refused (``refused``: for
    measuring the judge against readers, ``miner validity``; not a set to score reviewers on)."""

    unjudged: bool = False
    refused: bool = False


@dataclass(frozen=True)
class Asked:
    """Where a judge's questions about one repository come from: the repository the packets are
    read from, its name in the output, whether to show progress, the mined commit, what is kept
    besides what the judge passes, and where the repository's judge figures are counted."""

    repo: Repo
    name: str
    counts: JudgeCounts
    keep: Keep = Keep()
    progress: bool = False
    head: str = "HEAD"  # the mined commit: later history shown to a judge ends there


def judged_bugs(
    judge: Judge,
    asked: Asked,
    bugs: dict[str, tuple[Defect, ...]],
    lookup: Callable[[str], CommitMeta | None],
    dropped: Counter[str],
) -> tuple[dict[str, tuple[Defect, ...]], dict[str, Screen]]:
    """The bug candidates the build keeps, each defect carrying the verdict on its (change, fix) pair,
    and what the judge decided of each kept one. A fixture keeps the defects of the pairs the judge
    passed; where none passed it is left out (counted by the first refusal, or as unanswered when a pair
    has no answer: a rerun may pass it), unless ``asked.keep`` says to keep it marked."""
    name = asked.name
    pairs = [(sha, fix) for sha, defects in sorted(bugs.items()) for fix in sorted({d.fix for d in defects})]
    # The packets are read here, in this thread (the repository and its caches are not shared across
    # threads); only the judge's own calls, which are slow, go side by side.
    packets = [read_bug_packet(asked.repo, name, sha, fix, [d for d in bugs[sha] if d.fix == fix], lookup) for sha, fix in pairs]
    futures = [judge.submit(packet, asked.counts, fix) for packet, (_, fix) in zip(packets, pairs)]
    found: dict[tuple[str, str], Verdict] = {}
    with tqdm(total=len(pairs), desc=f"{name}: judge", disable=not asked.progress, unit="pair", leave=False) as bar:
        for pair, future in zip(pairs, futures):
            found[pair] = future.result()
            bar.update()
    kept: dict[str, tuple[Defect, ...]] = {}
    screens: dict[str, Screen] = {}
    for sha, defects in sorted(bugs.items()):
        by_screen: dict[Screen, list[Defect]] = {"kept": [], "unjudged": [], "refused": []}
        why_not: list[str] = []
        for fix in sorted({d.fix for d in defects}):
            verdict = found[(sha, fix)]
            why = unanswered(verdict) or refusal(verdict)
            screen: Screen = "kept" if why is None else "unjudged" if unanswered(verdict) else "refused"
            by_screen[screen] += [
                d.model_copy(update={"evidence": d.evidence.model_copy(update={"judge": verdict})})
                for d in defects
                if d.fix == fix
            ]
            if why:
                why_not.append(why)
        marked: list[Screen] = ["kept"]
        marked += ["unjudged"] if asked.keep.unjudged else []
        marked += ["refused"] if asked.keep.refused else []
        mine = [d for s in marked for d in by_screen[s]]
        first = next((s for s in marked if by_screen[s]), None)
        if first is None:
            # An unanswered pair may pass on a rerun: the fixture is counted as unanswered, not refused.
            dropped[next((w for w in why_not if w.startswith("judge_un")), why_not[0])] += 1
            continue
        kept[sha] = tuple(sorted(mine, key=lambda d: (d.path, d.line_start, d.line_end, d.fix)))
        screens[sha] = first
    return kept, screens


def read_bug_packet(
    repo: Repo, name: str, sha: str, fix: str, defects: list[Defect], lookup: Callable[[str], CommitMeta | None]
) -> dict[str, object]:
    """The packet of the (change ``sha``, ``fix``) pair whose marked lines are ``defects``, read from ``repo``."""
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
    sample. What the judge says of a kept one goes into ``verdicts``, what it decided into ``screens``.
    ``head`` and ``config`` say how far the later history shown to the judge goes (the waiting window,
    up to the mined commit). The sample asks about candidates in batches (``many``): as many as it
    still needs, so the judge's calls for a batch run side by side and none is asked for nothing."""

    def __init__(
        self,
        checks: Planned,
        judge: Judge,
        asked: Asked,
        verdicts: dict[str, Verdict],
        screens: dict[str, Screen],
        config: Config,
        touches: FixTouches | None = None,
    ) -> None:
        self.checks, self.judge, self.verdicts, self.screens = checks, judge, verdicts, screens
        self.asked, self.repo, self.name, self.head, self.config = asked, asked.repo, asked.name, asked.head, config
        self.touches = touches

    def plan(self, order: list[CommitMeta]) -> None:
        self.checks.plan(order)

    def __call__(self, meta: CommitMeta) -> str | None:
        return self.many([meta])[0]

    def many(self, metas: Sequence[CommitMeta]) -> list[str | None]:
        """Why each of ``metas`` is refused (None: kept); the clean checks run in order, then the judge
        is asked about those that pass, side by side."""
        reasons: list[str | None] = [self.checks(meta) for meta in metas]
        futures: dict[int, Future[Verdict]] = {}
        for n, meta in enumerate(metas):
            if reasons[n] is not None:
                continue
            try:
                packet = read_clean_packet(self.repo, self.name, meta, self.head, self.config, self.touches)
            except MissingObjectError:  # the later history cannot be shown whole: refused as the clean check would
                reasons[n] = MISSING
                continue
            futures[n] = self.judge.submit(packet, self.asked.counts)
        for n, future in futures.items():
            reasons[n] = self._decide(metas[n].sha, future.result())
        return reasons

    def _decide(self, sha: str, verdict: Verdict) -> str | None:
        why = unanswered(verdict)
        screen: Screen = "unjudged"
        if why is None:
            why, screen = refusal(verdict), "kept"
            if why is not None:
                screen = "refused"
        keep = why is None or (self.asked.keep.unjudged if screen == "unjudged" else self.asked.keep.refused)
        if not keep:
            return why
        self.verdicts[sha], self.screens[sha] = verdict, screen
        return None


def read_clean_packet(
    repo: Repo, name: str, meta: CommitMeta, head: str, config: Config, touches: FixTouches | None = None
) -> dict[str, object]:
    """The packet of a clean candidate, read from ``repo``: the change, the later commits up to ``head``
    within the waiting window that rewrote or removed its lines, and the fixes ``touches`` knows of that
    followed in its source files or their directories within ``clean.fix_window_days`` (those that
    rewrote its lines are shown once, in ``later``)."""
    diffs = next(iter(repo.diffs([meta.sha])), (meta.sha, []))[1]
    later = [
        Shown(m.sha, m.message, _patch_text(repo, m.sha, 50_000, tuple(paths)))
        for m, paths in later_changes(meta, diffs, repo, head, config)
    ]
    shown = {c.commit for c in later}
    followed = [(sha, paths) for sha, paths in fixes_nearby(meta, config, touches) if sha not in shown]
    nearby = [Shown(sha, _message(repo, sha), _patch_text(repo, sha, 20_000, paths)) for sha, paths in followed[:NEARBY]]
    change = Shown(meta.sha, meta.message, _patch_text(repo, meta.sha))
    return clean_packet(name, change, later, nearby, max(0, len(followed) - NEARBY))


def _message(repo: Repo, sha: str) -> str:
    found = repo.meta(sha)
    return found.message if found is not None else ""
