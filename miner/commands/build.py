"""``miner build``: run the stages over each repository and write the fixture set.

For each repository (``_mine``): walk history (``stages.walk``; reusing the cached walk) ->
vet the fix candidates (``stages.vet``) -> blame them back to the introducing commits
(``stages.blame``, started from ``stages.anchors``) -> keep the bug candidates that clear the
tier bar, the window and the size limit, cut to the lines their change added (``stages.bug``)
-> ask the judge, if there is one (``stages.judge``) -> sample clean commits (``stages.clean``),
with the share of their lines still standing. Then, over all
repositories (``_write_fixtures``): assign splits by family and ledger (``stages.split``) ->
assemble each fixture, hints stripped (``stages.fixture``, ``stages.strip``) -> write it and
the manifest (``stages.write``). Each stage counts what it dropped and why; the counts land in
the manifest and in the summary printed at the end. Before mining, a repository is given a
commit-graph overlay (``git.overlay``) and, if it is a partial clone, the objects it lacks.

The expensive parts (blame, fixture assembly) run as tasks on an executor (inline, a
process pool, or Dask); results are merged in a fixed order, so every engine and every
``-j`` gives the same bytes. What was mined is cached in the output, so a rebuild only
mines what is new, and an interrupted build resumes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import shutil
import statistics
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from miner import __version__
from miner.core.classify import path_kind, with_vendored
from miner.core.config import Config
from miner.core.errors import MinerError, MissingObjectError
from miner.core.output import MANIFEST, STAGES, dumps
from miner.core.records import Answer, CleanPick, CleanQuota, CommitMeta, FixCommit, Label, Verdict, iso
from miner.git import Repo
from miner.git.history import PathHistory
from miner.git.overlay import overlay_graphs, with_overlay
from miner.git.partial import with_promised
from miner.runner.cache import Cache, clean_key, labels_key, visible_key
from miner.runner.engine import (
    ExecutorKind,
    LabelResult,
    Lookahead,
    RepoRef,
    added_task,
    anchor_task,
    authorship_task,
    chunks,
    clean_check_task,
    default_jobs,
    fixture_task,
    in_order,
    label_task,
    make_executor,
    start_workers,
)
from miner.stages import anchors
from miner.stages.bug import bug_heads, on_added_lines
from miner.stages.clean import (
    RELAXED_BY,
    Checked,
    FixTouches,
    Known,
    Listed,
    Quota,
    answer_fields,
    clean_quota,
    expected_followed,
    fix_window_scopes,
    fixes_digest,
    is_correction,
    pick_clean,
    still_answered,
    stratum,
    survival_shares,
    wanted,
    window_end,
)
from miner.stages.fixture import FixtureJob, Source, fixture_id, make_answer
from miner.stages.judge import (
    Asked,
    Judge,
    JudgeCounts,
    JudgedClean,
    Keep,
    Reply,
    Runner,
    Screen,
    command_runner,
    judged_bugs,
)
from miner.stages.ledger import LEDGER, Ledger, updated
from miner.stages.split import Member, assign_splits, family_keys, repository_split
from miner.stages.vet import vet_fixes
from miner.stages.walk import find_fixes
from miner.stages.write import (
    Earlier,
    Staging,
    Written,
    assemble_manifest,
    check_destination,
    check_outside,
    earlier_fixture,
    write_fixture,
)

_LOG = logging.getLogger(__name__)


@dataclass
class RepoReport:
    name: str
    identity: str
    head: str
    head_date: str
    split: str
    shallow: bool
    commits: int = 0
    fixes: int = 0
    labelled: int = 0  # the fixes whose message passed the vet stage: those blame labels
    labels: Counter[str] = field(default_factory=Counter)
    bugs: int = 0
    clean: int = 0
    reused_labels: int = 0
    reused_clean: int = 0  # clean checks an earlier build answered that still hold
    vendored: list[str] = field(default_factory=list)  # trees found vendored by their sync commits
    sizes: dict[str, dict[str, float | int]] = field(default_factory=dict)
    dropped: dict[str, Counter[str]] = field(default_factory=lambda: {s: Counter() for s in STAGES})
    judge: JudgeCounts | None = None  # what the judge was asked and what it cost, when there is one
    clean_quota: CleanQuota | None = None  # how the clean sample fared against clean.ratio

    def to_json(self, run: bool = True) -> dict[str, Any]:
        """The repository's report: with ``run``, the judge's figures of this run (the build report);
        without, what screening its fixtures cost (the manifest: the same for a resumed build)."""
        judged = {} if self.judge is None else {"judge": self.judge.run_json() if run else self.judge.set_json()}
        return {
            "name": self.name,
            "identity": self.identity,
            "head": self.head,
            "head_date": self.head_date,
            "split": self.split,
            "shallow": self.shallow,
            "commits": self.commits,
            "fixes": self.fixes,
            "labels_by_tier": dict(sorted(self.labels.items())),
            "fixtures": {"bug": self.bugs, "clean": self.clean},
            "vendored_trees": self.vendored,
            "sizes": self.sizes,
            "dropped": {stage: dict(sorted(c.items())) for stage, c in self.dropped.items()},
            **({} if self.clean_quota is None else {"clean_quota": self.clean_quota.model_dump(mode="json")}),
            **judged,
        }


@dataclass(frozen=True)
class Window:
    """Which changes may become fixtures, by committer date (UTC)."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def holds(self, when: dt.datetime) -> bool:
        return (self.since is None or when >= self.since) and (self.until is None or when <= self.until)

    def to_json(self) -> dict[str, str | None]:
        return {"since": iso(self.since) if self.since else None, "until": iso(self.until) if self.until else None}


@dataclass(frozen=True)
class Workers:
    """Where the expensive stages run: inline (``jobs`` 1), a local process pool, or a Dask cluster
    (at ``address``, or the one ``scheduler_file`` describes)."""

    jobs: int = 1
    executor: ExecutorKind = "local"
    address: str | None = None
    scheduler_file: str | None = None


@dataclass(frozen=True)
class JudgeCommand:
    """A command asked about every candidate (see miner.stages.judge): how long one answer may take (a
    command run as a process), how many are asked at once, the tokens a build may spend (None: no
    limit), and what is kept besides what it passes."""

    command: str
    timeout: float = 600.0
    jobs: int = 8
    budget: int | None = None
    keep: Keep = Keep()


@dataclass(frozen=True)
class BuildOptions:
    """What a build mines and how, beyond the config: the revision and names of the repositories,
    the window of dates, the workers, the cache, a judge, and whether to mine a partial clone
    without the objects its remote cannot give (``allow_missing``)."""

    rev: str = "HEAD"
    names: list[str] | None = None
    window: Window = Window()
    workers: Workers = Workers()
    use_cache: bool = True
    judge: JudgeCommand | None = None
    allow_missing: bool = False
    plan: bool = False  # mine, ask the judge nothing, write nothing: say what the judge would be asked


@dataclass(frozen=True)
class Run:
    """What every stage of one build shares: the settings, the workers, the cache, the window. A
    repository's stages get a copy whose config knows its vendored trees."""

    config: Config
    pool: Executor
    jobs: int
    cache: Cache
    window: Window
    progress: bool
    judge: Judge | None = None
    keep: Keep = Keep()  # what a judged build keeps besides what the judge passes


@dataclass(frozen=True)
class _Target:
    """One repository of a build: how it is read, what it is called, the commit mined, and a
    scratch directory of its own."""

    repo: Repo
    name: str
    head: str
    identity: str
    scratch: Path


@dataclass
class _Mined:
    """One repository after the walk, blame and clean stages: what will become fixtures."""

    repo: Repo
    report: RepoReport
    jobs: list[FixtureJob]
    metas: dict[str, CommitMeta]
    clean: dict[str, tuple[CleanPick, float | None]] = field(default_factory=dict)  # pick -> (the pick, its survival)
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # clean pick -> what the judge said of it
    screens: dict[str, Screen] = field(default_factory=dict)  # fixture's change -> what the judge decided


@dataclass
class BuildResult:
    out: Path
    reports: list[RepoReport]
    fixtures: int
    young_clean_left_out: int = 0
    planned: bool = False  # a plan: nothing was asked or written
    judge_stopped: str | None = None  # why the build stopped asking the judge, if it did
    keep: Keep = Keep()  # what the build kept, marked, besides what the judge passed


def repository_name(path: Path) -> str:
    """A repository's default name: its directory's, less ``.git`` (``repo/.git`` is ``repo``)."""
    path = path.resolve()
    if path.name == ".git":
        path = path.parent
    name = path.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")  # a name that is not UTF-8
    return name[:-4] if name.endswith(".git") and len(name) > 4 else name


class _CleanChecks:
    """The clean stage's checks that read git (miner.stages.clean.refusal), run on the pool ahead of the
    sample's choices: told the order candidates are asked in, the workers check the next few while
    the sample decides. The sample is the same as checking one at a time. Answers an earlier build
    gave that still hold (miner.stages.clean.still_answered) are not asked again; every answer is
    kept in the cache, with the head it holds at."""

    def __init__(self, run: Run, target: _Target, commits: dict[str, CommitMeta], fixes: set[str]) -> None:
        self._ahead: Lookahead[str, str | None] = Lookahead(
            run.pool, clean_check_task, 2 * run.jobs if run.jobs > 1 else 0, self._task_args
        )
        self._args = (RepoRef.of(target.repo), target.head, run.config, frozenset(fixes))
        self._repo, self._config, self._commits = target.repo, run.config, commits
        # Which later commits each candidate's check reads, worked out here from the walk's records
        # instead of a path-limited git log per candidate in the worker.
        self._history = PathHistory(target.repo, target.head, commits, lambda m: is_correction(m, run.config, fixes))
        self._cache, self._identity, self._key = run.cache, target.identity, clean_key(run.config, target.repo.exclude)
        earlier = run.cache.clean_checks(target.identity, self._key)
        self._known = still_answered(target.repo, target.head, run.config, commits, fixes, earlier) if earlier else {}
        self._stamp = (target.head, fixes_digest(fixes))
        self.reused = 0

    def plan(self, order: list[CommitMeta]) -> None:
        self._ahead.plan([meta.sha for meta in order if meta.sha not in self._known])

    def _task_args(self, sha: str) -> tuple[Any, ...]:
        meta = self._commits[sha]
        paths = expected_followed(self._repo, meta)
        later = self._history.listed(sha, paths, window_end(meta, self._config))
        return (*self._args, meta, None if later is None else Listed(paths, tuple(later)))

    def __call__(self, meta: CommitMeta) -> str | None:
        if meta.sha in self._known:
            reason = self._known[meta.sha]
            self.reused += 1
        else:
            reason = self._ahead.get(meta.sha)
        self._cache.add_clean_check(self._identity, self._key, meta.sha, Checked(*self._stamp, reason))
        return reason

    def close(self) -> None:
        self._ahead.close()


def build(
    paths: list[Path],
    out: Path,
    config: Config,
    options: BuildOptions = BuildOptions(),
    *,
    force: bool = False,
    progress: bool = True,
) -> BuildResult:
    """Mine every repository and write one fixture set to ``out`` (``force``: replace what is there).

    ``options.names`` overrides the repository names (by default each directory's name, less ``.git``).
    Progress is told through the ``miner`` logger (the command line prints it on stderr).
    ``options.judge`` is a command asked about every candidate (see miner.stages.judge). A partial clone gets
    the objects it lacks from its promisor remote first; when that fails, the build stops, unless
    ``options.allow_missing``: then it mines without them, leaving out the paths they belong to.
    """
    rev, window, workers, jobs = options.rev, options.window, options.workers, options.workers.jobs
    if not options.plan:  # a plan writes nothing: it may look at an existing output's cache
        check_destination(out, force)
    repos = [Repo(p) for p in paths]  # every bad path is reported before any work starts
    check_outside(out, "--out", ((r.top, r.git_dir) for r in repos))
    names = options.names or [repository_name(p) for p in paths]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise MinerError(f"two repositories are both named {duplicate!r}; name them apart as NAME=PATH")
    heads = [r.resolve(rev) for r in repos]
    previous = out if (out / MANIFEST).is_file() else None
    ledger = _load_ledger(previous)
    judge_run = _judge_runner(options.judge, options.plan) if options.judge else None  # a bad judge stops us here
    scratch = Path(tempfile.mkdtemp(prefix="miner-"))
    try:
        staging = None if options.plan else Staging(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    sources = [s for s in (staging.resumed if staging else None, previous) if s is not None] if options.use_cache else []
    cache = Cache(sources, staging.dir if staging else scratch / "plan")
    asker = _asker(options.judge, judge_run, cache, options.plan) if options.judge and judge_run else None
    pool, shutdown = make_executor(workers.executor, jobs, workers.address, workers.scheduler_file)
    try:
        start_workers(pool, jobs)
        known = _known_identities(previous)
        identities = [repo.identity(head, known.get(name)) for repo, head, name in zip(repos, heads, names)]
        keep = options.judge.keep if options.judge else Keep()
        run = Run(config=config, pool=pool, jobs=jobs, cache=cache, window=window, progress=progress, judge=asker, keep=keep)
        mined: list[_Mined] = []
        for n, (repo, name, head, identity) in enumerate(zip(repos, names, heads, identities)):
            prepared = _prepare(repo, head, scratch / str(n), cache.commit_graphs(identity), options.allow_missing, progress)
            mined.append(_mine(run, _Target(repo, name, head, identity, scratch / str(n)), prepared))
        repos = [m.repo for m in mined]
        stopped = asker.stopped if asker else None
        if staging is None:  # a plan: nothing more to do
            return BuildResult(out=out, reports=[m.report for m in mined], fixtures=0, planned=True)
        if asker is not None:
            asker.close()
            cache.save_judge_verdicts(asker.known)
        entries, ledger = _write_fixtures(run, mined, staging, ledger, previous)
        cache.sort_labels()
        for repo, identity in zip(repos, identities):
            if repo.overlay:
                cache.keep_commit_graphs(identity, overlay_graphs(repo.overlay))
        staging.write(LEDGER, dumps(ledger.model_dump(mode="json")))
        fields = {
            "miner_version": __version__,
            "config_hash": config.digest(),
            "min_tier": config.labels.min_tier,
            "description_mode": config.strip.description,
            "seed": config.seed,
            "window": window.to_json(),
            "cutoffs": {k: v.isoformat() for k, v in sorted(config.split.cutoffs.items())},
            "visible_key": visible_key(config),
            "repositories": [m.report.to_json(run=False) for m in mined],
            **({} if asker is None else {"judge": _judge_totals(mined)}),
        }
        staging.finish(assemble_manifest(fields, config.split.cutoffs, entries).json_text())
    except BaseException:
        cache.close()
        if staging is not None:
            staging.abort()
        raise
    finally:
        if asker is not None:
            asker.close()
        shutdown()
        shutil.rmtree(scratch, ignore_errors=True)
    young = sum(m.report.dropped["clean"].get("too_young", 0) for m in mined)
    reports = [m.report for m in mined]
    return BuildResult(
        out=out, reports=reports, fixtures=len(entries), young_clean_left_out=young, judge_stopped=stopped, keep=run.keep
    )


def _judge_runner(judge: JudgeCommand, plan: bool) -> Runner:
    """How the judge is asked: ``miner judge`` in this process (``chat_judge.command_model``; its options
    and its client are checked now, before anything is mined), any other command as a process per packet."""
    from miner.commands.chat_judge import chat_runner, command_model

    model = command_model(judge.command)
    if model is None:
        return command_runner(judge.command, judge.timeout)
    return _unasked if plan else chat_runner(model)  # a plan asks nothing: it needs no client


def _asker(judge: JudgeCommand, run: Runner, cache: Cache, plan: bool) -> Judge:
    """The judge of a build; its verdicts are saved as they come."""
    return Judge(
        judge.command, run, cache.judge_verdicts(), jobs=judge.jobs, budget=judge.budget, save=cache.add_judge_verdict, plan=plan
    )


def _prepare(repo: Repo, head: str, where: Path, graphs: Path | None, allow_missing: bool, progress: bool) -> Future[Repo]:
    """The repository as labelling reads it: with the commit-graph overlay (miner.git.overlay) and, for
    a partial clone, the objects it lacks (miner.git.partial). Writing the commit-graph takes as long
    as a good part of the walk and does not change it: for a clone that lacks nothing, it is written
    while the history is walked."""

    def prepare() -> Repo:
        return with_promised(with_overlay(repo, where, graphs), head, where, allow_missing, progress)

    future: Future[Repo] = Future()
    if repo.promisor is not None:  # its walk may need the objects fetched first
        future.set_result(prepare())
        return future

    def background() -> None:
        try:
            future.set_result(prepare())
        except BaseException as exc:  # noqa: BLE001 - raised where the build asks for the result
            future.set_exception(exc)

    threading.Thread(target=background, name="miner-overlay", daemon=True).start()
    return future


def _known_identities(previous: Path | None) -> dict[str, str]:
    """Repository name -> the identity the output being replaced gave it."""
    if previous is None:
        return {}
    try:
        manifest = json.loads((previous / MANIFEST).read_text(encoding="utf-8"))
        return {str(r["name"]): str(r["identity"]) for r in manifest.get("repositories", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _load_ledger(previous: Path | None) -> Ledger:
    if previous is None or not (previous / LEDGER).is_file():
        return Ledger()
    try:
        return Ledger.model_validate_json((previous / LEDGER).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise MinerError(
            f"{previous / LEDGER} is damaged ({exc.__class__.__name__}); restore it from a backup, "
            "or move it away to start a new ledger"
        ) from exc


def _walk(run: Run, repo: Repo, head: str, identity: str, dropped: Counter[str]) -> list[CommitMeta]:
    """Every non-merge commit to mine: from the cache as far as it reaches, from git for the rest.

    A repository that lacks some objects (a snapshot without its largest blobs, a damaged store) is
    mined without the paths whose history names them, the same on a cold build, a rebuild and a
    resume: the paths a walk left out are cached with it."""
    cache, window = run.cache, run.window
    cached, cached_heads, excluded = cache.commits(identity)
    reusable = bool(cached and cached_heads and all(repo.expand(h) and repo.is_ancestor(h, head) for h in cached_heads))
    if reusable:
        repo.exclude = tuple(excluded)
    split = min(run.jobs, default_jobs())  # git processes diffing the history at once, on this machine
    try:
        walked = _walk_once(repo, head, cached if reusable else [], cached_heads, window, split)
    except MissingObjectError:
        found = tuple(repo.paths_with_missing_objects(head))
        if not found or found == repo.exclude:
            raise
        repo.exclude = found  # paths the cached walk did not leave out: walk the whole history again
        walked = _walk_once(repo, head, [], [], window, split)
    if repo.exclude:
        _LOG.warning("%s: objects missing for %d path(s); their history is left out", repo.path, len(repo.exclude))
        dropped["paths_with_missing_objects"] += len(repo.exclude)
    if window.since is None or reusable:  # a partial walk is not cached
        cache.save_commits(identity, walked, [head], repo.exclude)
    return walked


def _walk_once(
    repo: Repo, head: str, cached: list[CommitMeta], cached_heads: list[str], window: Window, split: int
) -> list[CommitMeta]:
    if cached:
        metas = {m.sha: m for m in cached}
        metas.update((m.sha, m) for m in repo.commits(head, exclude=cached_heads, split=split))
        return sorted(metas.values(), key=lambda m: m.sha)
    if window.since is not None:
        # No earlier walk to reuse: walk only what can yield fixtures in the window (their
        # fixes land after `since`).
        return list(repo.commits(head, since=iso(window.since)))
    return sorted(repo.commits(head, split=split), key=lambda m: m.sha)


def _labels(run: Run, target: _Target, fixes: list[FixCommit], metas: dict[str, CommitMeta], report: RepoReport) -> list[Label]:
    config, pool, jobs, cache = run.config, run.pool, run.jobs, run.cache
    repo, identity = target.repo, target.identity
    key = labels_key(config)
    known = cache.labels(identity, key)
    todo = [f for f in fixes if f.meta.sha not in known]
    results: dict[str, LabelResult] = {f.meta.sha: known[f.meta.sha] for f in fixes if f.meta.sha in known}
    report.reused_labels = len(results)
    cache.add_labels(identity, key, results.values())
    ref = RepoRef.of(repo, _anchor(run, target, todo, metas, report))
    # Small chunks: the last ones, which one worker may finish alone, are short.
    calls = ((ref, chunk, config) for chunk in chunks(todo, jobs, largest=16))
    with tqdm(total=len(todo), desc=f"{report.name}: blame", disable=not run.progress, unit="fix", leave=False) as bar:
        for batch in in_order(pool, label_task, calls, _ahead(jobs)):
            cache.add_labels(identity, key, batch)
            for r in batch:
                results[r.fix] = r
            bar.update(len(batch))
    labels: list[Label] = []
    for fix in sorted(results):
        report.dropped["blame"].update(results[fix].dropped)
        vetted = results[fix].vetted
        if vetted:
            report.dropped["vet"][vetted] += 1
        labels += results[fix].labels
    return labels


def _ahead(jobs: int) -> int:
    """Tasks kept out at once: enough that no worker waits for the next one."""
    return 2 * max(1, jobs) + 1


def _anchor(run: Run, target: _Target, todo: list[FixCommit], metas: dict[str, CommitMeta], report: RepoReport) -> str | None:
    """Blame anchors for the source files many of the fixes change (see miner.stages.anchors), and the
    newest anchor of each such file from earlier builds, which a rebuild's few fixes start from."""
    config, pool, jobs, cache = run.config, run.pool, run.jobs, run.cache
    repo, head, identity, where = target.repo, target.head, target.identity, target.scratch / "anchors"
    tips = cache.tip_anchors(identity)
    touched = Counter(f.path for m in metas.values() for f in m.files)
    fixed = [
        [f.old_path or f.path for f in fix.meta.files if f.removed and path_kind(f.old_path or f.path, config.paths) == "source"]
        for fix in todo
    ]
    hot = anchors.hot_paths(fixed, touched, anchors.HOT_FIXES, anchors.EVERY)
    calls = ((RepoRef.of(repo), head, path, anchors.EVERY) for path in hot)
    with tqdm(total=len(hot), desc=f"{report.name}: anchors", disable=not run.progress, unit="file", leave=False) as bar:
        for path, chain in in_order(pool, anchor_task, calls, _ahead(jobs)):
            if chain:
                anchors.save(where, path, chain)
                tips[path] = chain[-1]
            bar.update()
    for path in sorted(set(tips) - set(hot)):
        anchors.save(where, path, [tips[path]])
    if not tips:
        return None
    cache.save_tip_anchors(identity, tips)
    anchors.save_mainline(where, repo, head)
    return str(where)


def _mine(run: Run, target: _Target, prepared: Future[Repo]) -> _Mined:
    """One repository through the stages: walk, vet, blame, bug, clean; the jobs of its fixtures.
    The history is walked in ``target.repo``; everything after reads ``prepared``'s repository."""
    config, window, judge = run.config, run.window, run.judge
    repo, name, head, identity = target.repo, target.name, target.head, target.identity
    head_date = repo.committer_date(head)
    report = RepoReport(
        name=name,
        identity=identity,
        head=head,
        head_date=iso(head_date),
        split=repository_split(name, identity, config.split),
        shallow=repo.shallow,
    )
    _LOG.info("%s: walking history at %s", name, head[:12])
    walker = prepared.result() if prepared.done() else repo  # a partial clone's is ready: it walks with its objects
    metas = {m.sha: m for m in _walk(run, walker, head, identity, report.dropped["walk"])}
    repo = prepared.result()
    repo.exclude = walker.exclude  # the paths the walk found objects missing for
    target = replace(target, repo=repo)
    config, report.vendored = with_vendored(config, metas.values())
    run = replace(run, config=config)
    if report.vendored:
        _LOG.info(
            "%s: %d vendored tree(s) found by their sync commits: %s%s",
            name,
            len(report.vendored),
            ", ".join(report.vendored[:5]),
            " ..." if len(report.vendored) > 5 else "",
        )
    fixes = list(find_fixes(metas.values(), config, repo.expand, report.dropped["walk"]))
    fixes.sort(key=lambda f: f.meta.sha)
    vetted = [fix.model_copy(update={"reasons": why}) for fix, why in vet_fixes(fixes, config, report.dropped["vet"])]
    report.labelled = len(vetted)
    report.commits, report.fixes = len(metas), len(fixes)
    _LOG.info("%s: %d commits, %d fixes", name, len(metas), len(fixes))
    labels = _labels(run, target, vetted, metas, report)
    for lab in labels:
        if lab.tier:
            report.labels[lab.tier] += 1

    def lookup(sha: str) -> CommitMeta | None:
        return metas.get(sha) or repo.meta(sha)

    heads = bug_heads(labels, lookup, config, window.holds, report.dropped["bug"])
    bugs = on_added_lines(_added_lines(run, repo, sorted(heads)), heads, report.dropped["bug"])
    verdicts: dict[str, Verdict] = {}
    screens: dict[str, Screen] = {}
    if judge is not None:
        report.judge = JudgeCounts()
        asked = Asked(repo, name, report.judge, run.keep, run.progress, head)
        bugs, screens = judged_bugs(judge, asked, bugs, lookup, report.dropped["judge"])
    bug_strata = [stratum(meta, config) for meta in (lookup(sha) for sha in sorted(bugs)) if meta is not None]
    blamed = {sha for lab in labels for sha in lab.blamed}
    in_window = [m for m in metas.values() if window.holds(m.committed)]
    if len(in_window) < len(metas):
        report.dropped["clean"]["outside_window"] += len(metas) - len(in_window)
    fix_shas = {f.meta.sha for f in fixes}
    checks = _CleanChecks(run, target, metas, fix_shas)
    touches = FixTouches(f.meta for f in fixes)
    check: Callable[[CommitMeta], str | None] = checks
    if judge is not None:
        check = JudgedClean(checks, judge, asked, verdicts, screens, config, touches)
    known = Known(int(head_date.timestamp()), blamed, fix_shas, touches)
    quota = Quota(wanted(len(bugs), config), bug_strata)
    scopes = fix_window_scopes(config, judged=judge is not None)
    picks = pick_clean(sorted(in_window, key=lambda m: m.sha), quota, config, known, check, report.dropped["clean"], scopes)
    checks.close()
    report.reused_clean = checks.reused
    report.clean_quota = clean_quota(quota.count, len(picks), len(in_window), report.dropped["clean"])
    survival = _survival(run, repo, head, picks, metas) if config.clean.survival else {}
    report.bugs, report.clean = len(bugs), len(picks)
    jobs_: list[FixtureJob] = [FixtureJob("bug", sha, report.split, defects, None) for sha, defects in sorted(bugs.items())]
    jobs_ += [FixtureJob("clean", p.sha, report.split, None, p.observed_days) for p in picks]
    report.sizes = {"bug": _sizes([lookup(sha) for sha in bugs]), "clean": _sizes([metas[p.sha] for p in picks])}
    return _Mined(
        repo=repo,
        report=report,
        jobs=jobs_,
        metas=metas,
        clean={p.sha: (p, survival.get(p.sha)) for p in picks},
        verdicts=verdicts,
        screens=screens,
    )


def _added_lines(run: Run, repo: Repo, shas: list[str]) -> Callable[[str], dict[str, set[int]]]:
    """``added_in(repo)`` for these changes, read on the pool ahead of ``on_added_lines``."""
    found: dict[str, dict[str, set[int]] | None] = {}
    calls = ((RepoRef.of(repo), chunk) for chunk in chunks(shas, run.jobs, largest=16))
    for batch in in_order(run.pool, added_task, calls, _ahead(run.jobs)):
        found.update(batch)

    def added_of(sha: str) -> dict[str, set[int]]:
        added = found[sha]
        if added is None:
            raise MissingObjectError(f"the diff of {sha} names an object the repository lacks")
        return added

    return added_of


def _survival(run: Run, repo: Repo, head: str, picks: list[CleanPick], metas: dict[str, CommitMeta]) -> dict[str, float | None]:
    """Share of each clean pick's added source lines that blame at ``head`` still gives to it.

    Each touched path is blamed once, however many picks touched it. Files no longer at the
    same path at ``head`` are left out of the share (unknown, rather than counted as gone).
    """
    config, pool, jobs = run.config, run.pool, run.jobs
    added = {
        p.sha: {
            f.path: f.added
            for f in metas[p.sha].files
            if f.added and not f.binary and path_kind(f.path, config.paths) == "source"
        }
        for p in picks
    }
    paths = sorted({path for files in added.values() for path in files})
    authors: dict[str, dict[str, int] | None] = {}
    for batch in in_order(pool, authorship_task, ((RepoRef.of(repo), head, c) for c in chunks(paths, jobs)), _ahead(jobs)):
        authors.update(batch)
    return survival_shares(added, authors)


def _sizes(metas: list[CommitMeta | None]) -> dict[str, float | int]:
    """Median changed lines and files, to compare the clean sample with the bug fixtures. Medians
    are always floats (``statistics.median`` gives an int for an odd count of ints), so the
    manifest's types do not depend on how many fixtures there are."""
    present = [m for m in metas if m is not None]
    if not present:
        return {"count": 0}
    return {
        "count": len(present),
        "median_lines": float(statistics.median(m.changed_lines for m in present)),
        "median_files": float(statistics.median(len(m.files) for m in present)),
    }


def _write_fixtures(
    run: Run, mined: list[_Mined], staging: Staging, ledger: Ledger, previous: Path | None
) -> tuple[list[Written], Ledger]:
    """Assign splits by family and ledger, then assemble (or reuse) and write every fixture."""
    config, pool, jobs, cache, progress = run.config, run.pool, run.jobs, run.cache, run.progress
    _one_fixture_per_change(mined, config.split.salt)
    ids: dict[tuple[int, str], str] = {}
    members: dict[str, Member] = {}
    for n, m in enumerate(mined):
        patch_ids = _patch_ids(m, cache)
        for job in m.jobs:
            fid = fixture_id(m.report.identity, job.head, config.split.salt)
            ids[(n, job.head)] = fid
            keys = family_keys(job.head, [d.fix for d in job.defects or ()], patch_ids.get(job.head))
            members[fid] = Member(job.split, m.report.name, keys)
    splits, family = assign_splits(members, ledger)
    key = visible_key(config)
    old_key = None
    if previous is not None:
        try:
            old_key = json.loads((previous / MANIFEST).read_text(encoding="utf-8")).get("visible_key")
        except (OSError, ValueError):
            old_key = None
    entries: list[Written] = []
    for n, m in enumerate(mined):
        todo: list[FixtureJob] = []
        for job in m.jobs:
            fid = ids[(n, job.head)]
            reuse = earlier_fixture(previous, fid, key, old_key)
            if reuse is None:
                todo.append(job)
                continue
            answer = _answer(m, replace(job, split=splits[fid]), reuse, family[fid], config)
            entries.append(write_fixture(staging, answer, reuse.visible, family[fid]))  # the visible text, as it was
        # Small chunks: a finished chunk carries the whole files of its fixtures back to this process.
        source = Source(m.report.name, m.report.identity)
        calls = ((RepoRef.of(m.repo), source, chunk, config) for chunk in chunks(todo, jobs, largest=8))
        with tqdm(total=len(todo), desc=f"{m.report.name}: write", disable=not progress, unit="fixture", leave=False) as bar:
            for batch in in_order(pool, fixture_task, calls, _ahead(jobs)):
                for fixture in batch:
                    fid = fixture.visible.id
                    answer = fixture.answer.model_copy(
                        update={
                            "split": splits[fid],
                            "family": family[fid],
                            **_clean_fields(m, fixture.answer.head, fixture.answer.observed_days, config),
                        }
                    )
                    entries.append(write_fixture(staging, answer, fixture.visible, family[fid]))
                    bar.update(1)
    repos = {str(w.entry["id"]): str(w.entry["repository"]) for w in entries}
    for m in mined:
        lost = len(m.jobs) - sum(1 for repository in repos.values() if repository == m.report.name)
        if lost:
            m.report.dropped["write"]["fixture_missing_object"] += lost
    written = {fid: split for fid, split in splits.items() if fid in repos}
    return entries, updated(ledger, written, repos, family)


def _one_fixture_per_change(mined: list[_Mined], salt: str) -> None:
    """A change two repositories share (a fork mined beside its origin, or an older clone beside a
    newer one: both hold the commit, and their common root gives it one fixture id) becomes one
    fixture, the one with the most evidence: a bug fixture before a clean one (a fix in either history
    means the change was not clean), then the most defects, or the clean one watched longest, then the
    newest history, then the name that sorts first, so the order of the arguments does not matter. The
    others' jobs are dropped at the write stage as ``in_another_repository``."""
    best: dict[str, tuple[tuple[bool, int, str], str]] = {}
    for m in sorted(mined, key=lambda m: m.report.name):
        for job in m.jobs:
            fid = fixture_id(m.report.identity, job.head, salt)
            weight = len(job.defects or ()) if job.kind == "bug" else job.observed_days or 0
            evidence = (job.kind == "bug", weight, m.report.head_date)
            if fid not in best or evidence > best[fid][0]:
                best[fid] = (evidence, m.report.name)
    for m in mined:
        kept, gone = [], Counter[str]()
        for job in m.jobs:
            if best[fixture_id(m.report.identity, job.head, salt)][1] == m.report.name:
                kept.append(job)
            else:
                gone[job.kind] += 1
        m.jobs = kept
        m.report.bugs -= gone["bug"]
        m.report.clean -= gone["clean"]
        if gone:
            m.report.dropped["write"]["in_another_repository"] += gone.total()


def _patch_ids(m: _Mined, cache: Cache) -> dict[str, str]:
    """Patch-ids of the fixtures' commits (for families); a commit's never changes, so the cache
    keeps them, keyed by the paths left out of the history read (they change the patch)."""
    key = hashlib.sha1("\0".join(m.repo.exclude).encode()).hexdigest()[:16]
    known = cache.patch_ids(m.report.identity, key)
    ids = {**known, **m.repo.commit_patch_ids([j.head for j in m.jobs if j.head not in known])}
    cache.save_patch_ids(m.report.identity, key, ids)
    return ids


def _clean_fields(m: _Mined, head: str, observed: int | None, config: Config) -> dict[str, Any]:
    """What an answer records of how clean a clean fixture is (nothing for a bug fixture), and what
    the judge decided of either kind."""
    picked, survival = m.clean.get(head, (None, None))
    screen = {"screen": m.screens[head]} if head in m.screens else {}
    return answer_fields(observed, picked, survival, m.verdicts.get(head), config) | screen


def _answer(m: _Mined, job: FixtureJob, earlier: Earlier, family: str, config: Config) -> Answer:
    """The answer of a fixture whose visible part an earlier build made (``job.split``: the ledger's)."""
    return make_answer(
        Source(m.report.name, m.report.identity),
        job,
        m.metas[job.head],
        earlier.blanked,
        config,
        title_replaced=earlier.title_replaced,
        family=family,
        **_clean_fields(m, job.head, job.observed_days, config),
    )


def _unasked(packet: dict[str, object]) -> Reply:
    return Reply(None, "a plan asks nothing")


def _judge_totals(mined: list[_Mined]) -> dict[str, int]:
    """What screening the whole fixture set cost (the manifest's ``judge``)."""
    total = JudgeCounts()
    for m in mined:
        if m.report.judge is not None:
            total.add(m.report.judge)
    return total.set_json()


def summary_table(result: BuildResult, config: Config | None = None) -> str:
    """The end-of-run summary: what was mined, and what each stage dropped and why."""
    lines = [f"{'repository':<20} {'commits':>8} {'fixes':>6} {'bug':>5} {'clean':>6}  split"]
    for r in result.reports:
        lines.append(f"{r.name:<20} {r.commits:>8} {r.fixes:>6} {r.bugs:>5} {r.clean:>6}  {r.split}")
    for r in result.reports:
        for stage, counts in r.dropped.items():
            if counts:
                reasons = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
                lines.append(f"  {r.name} dropped at {stage}: {reasons}")
        if r.labels:
            lines.append(f"  {r.name} labels by tier: " + ", ".join(f"{k}={v}" for k, v in sorted(r.labels.items())))
        if r.sizes.get("bug", {}).get("count") and r.sizes.get("clean", {}).get("count"):
            b, c = r.sizes["bug"], r.sizes["clean"]
            lines.append(
                f"  {r.name} change size, median lines/files: bug {b['median_lines']}/{b['median_files']}, "
                f"clean {c['median_lines']}/{c['median_files']}"
            )
        if r.clean_quota is not None and not r.clean_quota.reached:
            lines.append(_short_of_clean(r.name, r.clean_quota))
        if r.reused_labels:
            lines.append(f"  {r.name}: {r.reused_labels} fixes' labels reused from the cache")
        if r.reused_clean:
            lines.append(f"  {r.name}: {r.reused_clean} clean checks reused from the cache")
    for r in result.reports:
        if r.shallow:
            lines.append(
                f"note: {r.name} is a shallow clone: blame stops at its oldest commits and drops what it "
                "finds there (initial_import); run `git fetch --unshallow` in it to mine the whole history"
            )
    lines += _judge_notes(result)
    if result.young_clean_left_out and config is not None:
        lines.append(
            f"note: {result.young_clean_left_out} clean candidates were observed for less than "
            f"{config.clean.wait_days} days and were left out; set clean.admit_young: true to keep them "
            "with clean_confidence low, or lower clean.wait_days"
        )
    lines.append(f"wrote {result.fixtures} fixtures to {result.out}")
    return "\n".join(lines)


def _short_of_clean(name: str, quota: CleanQuota) -> str:
    """Why a repository has fewer clean fixtures than ``clean.ratio`` wants: too few changes exist at all,
    or the rule that kept out the most of those that do (and what relaxes it)."""
    head = f"  {name} clean: {quota.found} of {quota.wanted} wanted (clean.ratio)"
    most = f"{quota.stopped_most} {quota.stopped_most_count}" if quota.stopped_most else "none"
    if quota.too_few_changes:
        return (
            f"{head}; too few changes exist: {quota.candidates} commits change source code as a clean fixture's "
            f"must (not a fix, no release, not too large), whatever a build relaxes (of them, kept out most: {most})"
        )
    how = RELAXED_BY.get(quota.stopped_most or "")
    relax = f"; relax it with {how}" if how else ""
    return f"{head}; of {quota.candidates} changes a clean fixture may be made of, kept out most: {most}{relax}"


def _judge_notes(result: BuildResult) -> list[str]:
    """Per repository, what the judge was asked and what it cost; then what was not screened, and why."""
    lines: list[str] = []
    for r in result.reports:
        j = r.judge
        if j is not None:
            lines.append(
                f"  {r.name} judge: asked {j.asked} (answered {j.answered}, failed {j.failed}), unasked {j.unasked}, "
                f"answered before {j.cached}; {j.retries} retries; tokens {j.input_tokens:,} in, {j.output_tokens:,} out"
            )
    failed = sum(r.judge.failed for r in result.reports if r.judge)
    unasked = sum(r.judge.unasked for r in result.reports if r.judge)
    if failed or unasked:
        said = [f"{failed} failed after their retries"] if failed else []
        said += [f"{unasked} went unasked ({result.judge_stopped}: the build stopped asking)"] if unasked else []
        if result.keep.unjudged:
            fate = "they were kept, marked screen: unjudged (--keep-unjudged)"
        else:
            fate = "they were left out, never passed as screened; the same command again asks them (answers so far are kept)"
        lines.append(f"note: the judge gave no answer for {failed + unasked} candidates: {'; '.join(said)}; {fate}")
    if result.keep.refused:
        lines.append(
            "note: candidates the judge refused were kept, marked screen: refused (--keep-refused): a set for "
            "measuring the judge (miner validity), not for scoring reviewers"
        )
    return lines


def plan_table(result: BuildResult) -> str:
    """What a judged build would ask (``--plan``): per repository, the packets and their size."""
    lines = [f"{'repository':<20} {'bug':>5} {'clean':>6} {'packets':>8} {'characters':>12} {'answered before':>16}"]
    for r in result.reports:
        j = r.judge or JudgeCounts()
        lines.append(f"{r.name:<20} {r.bugs:>5} {r.clean:>6} {j.asked:>8} {j.characters:>12,} {j.cached:>16}")
    lines.append(
        "plan: nothing was asked or written. Packets are what the judge would be asked, one call each (its "
        "instruction comes on top); clean candidates are counted as if the judge kept every one it is asked "
        "about: each it refuses asks about one more. A token is about 4 characters of English or code."
    )
    return "\n".join(lines)
