"""Stage 7: write the fixture set, atomically, and its manifest.

Everything is written into a staging directory beside the destination and moved into place
only when complete, with ``manifest.json`` last: an interrupted build leaves no directory
that looks finished, and an existing output is replaced only with ``--force`` and only if
it is miner's own output (or empty), so no one's files are lost. The manifest (with its counts
of fresh fixtures) is assembled here for a build and for ``miner split refresh`` alike; a
rebuild with unchanged settings writes an earlier build's visible parts again as they were.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from miner.core.errors import OutputDirError, OutputLockedError
from miner.core.output import MANIFEST, Manifest, dumps
from miner.core.records import Answer, Visible


def write_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Write ``text`` so that ``path`` is either the old file or the whole new one.

    Files inside a staging directory skip the fsync (``durable=False``): the directory as a
    whole becomes the output only after the manifest, which is synced, is in place.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


def check_destination(out: Path, force: bool) -> None:
    """Refuse, before any work, an output that would lose data or cannot be written."""
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"--out {out} is a file; give a directory path")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise OutputDirError(f"--out {out} is not empty; pass --force to replace it, or choose a new directory")
        if not (out / MANIFEST).is_file():
            raise OutputDirError(f"--out {out} holds files that are not a miner output; choose another directory")
    parent = out.resolve().parent
    existing = parent
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise OutputDirError(f"cannot write to {existing}; choose an --out where you have write permission")


def check_outside(out: Path, flag: str, repos: Iterable[tuple[Path, Path]], suggest: str = "fixtures") -> None:
    """Refuse an output inside a repository miner reads: it never writes into one, not even its
    work tree. ``repos`` holds each repository's top (work tree, or bare git directory) and its
    git directory."""
    where = out.resolve()
    for top, git_dir in repos:
        top = top.resolve()
        if any(where == d or d in where.parents for d in (top, git_dir.resolve())):
            raise OutputDirError(
                f"{flag} {out} is inside the repository at {top}, which miner reads and never "
                f"writes into; give a {flag} outside it, e.g. {top.parent / f'{top.name}-{suggest}'}"
            )


def _lock(path: Path, out: Path) -> int:
    """Hold an exclusive lock for building ``out`` (the kernel drops it when the process ends, however
    it ends): two builds into one output would take each other's staging directory. The lock file is
    removed when the build ends; a lock taken on a file removed meanwhile is taken again."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise OutputLockedError(
                f"another miner build is writing {out}; wait for it to finish, or give another --out"
            ) from exc
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


class Staging:
    """A directory that becomes the output only when ``finish`` is called.

    Its name is fixed for a given output, so the next build finds the staging directory of
    an interrupted one: it is kept as ``resumed`` and its cache is read, then removed.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        out.parent.mkdir(parents=True, exist_ok=True)
        self._lock_path = out.parent / f".miner-lock-{out.name}"
        self._lock = _lock(self._lock_path, out)
        self.dir = out.parent / f".miner-staging-{out.name}"
        resume = out.parent / f".miner-resume-{out.name}"
        self.resumed: Path | None = None
        if self.dir.exists():
            if resume.exists():
                shutil.rmtree(resume)
            os.replace(self.dir, resume)
        if resume.exists():
            self.resumed = resume
        (self.dir / "visible").mkdir(parents=True)
        (self.dir / "answers").mkdir()

    def add(self, answer: Answer, visible: Visible | str) -> tuple[str, str]:
        """Write one fixture (its visible part as a record, or as the text an earlier build wrote);
        return the relative paths of its visible and answer files."""
        fid = answer.id
        visible_file, answer_file = f"visible/{fid}.json", f"answers/{fid}.json"
        text = visible if isinstance(visible, str) else dumps(visible.model_dump(mode="json"))
        write_atomic(self.dir / visible_file, text, durable=False)
        write_atomic(self.dir / answer_file, dumps(answer.model_dump(mode="json")), durable=False)
        return visible_file, answer_file

    def write(self, name: str, text: str) -> None:
        write_atomic(self.dir / name, text)

    def finish(self, manifest: str) -> None:
        """Write the manifest (its text, as ``Manifest.json_text`` gives it) and put the output in place."""
        write_atomic(self.dir / MANIFEST, manifest)
        old: Path | None = None
        if (self.out / "runs").is_dir() and not (self.dir / "runs").exists():
            # Reviewer runs live beside the fixtures (miner review); a rebuild keeps them (a run made
            # on fixtures that changed is refused by miner score, never silently rescored).
            shutil.copytree(self.out / "runs", self.dir / "runs")
        if self.out.exists():
            old = self.out.parent / f".miner-old-{self.out.name}"
            if old.exists():
                shutil.rmtree(old)
            os.replace(self.out, old)
        os.replace(self.dir, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if self.resumed is not None:
            shutil.rmtree(self.resumed, ignore_errors=True)
        self.release()

    def release(self) -> None:
        if self._lock >= 0:
            self._lock_path.unlink(missing_ok=True)
            os.close(self._lock)
            self._lock = -1

    def abort(self) -> None:
        """Keep only the cache (what was mined so far, for the next run to resume from)."""
        for child in list(self.dir.iterdir()) if self.dir.exists() else []:
            if child.name != "cache":
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        if self.dir.exists() and not any(self.dir.iterdir()):
            self.dir.rmdir()
        self.release()


def fresh_counts(names: Iterable[str], fixtures: Iterable[tuple[str, dict[str, bool]]]) -> dict[str, dict[str, int]]:
    """Per cutoff name, how many fixtures of each split are fresh: from (split, the answer's fresh
    claims) pairs. What the manifest's ``fresh`` holds; build and refresh both count with it."""
    counts: dict[str, dict[str, int]] = {name: {} for name in sorted(names)}
    for split, fresh in fixtures:
        for name, is_fresh in fresh.items():
            if name in counts:
                counts[name][split] = counts[name].get(split, 0) + int(is_fresh)
    return {name: dict(sorted(c.items())) for name, c in counts.items()}


@dataclass(frozen=True)
class Written:
    """A fixture as the manifest lists it (``entry``), and its answer's freshness claims, which the
    manifest counts."""

    entry: dict[str, Any]
    fresh: dict[str, bool]


def write_fixture(staging: Staging, answer: Answer, visible: Visible | str, family: str) -> Written:
    """Write one fixture into ``staging``; what the manifest says of it."""
    visible_file, answer_file = staging.add(answer, visible)
    entry = {
        "id": answer.id,
        "kind": answer.kind,
        "split": answer.split,
        "repository": answer.repository,
        "family": family,
        "visible": visible_file,
        "answer": answer_file,
    }
    return Written(entry, answer.fresh)


def assemble_manifest(fields: Mapping[str, Any], cutoffs: Iterable[str], fixtures: Iterable[Written]) -> Manifest:
    """The manifest: ``fields`` (provenance, settings, repositories), the fixtures sorted by id, and
    per cutoff how many fixtures of each split are fresh. A build and a refresh both make it here."""
    ordered = sorted(fixtures, key=lambda w: str(w.entry["id"]))
    fresh = fresh_counts(cutoffs, ((str(w.entry["split"]), w.fresh) for w in ordered))
    return Manifest.model_validate({**fields, "fresh": fresh, "fixtures": [w.entry for w in ordered]})


@dataclass(frozen=True)
class Earlier:
    """What an earlier build made of a fixture's visible part: its text, and what the answer
    recorded of the making (the blanked comments, whether the title was replaced)."""

    visible: str
    blanked: list[Any]
    title_replaced: bool


def earlier_fixture(previous: Path | None, fid: str, key: str, old_key: str | None) -> Earlier | None:
    """Fixture ``fid``'s visible part in the output of an earlier build, when that build made visible
    parts with the same settings (``key``, its ``old_key``): a rebuild writes them again as they were
    instead of assembling them anew."""
    if previous is None or old_key != key:
        return None
    try:
        text = (previous / "visible" / f"{fid}.json").read_text(encoding="utf-8")
        answer = json.loads((previous / "answers" / f"{fid}.json").read_text(encoding="utf-8"))
        return Earlier(text, answer["blanked"], bool(answer.get("title_replaced", False)))
    except (OSError, ValueError, KeyError, TypeError):
        return None
