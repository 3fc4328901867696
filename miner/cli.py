"""The command line: parse, load config, call the library, print.

Errors that are the user's to fix (``MinerError``) become one line on stderr and exit 2.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click

from miner.commands.build import BuildOptions, JudgeCommand, Window, Workers, build, plan_table, repository_name, summary_table
from miner.commands.explain import explain
from miner.core.config import TIERS, load_config
from miner.core.errors import INTERRUPTED, MinerError
from miner.runner.engine import default_jobs
from miner.stages.judge import Keep

F = TypeVar("F", bound=Callable[..., Any])
if TYPE_CHECKING:
    from miner.commands.export import Format

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _tell(quiet: bool) -> None:
    """What the stages say (the ``miner`` logger) goes to stderr, one plain line each; with -q only
    warnings do."""
    logger = logging.getLogger("miner")
    if not any(getattr(h, "_miner", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._miner = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


_STOPPED: list[int] = []  # the signals received: after one, any failure is the interruption's


def _interrupt(signum: int, frame: object) -> None:
    _STOPPED.append(signum)
    raise KeyboardInterrupt  # a SIGTERM cleans up (staging, worker processes) as Ctrl-C does


def _unraisable(default: Callable[[Any], object]) -> Callable[[Any], None]:
    """A hook for what Python cannot raise: a signal whose handler ran inside a finalizer (a
    collected pool's, a closed queue's) raises there, and Python would print a traceback and let
    the command run on. The interruption is delivered once more, a moment later, to the main
    thread's own code (delivered now, it would land in this hook)."""

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _STOPPED:
            main = threading.main_thread().ident
            assert main is not None  # the main thread runs this process
            again = threading.Timer(0.01, signal.pthread_kill, (main, _STOPPED[-1]))
            again.daemon = True
            again.start()
            return
        default(unraisable)

    return hook


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        _STOPPED.clear()
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, _interrupt)
        default, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
        try:
            return self._run(ctx)
        finally:
            sys.unraisablehook = default

    def _run(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MinerError as exc:
            if not _STOPPED:
                click.echo(f"error: {exc}", err=True)
                ctx.exit(2)
            self._interrupted(ctx)
        except (KeyboardInterrupt, Exception):
            # Ctrl-C reaches the worker processes and git children too: what fails in their wake (a
            # broken pool, a file of a staging directory being cleared) is the interruption, not a bug.
            if not _STOPPED and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
                raise
            self._interrupted(ctx)

    @staticmethod
    def _interrupted(ctx: click.Context) -> None:
        click.echo(INTERRUPTED, err=True)
        ctx.exit(130)


def config_option(func: F) -> F:
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        help="YAML file overriding miner's defaults (see docs/configuration.md).",
    )(func)


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(package_name="miner")
def main() -> None:
    """Mine git history into bug and clean fixtures for evaluating AI code reviewers."""


def parse_date(value: str | None, flag: str) -> dt.datetime | None:
    """An ISO date or date-time from the command line, as UTC (a date alone is midnight UTC)."""
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MinerError(f"{flag} {value!r} is not a date; use ISO 8601 like 2026-06-01 or 2026-06-01T12:00:00Z") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    parsed = parsed.astimezone(dt.timezone.utc)
    if parsed > dt.datetime.now(dt.timezone.utc):
        raise MinerError(f"{flag} {value} is in the future; give a date that has passed")
    return parsed


def split_named(specs: tuple[str, ...]) -> tuple[list[Path], list[str]]:
    """REPO arguments as paths and names: ``PATH``, or ``NAME=PATH`` to choose the name."""
    pairs = [spec if isinstance(spec, tuple) else (repository_name(spec), spec) for spec in named_or_plain(specs)]
    return [path for _, path in pairs], [name for name, _ in pairs]


def named_or_plain(specs: tuple[str, ...]) -> list[Path | tuple[str, Path]]:
    """``--repo`` values: ``PATH``, or ``NAME=PATH`` naming the output's repository it is."""
    out: list[Path | tuple[str, Path]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        out.append((name, Path(path)) if sep and name and not Path(spec).exists() and "/" not in name else Path(spec))
    return out


@main.command("build", context_settings=CONTEXT)
@click.argument("repos", nargs=-1, required=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("fixtures_out"),
    show_default=True,
    help="Output directory; must be new or empty unless --force.",
)
@click.option("--rev", default="HEAD", show_default=True, help="Revision to mine in every repository.")
@click.option(
    "--force", is_flag=True, help="Replace an existing miner output at --out, reusing its cache and keeping its split ledger."
)
@click.option("--no-cache", is_flag=True, help="Mine everything again instead of reusing an earlier build's cache.")
@click.option("--since", help="Only changes that landed on or after this date (ISO 8601, UTC) become fixtures.")
@click.option("--until", help="Only changes that landed on or before this date become fixtures.")
@click.option(
    "--min-tier", type=click.Choice(TIERS), default=None, help="Weakest evidence tier kept (default from config: blame)."
)
@click.option(
    "--description",
    type=click.Choice(["original", "title", "none"]),
    default=None,
    help="What the reviewer sees of the commit message (default: original, sanitized).",
)
@click.option("--seed", type=int, default=None, help="Seed for the clean sample.")
@click.option(
    "--blame-only", is_flag=True, help="Ignore trailers and reverts; label by blame alone (to score blame against them)."
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: the machine's cores). Output is the same for every value.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where tasks run: local processes, or an existing Dask cluster (pip install 'miner[dask]').",
)
@click.option("--address", help="Dask scheduler address, e.g. tcp://scheduler:8786 (with --executor dask).")
@click.option(
    "--scheduler-file", type=click.Path(path_type=Path, dir_okay=False), help="Dask scheduler file (with --executor dask)."
)
@click.option(
    "--judge",
    "judge_cmd",
    metavar="CMD",
    help="Ask CMD about every candidate: a JSON packet on stdin, the rubric's answers as JSON on stdout.",
)
@click.option(
    "--judge-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds a --judge command run as a process may take before it counts as failed (miner judge has its own --timeout).",
)
@click.option(
    "--judge-jobs",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Judge calls at once (apart from -j: a model call waits on the network, not on this machine).",
)
@click.option(
    "--judge-budget",
    type=click.IntRange(min=1),
    metavar="TOKENS",
    help="Stop asking the judge once this many tokens (input and output) are spent; the rest go unasked.",
)
@click.option(
    "--keep-unjudged",
    is_flag=True,
    help="Keep candidates the judge gave no answer for, marked screen: unjudged (by default they are left out).",
)
@click.option(
    "--keep-refused",
    is_flag=True,
    help="Keep candidates the judge refused, marked screen: refused: a set to measure the judge with miner validity.",
)
@click.option(
    "--plan",
    is_flag=True,
    help="With --judge: mine, ask nothing, write nothing; print how many packets the judge would be asked, and their size.",
)
@click.option(
    "--allow-missing-objects",
    "allow_missing",
    is_flag=True,
    help="A partial clone whose remote cannot give what it lacks: mine without those objects "
    "(the paths they belong to are left out and counted) instead of stopping.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@config_option
def build_cmd(
    repos: tuple[str, ...],
    out: Path,
    rev: str,
    force: bool,
    no_cache: bool,
    since: str | None,
    until: str | None,
    min_tier: str | None,
    description: str | None,
    seed: int | None,
    blame_only: bool,
    jobs: int | None,
    executor: str,
    address: str | None,
    scheduler_file: Path | None,
    judge_cmd: str | None,
    judge_timeout: float,
    judge_jobs: int,
    judge_budget: int | None,
    keep_unjudged: bool,
    keep_refused: bool,
    plan: bool,
    allow_missing: bool,
    as_json: bool,
    quiet: bool,
    config_path: Path | None,
) -> None:
    """Mine REPOS (each PATH, or NAME=PATH to name it) into a fixture set at --out.

    Example:

        miner build path/to/repo --out fixtures_out

        miner build api=../services/api.git web=../web --out fixtures_out -j 8

        miner build path/to/repo --out fixtures_out --force --since 2026-06-01

        miner build path/to/repo --out fixtures_out --judge "miner judge --model gpt-4.1" --judge-budget 20000000

        miner build path/to/repo --judge "miner judge --url http://localhost:8000/v1 --model qwen2.5-coder" --plan
    """
    window = Window(since=parse_date(since, "--since"), until=parse_date(until, "--until"))
    judged = {"--judge-budget": judge_budget, "--keep-unjudged": keep_unjudged, "--keep-refused": keep_refused, "--plan": plan}
    lonely = next((flag for flag, value in judged.items() if value), None)
    if lonely and not judge_cmd:
        raise MinerError(f"{lonely} is for a judged build; add --judge CMD (or leave {lonely} out)")
    if window.since and window.until and window.since > window.until:
        raise MinerError(f"--since {since} is after --until {until}; swap them")
    if executor == "local" and (address or scheduler_file):
        raise MinerError("--address and --scheduler-file need --executor dask")
    config = load_config(config_path)
    overrides: dict[str, dict[str, Any]] = {}
    if min_tier or blame_only:
        overrides["labels"] = {**({"min_tier": min_tier} if min_tier else {}), **({"blame_only": True} if blame_only else {})}
    if description:
        overrides["strip"] = {"description": description}
    config = config.with_overrides(**overrides)
    if seed is not None:
        config = config.model_copy(update={"seed": seed})
    _tell(quiet)
    paths, names = split_named(repos)
    options = BuildOptions(
        rev=rev,
        names=names,
        window=window,
        workers=Workers(
            jobs=jobs or default_jobs(),
            executor=executor,  # type: ignore[arg-type]
            address=address,
            scheduler_file=str(scheduler_file) if scheduler_file else None,
        ),
        use_cache=not no_cache,
        judge=JudgeCommand(judge_cmd, judge_timeout, judge_jobs, judge_budget, Keep(keep_unjudged, keep_refused))
        if judge_cmd
        else None,
        allow_missing=allow_missing,
        plan=plan,
    )
    result = build(paths, out, config, options, force=force, progress=not quiet and sys.stderr.isatty())
    if as_json:
        report: dict[str, Any] = {"fixtures": result.fixtures, "repositories": [r.to_json() for r in result.reports]}
        report |= {"plan": True} if result.planned else {"out": str(result.out)}
        click.echo(json.dumps(report, indent=2, sort_keys=True))
    elif result.planned:
        click.echo(plan_table(result))
    else:
        click.echo(summary_table(result, config), err=True)


@main.group("split", context_settings=CONTEXT)
def split_group() -> None:
    """Manage the splits of a build output."""


@split_group.command("refresh", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option("--retire-before", help="Retire held-out fixtures whose change landed before this date (UTC).")
@click.option(
    "--retire",
    "retire_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="File of exposed fixture ids, one a line, to retire.",
)
@click.option("--reason", required=True, help="Why the held-out set is being refreshed (kept in the ledger).")
@click.option("--date", "when", help="Date recorded for this refresh (default: today, UTC).")
def refresh_cmd(out: Path, retire_before: str | None, retire_file: Path | None, reason: str, when: str | None) -> None:
    """Move exposed held-out fixtures, with their families, to dev, and record why.

    Example:

        miner split refresh fixtures_out --retire-before 2026-03-01 --reason "model-b cutoff"
    """
    from miner.commands.refresh import refresh_output

    if not retire_before and not retire_file:
        raise MinerError("say what to retire: --retire-before DATE or --retire FILE")
    before = parse_date(retire_before, "--retire-before")
    date = (parse_date(when, "--date") or dt.datetime.now(dt.timezone.utc)).date()
    moved = refresh_output(out, reason=reason, date=date, retire_before=before, retire_file=retire_file)
    click.echo(f"moved {len(moved)} fixtures from heldout to dev; the ledger records why", err=True)


@main.command("explain", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.argument("fixture_id")
def explain_cmd(out: Path, fixture_id: str) -> None:
    """Show how the label of FIXTURE_ID in the build output OUT was made.

    Example:

        miner explain fixtures_out fx-4y7vckxlnpitlj5v
    """
    click.echo(explain(out, fixture_id))


@main.command("calibrate", context_settings=CONTEXT)
@click.argument("repo", type=click.Path(path_type=Path, file_okay=False))
@click.option("--rev", default="HEAD", show_default=True, help="Revision whose history is measured.")
@click.option(
    "--min-fixes",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Fewest in-scope trailer fixes worth measuring.",
)
@click.option(
    "--baseline",
    type=click.Choice(["pydriller"]),
    help="Also label the same fixes with PyDriller's SZZ and print its figures beside miner's.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@config_option
def calibrate_cmd(
    repo: Path,
    rev: str,
    min_fixes: int,
    baseline: Literal["pydriller"] | None,
    as_json: bool,
    quiet: bool,
    config_path: Path | None,
) -> None:
    """Measure miner's labels on REPO's own ground truth: fixes whose trailers name the commit they repair.

    The labeller runs blind to the trailers; each tier's precision, recall, yield and F1 is printed.

    Example:

        miner calibrate path/to/iproute2 --json
        miner calibrate path/to/iproute2 --baseline pydriller
    """
    from miner.commands.calibrate import CalibrateOptions, calibrate, table
    from miner.git import Repo

    config = load_config(config_path)
    options = CalibrateOptions(rev=rev, min_fixes=min_fixes, baseline=baseline)
    result = calibrate(Repo(repo), repository_name(repo), config, options, progress=not quiet and sys.stderr.isatty())
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        click.echo(table(result))


@main.command("materialize", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.argument("fixture_id")
@click.option(
    "--to", "to", required=True, type=click.Path(path_type=Path), help="Where to create the repository; must be new or empty."
)
@click.option(
    "--repo",
    "repo",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The repository the fixture was mined from (read only).",
)
@click.option("--squash", is_flag=True, help="One new base commit instead of the base's whole history.")
def materialize_cmd(out: Path, fixture_id: str, to: Path, repo: Path, squash: bool) -> None:
    """Create a repository at --to for FIXTURE_ID of the build output OUT.

    The base is checked out on branch `base`; branch `pr` holds the change to review. Nothing
    later than the base is in it: no fix, tag, remote, reflog or unreachable object.

    Example:

        miner materialize fixtures_out fx-4y7vckxlnpitlj5v --to /tmp/review --repo path/to/repo
    """
    from miner.commands.materialize import materialize

    result = materialize(out, fixture_id, to, repo, squash=squash)
    click.echo(f"{result.path}: branch base ({result.commits - 1} commit(s)) checked out; branch pr holds the change")


@main.command("audit", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="[NAME=]PATH",
    help="A repository mined into OUT (repeatable); enables the SHA, contents and patch-id checks. "
    "NAME=PATH says which of the output's repositories it is, where one holds another's history.",
)
@click.option(
    "--materialized",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="A repository made by `miner materialize` to check (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object on stdout.")
@config_option
def audit_cmd(out: Path, repos: tuple[str, ...], materialized: tuple[Path, ...], as_json: bool, config_path: Path | None) -> None:
    """Check the build output OUT for leaks and false claims; exit 1 when any check fails.

    Example:

        miner audit fixtures_out --repo path/to/repo --materialized /tmp/review --json
    """
    from miner.commands.audit import audit, to_json

    report = audit(out, load_config(config_path), named_or_plain(repos), materialized)
    click.echo(to_json(report) if as_json else report.text())
    if not report.ok:
        sys.exit(1)


@main.command("review", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--cmd",
    "command",
    required=True,
    metavar="CMD",
    help="The reviewer: gets the visible JSON on stdin, prints findings as JSON on stdout.",
)
@click.option("--name", required=True, help="The reviewer's name; the run goes to OUT/runs/NAME.jsonl.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Fixtures reviewed at once.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds one review may take before it counts as an error.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Times each fixture is reviewed (the score averages them).",
)
@click.option("--split", type=click.Choice(["dev", "heldout"]), help="Review one split only.")
@click.option(
    "--checkout",
    "checkout_from",
    multiple=True,
    metavar="[NAME=]PATH",
    help="The mined repository (repeatable, one for each): each review also gets MINER_CHECKOUT, a repository at the change.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def review_cmd(
    out: Path,
    command: str,
    name: str,
    jobs: int,
    timeout: float,
    repeats: int,
    split: str | None,
    checkout_from: tuple[str, ...],
    quiet: bool,
) -> None:
    """Run a reviewer over the fixtures of OUT and keep its findings; a rerun resumes.

    A non-zero exit, output that does not parse, or a timeout is recorded as an error, never as a
    clean review. The reviewer never sees the answers.

    Example:

        miner review fixtures_out --cmd "python scripts/reviewers/every_line.py" --name every-line -j 4
    """
    from miner.commands.review import ReviewerCommand, review

    _tell(quiet)
    reviewer = ReviewerCommand(command, name, timeout, named_or_plain(checkout_from) if checkout_from else None)
    run = review(out, reviewer, jobs=jobs, repeats=repeats, split=split, progress=not quiet and sys.stderr.isatty())
    click.echo(f"{run.path}: {run.ran} reviewed now, {run.done} kept from before, {run.errors} errors", err=True)


@main.command("score", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--tolerance",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Lines a finding may be from a defect and still match it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object on stdout.")
def score_cmd(out: Path, runs: tuple[Path, ...], tolerance: int, as_json: bool) -> None:
    """Score reviewer runs (OUT/runs/NAME.jsonl files) against the answers of OUT, with intervals.

    Two or more runs are also compared, paired on the fixtures both reviewed.

    Example:

        miner score fixtures_out fixtures_out/runs/every-line.jsonl fixtures_out/runs/silent.jsonl
    """
    from miner.commands.review import read_runs
    from miner.commands.score import score, table
    from miner.core.output import open_output

    for path in runs:
        if not path.is_file():
            raise MinerError(f"{path} does not exist; give run files that `miner review` wrote")
    report = score(open_output(out), [(path, read_runs(path)) for path in runs], tolerance)
    click.echo(json.dumps(report, indent=2, sort_keys=True) if as_json else table(report))


@main.command("export", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["jsonl", "inspect", "hf", "promptfoo", "bundle"]),
    help="jsonl, inspect (Inspect samples), hf (a dataset-hub folder), promptfoo (tests and an assertion) "
    "or bundle (git bundles: each repository's history once, and a thin bundle per fixture).",
)
@click.option("--to", "to", required=True, type=click.Path(path_type=Path), help="A new or empty directory.")
@click.option("--split", type=click.Choice(["dev", "heldout", "all"]), default="all", show_default=True)
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d"]), help="Only changes committed on or after DATE.")
@click.option(
    "--with-answers/--without-answers",
    "with_answers",
    default=None,
    help="Put every answer in, or none; by default the answers of held-out fixtures are left out.",
)
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="[NAME=]PATH",
    help="A repository the fixtures were mined from (needed by --format bundle; repeatable, one for each).",
)
@click.option("--parquet", is_flag=True, help="With --format hf: Parquet files instead of JSON Lines (needs pyarrow).")
@click.option(
    "--squash",
    is_flag=True,
    help="With --format bundle: no history, each fixture's base as one commit (as `miner materialize --squash`).",
)
def export_cmd(
    out: Path,
    fmt: Format,
    to: Path,
    split: Literal["dev", "heldout", "all"],
    since: dt.datetime | None,
    with_answers: bool | None,
    repos: tuple[str, ...],
    parquet: bool,
    squash: bool,
) -> None:
    """Export the fixtures of OUT for another tool: an eval harness, a dataset hub, a git client.

    Example:

        miner export fixtures_out --format inspect --to exports/inspect --split dev
    """
    from miner.commands.export import Selection, export

    select = Selection(split=split, since=since.date() if since else None, with_answers=with_answers)
    done = export(out, fmt, to, select, repos=named_or_plain(repos), parquet=parquet, squash=squash)
    click.echo(f"exported {done.fixtures} fixtures ({done.answers} with answers) to {done.to}; canary {done.canary}", err=True)


@main.command("report", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The HTML page to write; summary.json and CSV tables go beside it.",
)
@click.option(
    "--scores",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The JSON of `miner score --json` (repeatable).",
)
@click.option(
    "--calibration",
    "calibrations",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The JSON of `miner calibrate --json` for a mined repository (repeatable).",
)
def report_cmd(out: Path, to: Path, scores: tuple[Path, ...], calibrations: tuple[Path, ...]) -> None:
    """Write one self-contained HTML page that shows the fixture set OUT (and its scores).

    Example:

        miner report fixtures_out --scores scores.json --to report/index.html
    """
    from miner.commands.report import report

    written = report(out, to, list(scores), list(calibrations))
    click.echo(f"wrote {written.page}, {written.summary.name} and {len(written.tables)} CSV tables", err=True)


def judge_options(func: F) -> F:
    """The options of ``miner judge``: where the model is and how it is asked."""
    options = [
        click.option("--model", envvar="MINER_JUDGE_MODEL", required=True, help="The model's name [env MINER_JUDGE_MODEL]."),
        click.option(
            "--url",
            envvar="MINER_JUDGE_URL",
            default="https://api.openai.com/v1",
            show_default=True,
            help="An OpenAI-compatible API: the URL that /chat/completions is under [env MINER_JUDGE_URL].",
        ),
        click.option(
            "--key-env",
            default="OPENAI_API_KEY",
            show_default=True,
            help="The environment variable that holds the API key (never the key itself).",
        ),
        click.option(
            "--timeout", type=click.FloatRange(min=0.1), default=120.0, show_default=True, help="Seconds to wait for one reply."
        ),
        click.option(
            "--retries",
            type=click.IntRange(min=0),
            default=8,
            show_default=True,
            help="Times one request is sent again after a rate limit (as Retry-After says), a server error, a timeout "
            "or a dropped connection, with backoff.",
        ),
        click.option(
            "--reasks",
            type=click.IntRange(min=0),
            default=2,
            show_default=True,
            help="Times a reply that is not the rubric's answer is asked again.",
        ),
        click.option(
            "--max-chars", type=click.IntRange(min=1000), default=60_000, show_default=True, help="Each diff is cut to this."
        ),
        click.option(
            "--prompt",
            type=click.Path(path_type=Path, dir_okay=False),
            help="The judge's instruction, instead of the rubric miner ships (miner/commands/judge_prompt.md).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _chat_model(params: dict[str, Any]) -> Any:
    from miner.commands.chat_judge import ChatModel

    return ChatModel(
        model=params["model"],
        url=params["url"],
        key_env=params["key_env"],
        timeout=params["timeout"],
        max_chars=params["max_chars"],
        prompt=params["prompt"],
        retries=params["retries"],
        reasks=params["reasks"],
    )


@main.command("judge", context_settings=CONTEXT)
@judge_options
def judge_cmd(**params: Any) -> None:
    """Answer one judge packet (JSON on stdin) by asking a chat model: the judge for miner build --judge.

    Prints the rubric's answers as one JSON object, with what they cost (usage, retries). On failure
    it prints the error and the cost as JSON, one line on stderr, and exits 2: miner build then leaves
    the candidate out (judge_unanswered) and asks again on the next build. Needs the openai package
    (pip install 'miner[judge]'). miner build asks a `miner judge` command in its own process.

    Example:

        miner build repo --judge "miner judge --model gpt-4.1"
        miner build repo --judge "miner judge --url http://localhost:8000/v1 --model qwen2.5-coder"
    """
    from miner.commands.chat_judge import chat_runner

    try:
        packet = json.loads(sys.stdin.read())
    except ValueError as exc:
        raise MinerError(f"the packet on stdin is not JSON ({exc}); miner judge is run by miner build --judge") from exc
    if not isinstance(packet, dict):
        raise MinerError("the packet on stdin is not a JSON object; miner judge is run by miner build --judge")
    reply = chat_runner(_chat_model(params))(packet)
    cost = {"usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}, "retries": reply.retries}
    if reply.answers is None:
        click.echo(json.dumps({"error": reply.error, **cost}, sort_keys=True))
        raise MinerError(str(reply.error))
    click.echo(json.dumps({**reply.answers, **cost}, sort_keys=True))


def judge_model(args: list[str]) -> Any:
    """The ``ChatModel`` a ``miner judge`` command line (its arguments after ``judge``) asks."""
    try:
        with judge_cmd.make_context("miner judge", list(args), resilient_parsing=False) as ctx:
            return _chat_model(ctx.params)
    except click.exceptions.Exit:
        raise MinerError("--judge 'miner judge ...' asks for help or a version; give it --model and its options") from None
    except click.ClickException as exc:
        raise MinerError(f"--judge 'miner judge ...': {exc.format_message()}; see miner judge -h") from None


@main.group("validity", context_settings=CONTEXT)
def validity_group() -> None:
    """Measure how true a fixture set is, and how good its judge is: a sample read with the rubric.

    Example:

        miner validity sample fixtures_out --n 60 --seed team-a --to reading --repo path/to/repo

        miner validity score fixtures_out reading/verdicts.jsonl
    """


@validity_group.command("sample", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option("--n", "count", type=click.IntRange(min=1), default=60, show_default=True, help="Fixtures to draw.")
@click.option("--seed", default="validity", show_default=True, help="Seed of the draw (any text).")
@click.option("--to", "to", required=True, type=click.Path(path_type=Path), help="A new or empty directory for the pages.")
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="[NAME=]PATH",
    help="A repository the fixtures were mined from (repeatable, one for each): the pages show fixes and later history.",
)
@click.option(
    "--kind", type=click.Choice(["both", "bug", "clean"]), default="both", show_default=True, help="Which fixtures to draw."
)
@config_option
def validity_sample_cmd(
    out: Path, count: int, seed: str, to: Path, repos: tuple[str, ...], kind: str, config_path: Path | None
) -> None:
    """Draw fixtures of OUT at random (stratified by kind and repository) and write a reading page for each,
    and verdicts.jsonl for the readers to fill with the rubric's answers.

    Example:

        miner validity sample fixtures_out --n 60 --seed team-a --to reading --repo path/to/repo
    """
    from miner.commands.validity import sample
    from miner.core.output import open_output

    kinds: tuple[Literal["bug", "clean"], ...] = ("bug", "clean") if kind == "both" else ("bug",) if kind == "bug" else ("clean",)
    done = sample(open_output(out), to, count, seed, load_config(config_path), named_or_plain(repos), kinds)
    said = ", ".join(f"{n} {k}" for k, n in sorted(done.by_kind.items()))
    click.echo(f"drew {done.fixtures} fixtures ({said}): pages in {to / 'pages'}, fill {to / 'verdicts.jsonl'}", err=True)


@validity_group.command("score", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.argument("verdicts", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object on stdout.")
def validity_score_cmd(out: Path, verdicts: Path, as_json: bool) -> None:
    """Score the filled VERDICTS of fixtures of OUT: validity with a Wilson 95% interval per kind, by
    repository and tier, and the judge's agreement with the readers when OUT was judged.

    Example:

        miner validity score fixtures_out reading/verdicts.jsonl --json
    """
    from miner.commands.validity import score, table
    from miner.core.output import open_output

    report = score(open_output(out), verdicts)
    click.echo(json.dumps(report, indent=2, sort_keys=True) if as_json else table(report))


@main.command("schema", context_settings=CONTEXT)
@click.argument("what", type=click.Choice(["findings"]))
def schema_cmd(what: str) -> None:
    """Print the JSON Schema of a format miner reads (findings: one line of a run file).

    Example:

        miner schema findings > findings.schema.json
    """
    from miner.core.findings import schema

    click.echo(json.dumps(schema(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
