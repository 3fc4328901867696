"""Interrupt a build at a chosen moment, run it again, and see what it wrote.

Used by tests/test_faults.py (a few seeded points) and scripts/fault_injection.py (as many as asked).
Each interruption is one of:

- ``kill``: SIGKILL to the build's whole process group (kill -9: nothing runs after it);
- ``int``: SIGINT to the whole process group, as a terminal sends Ctrl-C;
- ``term``: SIGTERM to the build process alone;
- ``git``: SIGKILL to one git process the build started;
- ``worker``: SIGKILL to one worker process of the build's pool.

After it, the same command runs again (with ``--force`` when the first finished before the
signal landed) and must write the bytes an uninterrupted build writes.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HOWS = ("kill", "int", "term", "git", "worker")


def command(repo: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "miner", "build", str(repo), "--out", str(out), "-q", *extra]


def output_bytes(out: Path) -> dict[str, bytes]:
    """Every file of a finished output, its cache included."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        found.setdefault(ppid, []).append(int(entry.name))
    return found


def _descendants(pid: int) -> list[tuple[int, str]]:
    """The processes under ``pid``, each with its command line."""
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            try:
                line = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            out.append((child, line))
            todo.append(child)
    return out


@dataclass
class Trial:
    how: str
    delay: float
    first_code: int
    first_stderr: str
    hit: bool  # whether the signal found its target before the build ended
    rerun_code: int
    rerun_stderr: str
    same: bool  # the rerun wrote the bytes of the uninterrupted build
    differ: tuple[str, ...] = ()  # the files that differ from the reference (a few)


def interrupt(repo: Path, out: Path, how: str, delay: float, reference: dict[str, bytes], extra: tuple[str, ...] = ()) -> Trial:
    """Start a build, interrupt it ``delay`` seconds in, run it again, compare with ``reference``."""
    proc = subprocess.Popen(command(repo, out, *extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay)
    hit = proc.poll() is None
    if hit:
        if how == "kill":
            os.killpg(proc.pid, signal.SIGKILL)
        elif how == "int":
            os.killpg(proc.pid, signal.SIGINT)
        elif how == "term":
            os.kill(proc.pid, signal.SIGTERM)
        else:
            hit = _kill_one(proc, _GIT if how == "git" else _WORKER)
    _, err = proc.communicate(timeout=300)
    rerun = subprocess.run(
        command(repo, out, *extra, *(["--force"] if (out / "manifest.json").exists() else [])), capture_output=True, timeout=300
    )
    got = output_bytes(out) if rerun.returncode == 0 else {}
    differ = tuple(sorted(name for name in set(got) | set(reference) if got.get(name) != reference.get(name)))[:5]
    return Trial(
        how,
        delay,
        proc.returncode,
        err.decode("utf-8", "replace"),
        hit,
        rerun.returncode,
        rerun.stderr.decode("utf-8", "replace"),
        rerun.returncode == 0 and not differ,
        differ,
    )


_GIT = re.compile(r"^\S*git ")
_WORKER = re.compile(r"spawn_main")  # a process pool's worker (not multiprocessing's resource tracker)


def _kill_one(proc: subprocess.Popen[bytes], which: re.Pattern[str]) -> bool:
    """SIGKILL the first process under the build whose command line matches, waiting for one."""
    while proc.poll() is None:
        for pid, line in _descendants(proc.pid):
            if which.search(line):
                try:
                    os.kill(pid, signal.SIGKILL)
                    return True
                except ProcessLookupError:
                    continue
        time.sleep(0.005)
    return False


def points(seed: int, count: int, length: float) -> list[tuple[str, float]]:
    """``count`` (interruption, delay) pairs, seeded, spread over a build of ``length`` seconds."""
    rng = random.Random(seed)
    return [(HOWS[i % len(HOWS)], round(rng.uniform(0.1, length), 3)) for i in range(count)]


def trouble(trial: Trial) -> str | None:
    """What went wrong in a trial, or None: the rerun must write the same bytes, and no run may
    print a traceback."""
    if "Traceback" in trial.first_stderr or "Traceback" in trial.rerun_stderr:
        return "a traceback was printed:\n" + trial.first_stderr + trial.rerun_stderr
    if trial.how in ("int", "term") and trial.hit and trial.first_code not in (0, 130):
        return f"exit {trial.first_code} after SIG{trial.how.upper()}: {trial.first_stderr}"
    if trial.hit and trial.first_code not in (0, 130, -9) and len(trial.first_stderr.strip().splitlines()) > 1:
        return "more than one line on stderr: " + trial.first_stderr
    if not trial.same:
        return f"the rerun (exit {trial.rerun_code}) wrote other bytes in {', '.join(trial.differ)}: {trial.rerun_stderr}"
    return None
