"""Faults a real repository brings: a partial clone, objects it lacks, a remote that cannot be reached.

Partial clones are made from a sample repository served from a local path with
``uploadpack.allowFilter``, so that git behaves as with a hosted remote.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from miner.cli import main
from miner.commands.build import BuildOptions, build
from miner.core.config import load_config
from miner.core.errors import INTERRUPTED, PromisorUnreachableError

CONFIG = load_config().with_overrides(clean={"ratio": 100.0, "min_count": 100})


def fixture_bytes(out: Path) -> dict[str, bytes]:
    """Every file a build writes but its cache: what a consumer of the fixtures reads."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "cache" not in p.relative_to(out).parts
    }


def tree_state(path: Path) -> dict[str, str]:
    """Each file under ``path`` and its content's hash: to see that nothing was written there."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture
def served(samples: dict, tmp_path: Path) -> Path:
    """A copy of the pyledger sample that lets clones filter out blobs."""
    server = tmp_path / "server"
    shutil.copytree(samples["pyledger"].path, server)
    subprocess.run(["git", "-C", str(server), "config", "uploadpack.allowFilter", "true"], check=True)
    subprocess.run(["git", "-C", str(server), "config", "uploadpack.allowAnySHA1InWant", "true"], check=True)
    return server


def partial_clone(server: Path, where: Path) -> Path:
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{server}", str(where)],
        check=True,
        capture_output=True,
    )
    lacking = subprocess.run(
        ["git", "-C", str(where), "rev-list", "--objects", "--missing=print", "HEAD"], capture_output=True, text=True, check=True
    ).stdout
    assert any(line.startswith("?") for line in lacking.splitlines())  # the clone really lacks blobs
    return where


def test_a_partial_clone_mines_as_the_full_clone_and_is_never_written(
    served: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    part = partial_clone(served, tmp_path / "part")
    before = tree_state(part / ".git")
    with caplog.at_level(logging.INFO, logger="miner"):
        build([part], tmp_path / "from-part", CONFIG, BuildOptions(names=["pyledger"]), progress=False)
    build([served], tmp_path / "from-full", CONFIG, BuildOptions(names=["pyledger"]), progress=False)
    assert fixture_bytes(tmp_path / "from-part") == fixture_bytes(tmp_path / "from-full")
    assert "partial clone lacking" in caplog.text
    assert tree_state(part / ".git") == before
    # A rebuild fetches again into its own directory, and writes the same bytes.
    build([part], tmp_path / "from-part", CONFIG, BuildOptions(names=["pyledger"]), progress=False, force=True)
    assert fixture_bytes(tmp_path / "from-part") == fixture_bytes(tmp_path / "from-full")
    assert tree_state(part / ".git") == before


def test_a_partial_clone_whose_remote_is_gone_stops_with_the_fix_or_mines_without(
    served: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    part = partial_clone(served, tmp_path / "part")
    shutil.rmtree(served)
    before = tree_state(part / ".git")
    with pytest.raises(PromisorUnreachableError) as raised:
        build([part], tmp_path / "out", CONFIG, progress=False)
    assert "git -C" in str(raised.value) and "fetch --refetch" in str(raised.value)
    assert "--allow-missing-objects" in str(raised.value) and "\n" not in str(raised.value)
    assert not (tmp_path / "out" / "manifest.json").exists()
    ran = CliRunner().invoke(main, ["build", str(part), "--out", str(tmp_path / "cli"), "-q"])
    assert ran.exit_code == 2 and "fetch --refetch" in ran.output and "Traceback" not in ran.output
    # With the flag it mines what it can, and says how much it left out.
    with caplog.at_level(logging.INFO, logger="miner"):
        result = build([part], tmp_path / "out", CONFIG, BuildOptions(allow_missing=True), progress=False)
    assert "could not be fetched" in caplog.text
    assert result.reports[0].dropped["walk"]["paths_with_missing_objects"] > 0
    assert tree_state(part / ".git") == before


# -- interruptions: kill -9, Ctrl-C, SIGTERM, a killed git, a killed worker ----------------------------


def test_every_interruption_resumes_to_the_bytes_of_an_uninterrupted_build(samples: dict, tmp_path: Path) -> None:
    """Seeded points over the length of a sample build; scripts/fault_injection.py runs many more."""
    import time

    from faultkit import HOWS, command, interrupt, output_bytes, points, trouble

    repo, extra = samples["shelf"].path, ("-j", "2")
    started = time.monotonic()
    subprocess.run(command(repo, tmp_path / "reference" / "out", *extra), check=True, capture_output=True)
    length = time.monotonic() - started
    reference = output_bytes(tmp_path / "reference" / "out")
    tried = points(seed=13, count=2 * len(HOWS), length=length)
    problems = []
    for n, (how, delay) in enumerate(tried):
        trial = interrupt(repo, tmp_path / str(n) / "out", how, delay, reference, extra)
        problem = trouble(trial)
        if problem:
            problems.append(f"{how} at {delay}s: {problem}")
    assert not problems, "\n".join(problems)


A_SIGNAL_IN_A_FINALIZER = """
import os, signal, sys, time, weakref
import click
from miner.cli import _Group

@click.group(cls=_Group)
def cli():
    pass

@cli.command()
def work():
    class Pool:
        pass

    pool = Pool()
    # As a collected pool's or queue's finalizer does: the signal's handler runs inside it.
    weakref.finalize(pool, lambda: (os.kill(os.getpid(), signal.SIG{how}), time.sleep(0.5)))
    del pool
    time.sleep(5)
    click.echo("finished")

cli(["work"])
"""


@pytest.mark.parametrize("how", ["TERM", "INT"])
def test_a_signal_that_lands_in_a_finalizer_still_stops_the_command_in_one_line(how: str, tmp_path: Path) -> None:
    """Python swallows what a finalizer raises and prints a traceback; the interruption must not be lost."""
    script = tmp_path / "finalizer.py"
    script.write_text(A_SIGNAL_IN_A_FINALIZER.format(how=how))
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout, ran.stderr) == (130, "", INTERRUPTED + "\n")


def test_a_deleted_blob_builds_the_same_cold_rebuilt_and_resumed(samples: dict, tmp_path: Path) -> None:
    from faultkit import command, interrupt, output_bytes

    repo = tmp_path / "damaged"
    shutil.copytree(samples["pyledger"].path, repo)
    subprocess.run(["git", "-C", str(repo), "repack", "-q", "-a", "-d", "--no-write-bitmap-index"], check=True)
    subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], check=False)
    # Loosen every object, then delete one blob of an old version of a source file.
    packs = list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        moved = tmp_path / pack.name
        pack.rename(moved)
        for side in pack.with_suffix(".idx"), pack.with_suffix(".rev"):
            side.unlink(missing_ok=True)
        subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], stdin=moved.open("rb"), check=True)
    first = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.split()[0]
    files = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", first], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    blob = next(line.split()[2] for line in files if line.endswith(".py") and "/test" not in line)
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    cold = tmp_path / "cold" / "out"
    subprocess.run(command(repo, cold), check=True, capture_output=True)
    reference = output_bytes(cold)
    assert b'"paths_with_missing_objects": 1' in reference["manifest.json"]
    # A rebuild over the finished output (its cache reused).
    rebuilt = subprocess.run(command(repo, cold, "--force"), capture_output=True, text=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert output_bytes(cold) == reference
    # A build killed half way, then resumed.
    trial = interrupt(repo, tmp_path / "resumed" / "out", "kill", 0.8, reference)
    assert trial.same, trial.rerun_stderr
