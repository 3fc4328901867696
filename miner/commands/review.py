"""``miner review``: run a reviewer over a fixture set and keep what it said.

The reviewer is any command. For each fixture (and repeat) it gets the visible JSON on stdin, its path
in ``MINER_VISIBLE``, the fixture id in ``MINER_FIXTURE_ID`` and, with ``--checkout``, a repository
materialized at the change in ``MINER_CHECKOUT``; it never sees the answers. It prints findings (see
miner.core.findings). A non-zero exit, output that does not parse, or a timeout is ``status: error`` with
the reason: an error is never a clean review. Records go to ``OUT/runs/NAME.jsonl``; a rerun keeps
the finished ones and asks again where the last run failed or stopped.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from miner.commands.sources import RepoSpec, mined_repositories
from miner.core.errors import MinerError
from miner.core.findings import ReviewFinding, RunRecord, Usage, parse_output
from miner.core.output import Entry, FixtureSet, open_output
from miner.stages.write import write_atomic

_LOG = logging.getLogger(__name__)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class ReviewerCommand:
    """The reviewer under test: the command run on every fixture, the name its runs are kept under,
    how long one review may take, and the repositories a checkout at the fixture's base is
    materialized from: one path, or one for each repository of the fixtures reviewed (a path, or
    ``(name, path)`` where one holds another's history; matched as ``miner audit`` matches them), or
    None: no checkout."""

    command: str
    name: str
    timeout: float = 300.0
    checkout_from: Path | Sequence[RepoSpec] | None = None


@dataclass(frozen=True)
class ReviewRun:
    path: Path  # the run file
    done: int  # records kept from an earlier run
    ran: int  # fixture-repeats asked now
    errors: int  # of all records, how many are errors


def run_path(out: Path, name: str) -> Path:
    if not _NAME.match(name):
        raise MinerError(f"--name {name!r} is not a plain name; use letters, digits, '.', '_' and '-'")
    return out / "runs" / f"{name}.jsonl"


def read_runs(path: Path, tolerant: bool = False) -> list[RunRecord]:
    """The records of a run file (one JSON line each); a damaged line is one line of error, or, when
    ``tolerant`` (the partial file of a run that was killed mid-line), left out."""
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if line.strip():
            try:
                records.append(RunRecord.model_validate_json(line))
            except ValueError as exc:
                if tolerant:
                    continue
                raise MinerError(
                    f"{path}:{n} is not a run record ({str(exc).splitlines()[0]}); check the file or run the reviewer again"
                ) from None
    return records


def review(
    out: Path, reviewer: ReviewerCommand, *, jobs: int = 1, repeats: int = 1, split: str | None = None, progress: bool = False
) -> ReviewRun:
    """Run the reviewer over the fixtures of ``out`` (of one split, if given), ``repeats`` times each."""
    name = reviewer.name
    fixtures = open_output(out)
    path = run_path(out, name)
    digest = fixtures.digest()
    kept: dict[tuple[str, int], RunRecord] = {}
    partial = path.with_suffix(".jsonl.partial")  # what an interrupted run had finished
    for earlier in (path, partial):
        for record in read_runs(earlier, tolerant=earlier == partial) if earlier.is_file() else []:
            if record.fixture_set not in (None, digest):
                raise MinerError(f"{path} was made on another fixture set; give another --name or remove the file")
            if record.status == "ok" and record.fixture_id in fixtures:
                kept[(record.fixture_id, record.repeat)] = record
    entries = [e for e in fixtures.manifest.fixtures if split is None or e.split == split]
    checkouts = _checkouts(fixtures, entries, reviewer.checkout_from)
    todo = [(e, r) for e in entries for r in range(repeats) if (e.id, r) not in kept]
    _LOG.info("%s: %d fixture-repeats already reviewed, %d to go", name, len(kept), len(todo))
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    results = dict(kept)
    with (
        open(partial, "a", encoding="utf-8") as handle,
        ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
        tqdm(total=len(todo), desc=f"review {name}", unit="fixture", disable=not progress) as bar,
    ):
        asks = [
            pool.submit(_ask, fixtures, entry, repeat, reviewer, digest, checkouts.get(entry.repository))
            for entry, repeat in todo
        ]
        for ask in as_completed(asks):
            record = ask.result()
            with lock:
                results[(record.fixture_id, record.repeat)] = record
                handle.write(record.model_dump_json() + "\n")  # kept as it comes: Ctrl-C loses nothing done
                handle.flush()
            bar.update()
    ordered = [results[key] for key in sorted(results)]
    write_atomic(path, "".join(r.model_dump_json() + "\n" for r in ordered))
    partial.unlink(missing_ok=True)
    return ReviewRun(path=path, done=len(kept), ran=len(todo), errors=sum(r.status == "error" for r in ordered))


def _checkouts(fixtures: FixtureSet, entries: list[Entry], given: Path | Sequence[RepoSpec] | None) -> dict[str, Path]:
    """Repository name -> the path a checkout of its fixtures is materialized from; every repository
    of the fixtures to review needs one, or no review starts (each would fail the same way)."""
    if given is None:
        return {}
    specs: list[RepoSpec] = [given] if isinstance(given, Path) else list(given)
    sources = mined_repositories(fixtures.manifest, specs)
    lacking = sorted({e.repository for e in entries} - set(sources))
    if lacking:
        raise MinerError(
            f"--checkout is given for {', '.join(map(repr, sorted(sources)))} but not for "
            f"{', '.join(map(repr, lacking))}; give one --checkout [NAME=]PATH for each repository reviewed"
        )
    return {name: repo.path for name, repo in sources.items()}


def _ask(
    fixtures: FixtureSet, entry: Entry, repeat: int, reviewer: ReviewerCommand, digest: str, checkout_from: Path | None
) -> RunRecord:
    command, name, timeout = reviewer.command, reviewer.name, reviewer.timeout
    visible = fixtures.path / entry.visible
    env = {**os.environ, "MINER_VISIBLE": str(visible.resolve()), "MINER_FIXTURE_ID": entry.id, "MINER_REPEAT": str(repeat)}
    scratch = Path(tempfile.mkdtemp(prefix="miner-review-"))
    start = time.monotonic()

    def record(error: str | None, found: tuple[ReviewFinding, ...] = (), usage: Usage | None = None) -> RunRecord:
        return RunRecord(
            fixture_id=entry.id,
            reviewer=name,
            repeat=repeat,
            status="error" if error else "ok",
            error=error,
            seconds=round(time.monotonic() - start, 3),
            usage=usage,
            findings=found,
            fixture_set=digest,
        )

    try:
        if checkout_from is not None:
            from miner.commands.materialize import materialize

            env["MINER_CHECKOUT"] = str(materialize(fixtures.path, entry.id, scratch / "checkout", checkout_from).path)
        env["MINER_SCRATCH"] = str(scratch)  # a directory of its own, removed after the review
        proc = subprocess.run(command, shell=True, input=visible.read_bytes(), capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return record(f"timed out after {timeout:g} s")
    except MinerError as exc:
        return record(f"checkout failed: {exc}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return record(f"exit {proc.returncode}" + (f": {tail[-1][:300]}" if tail else ""))
    try:
        found, usage = parse_output(proc.stdout.decode("utf-8", "replace"))
    except MinerError as exc:
        return record(f"unparsable output: {exc}")
    return record(None, found, usage)
