"""``miner build``: run the stages over each repository and write the fixture set.

walk fix commits -> blame back to the introducing commit -> pick clean commits -> strip
hints (inside fixture assembly) -> split -> write. Each stage counts what it dropped and
why; the counts land in the manifest and in the summary printed at the end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from miner import __version__
from miner.blame import label_fixes, tier_allowed
from miner.classify import has_generated_marker
from miner.clean import pick_clean, wanted
from miner.config import Config
from miner.errors import MinerError, MissingObjectError
from miner.fixture import make_fixture
from miner.git import Repo
from miner.records import CommitMeta, Defect, FileDiff, FixCommit, Label, iso
from miner.split import repository_split
from miner.walk import find_fixes
from miner.write import Staging, check_destination


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
    labels: Counter[str] = field(default_factory=Counter)
    bugs: int = 0
    clean: int = 0
    dropped: dict[str, Counter[str]] = field(default_factory=lambda: {s: Counter() for s in ("walk", "blame", "bug", "clean")})

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "identity": self.identity, "head": self.head, "head_date": self.head_date,
            "split": self.split, "shallow": self.shallow, "commits": self.commits, "fixes": self.fixes,
            "labels_by_tier": dict(sorted(self.labels.items())),
            "fixtures": {"bug": self.bugs, "clean": self.clean},
            "dropped": {stage: dict(sorted(c.items())) for stage, c in self.dropped.items()},
        }


@dataclass
class BuildResult:
    out: Path
    reports: list[RepoReport]
    fixtures: int


def repository_name(path: Path) -> str:
    name = path.resolve().name
    return name[:-4] if name.endswith(".git") and len(name) > 4 else name


def _with_diffs(repo: Repo, fixes: list[FixCommit]) -> Iterator[tuple[FixCommit, list[FileDiff]]]:
    by_sha = {f.meta.sha: f for f in fixes}
    for sha, diffs in repo.diffs(by_sha):
        yield by_sha[sha], diffs


def _bug_heads(labels: list[Label], metas: dict[str, CommitMeta], config: Config,
               dropped: Counter[str]) -> dict[str, tuple[Defect, ...]]:
    """Introducing commit -> its defects, from every label that clears the tier bar."""
    heads: dict[str, list[Defect]] = {}
    for lab in labels:
        if lab.intro is None or lab.tier is None:
            continue
        if not tier_allowed(lab.tier, config.labels.min_tier):
            dropped[f"below_min_tier_{lab.tier}"] += 1
            continue
        meta = metas[lab.intro]
        if meta.changed_lines > config.labels.max_intro_changed_lines:
            dropped["intro_too_large"] += 1
            continue
        heads.setdefault(lab.intro, []).extend(lab.defects)
    return {sha: tuple(sorted(d, key=lambda d: (d.path, d.line_start, d.fix))) for sha, d in heads.items()}


def build(paths: list[Path], out: Path, config: Config, *, rev: str = "HEAD", force: bool = False,
          progress: bool = True, log: Callable[[str], None] = lambda _: None) -> BuildResult:
    """Mine every repository and write one fixture set to ``out``."""
    check_destination(out, force)
    repos = [Repo(p) for p in paths]  # every bad path is reported before any work starts
    names = [repository_name(p) for p in paths]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise MinerError(f"two repositories are both named {duplicate!r}; give each a distinct directory name")
    heads = [r.resolve(rev) for r in repos]
    staging = Staging(out)
    try:
        entries: list[dict[str, str]] = []
        reports: list[RepoReport] = []
        for repo, name, head in zip(repos, names, heads):
            report, written = _mine(repo, name, head, config, staging, progress, log)
            reports.append(report)
            entries += written
        manifest = {
            "miner_version": __version__,
            "config_hash": config.digest(),
            "min_tier": config.labels.min_tier,
            "description_mode": config.strip.description,
            "seed": config.seed,
            "repositories": [r.to_json() for r in reports],
            "fixtures": sorted(entries, key=lambda e: e["id"]),
        }
        staging.finish(manifest)
    except BaseException:
        staging.abort()
        raise
    return BuildResult(out=out, reports=reports, fixtures=len(entries))


def _mine(repo: Repo, name: str, head: str, config: Config, staging: Staging, progress: bool,
          log: Callable[[str], None]) -> tuple[RepoReport, list[dict[str, str]]]:
    identity = repo.root_commits(head)[0]
    head_date = repo.committer_date(head)
    split = repository_split(name, identity, config.split)
    report = RepoReport(name=name, identity=identity, head=head, head_date=iso(head_date), split=split,
                        shallow=repo.shallow)
    log(f"{name}: walking history at {head[:12]}")
    metas: dict[str, CommitMeta] = {}
    fixes: list[FixCommit] = []

    def walked() -> Iterator[CommitMeta]:
        for meta in repo.commits(head):
            metas[meta.sha] = meta
            yield meta

    fixes = list(find_fixes(walked(), config, repo.expand, report.dropped["walk"]))
    report.commits, report.fixes = len(metas), len(fixes)
    pairs = _with_diffs(repo, fixes)
    labels = list(label_fixes(tqdm(pairs, total=len(fixes), desc=f"{name}: blame", disable=not progress,
                                   unit="fix", leave=False),
                              repo, metas.get, config, report.dropped["blame"]))
    for lab in labels:
        if lab.tier:
            report.labels[lab.tier] += 1
    bugs = _bug_heads(labels, metas, config, report.dropped["bug"])
    blamed = {sha for lab in labels for sha in lab.blamed}
    fix_shas = {f.meta.sha for f in fixes}
    picks = pick_clean(metas.values(), wanted(len(bugs), config), config, int(head_date.timestamp()),
                       blamed, fix_shas, repo.is_cosmetic, report.dropped["clean"],
                       lambda sha, path: _generated(repo, sha, path, config))
    jobs: list[tuple[str, str, tuple[Defect, ...] | None, int | None]] = \
        [("bug", sha, defects, None) for sha, defects in sorted(bugs.items())] + \
        [("clean", p.sha, None, p.observed_days) for p in picks]
    entries: list[dict[str, str]] = []
    for kind, sha, defects, observed in tqdm(jobs, desc=f"{name}: write", disable=not progress, unit="fixture",
                                             leave=False):
        meta = metas[sha]
        fixture = make_fixture(repo, repository=name, identity=identity, kind=kind, head=sha, split=split,
                               defects=defects, observed_days=observed, config=config, message=meta.message,
                               committed=meta.committed, authored=meta.authored)
        visible, answer = staging.add(fixture)
        entries.append({"id": fixture.visible.id, "kind": kind, "split": split, "repository": name,
                        "visible": visible, "answer": answer})
    report.bugs, report.clean = len(bugs), len(picks)
    return report, entries


def _generated(repo: Repo, sha: str, path: str, config: Config) -> bool:
    try:
        return has_generated_marker(repo.blob(sha, path) or b"", config.paths)
    except MissingObjectError:
        return False


def summary_table(result: BuildResult) -> str:
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
    lines.append(f"wrote {result.fixtures} fixtures to {result.out}")
    return "\n".join(lines)
