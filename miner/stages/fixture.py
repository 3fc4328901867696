"""Assemble one fixture's visible and answer parts from the commit it is made of.

The visible part holds only what the change itself shows: its sanitized message, the diff
against its first parent, and the whole before and after contents of every changed file,
with flagged comments on added lines blanked in place. The answer holds the rest.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from miner.core.config import Config
from miner.core.errors import MissingObjectError
from miner.core.records import Answer, Blanked, CommitMeta, Defect, Fixture, Visible, VisibleFile, iso
from miner.git import Repo, header_path
from miner.stages.split import freshness
from miner.stages.strip import blank_comments, drop_commit_ids, raw_message, sanitize_message

_STATUS = {"A": "added", "M": "modified", "T": "modified", "D": "deleted", "R": "renamed", "C": "added"}
_GITLINK = 0o160000
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class FixtureJob:
    """A fixture to make: a bug one (with the defects its change introduced) or a clean one (with
    the days it was watched for a fix)."""

    kind: str
    head: str
    split: str
    defects: tuple[Defect, ...] | None
    observed_days: int | None


@dataclass(frozen=True)
class Source:
    """The repository a fixture comes from: its name in the output, and its identity (which,
    with the commit and the split salt, makes the fixture's id)."""

    repository: str
    identity: str


def fixture_id(identity: str, head: str, salt: str) -> str:
    """Opaque and stable: the same repository and commit always give the same id, which reveals no SHA."""
    digest = hashlib.sha256(f"{salt}:{identity}:{head}".encode()).digest()
    return "fx-" + base64.b32encode(digest).decode().lower()[:16]


def decode(data: bytes) -> tuple[str, str]:
    """Text and the encoding that gives back the exact bytes: UTF-8 when valid, else Latin-1."""
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8000]


def _sections(patch: bytes) -> list[bytes]:
    parts = re.split(rb"(?m)^(?=diff --git )", patch)
    return [p for p in parts if p.startswith(b"diff --git ")]


def _visible_diff(patch: bytes, blanked_text: dict[str, dict[int, str]], omitted: set[str]) -> str:
    """git's diff, minus blob ids, with blanked added lines and without omitted files' hunks."""
    out: list[str] = []
    for section in _sections(patch):
        text, encoding = decode(section)
        lines = text.split("\n")
        new_path: str | None = None
        for line in lines:
            if line.startswith("+++ "):
                new_path = header_path(line[4:].encode(encoding))
            elif line.startswith("rename to "):
                new_path = line[len("rename to ") :]
            elif line.startswith("diff --git ") and " b/" in line:
                new_path = line.split(" b/", 1)[1]
        edits = blanked_text.get(new_path or "", {})
        kept: list[str] = []
        in_hunks = False
        new_no = 0
        for line in lines:
            if line.startswith("index "):
                continue
            match = _HUNK.match(line)
            if match:
                in_hunks = True
                new_no = int(match.group(1))
                if new_path in omitted:
                    kept.append("(contents omitted)")
                    break
                kept.append(line)
                continue
            if in_hunks and line[:1] == "+":
                kept.append("+" + edits.get(new_no, line[1:]))
                new_no += 1
                continue
            if in_hunks and line[:1] == " ":
                new_no += 1
            kept.append(line)
        out.append("\n".join(kept).rstrip("\n") + "\n")
    return "".join(out)


def added_lines(patch: bytes) -> dict[str, set[int]]:
    """Path -> the line numbers (in the new version) a unified diff adds."""
    added: dict[str, set[int]] = {}
    for section in _sections(patch):
        text, encoding = decode(section)
        path: str | None = None
        new_no = 0
        for line in text.split("\n"):
            if line.startswith("+++ "):
                path = header_path(line[4:].encode(encoding))
                continue
            match = _HUNK.match(line)
            if match:
                new_no = int(match.group(1))
                continue
            if path is None or not new_no:
                continue
            if line.startswith("+"):
                added.setdefault(path, set()).add(new_no)
                new_no += 1
            elif line.startswith(" "):
                new_no += 1
    return added


def make_fixture(repo: Repo, source: Source, job: FixtureJob, meta: CommitMeta, config: Config) -> Fixture:
    """The fixture ``job`` asks for, made of commit ``meta`` (``job.head``) of ``repo``."""
    head, defects, message = job.head, job.defects, meta.message
    fid = fixture_id(source.identity, head, config.split.salt)
    base = repo.first_parent(head)
    patch = repo.patch(base, head)
    added = added_lines(patch)

    @lru_cache(maxsize=None)
    def is_commit(token: str) -> bool:
        return repo.expand(token) is not None

    files: list[VisibleFile] = []
    blanked: list[Blanked] = []
    blanked_text: dict[str, dict[int, str]] = {}
    omitted: set[str] = set()
    for status, old_path, new_path in sorted(repo.changes(base, head), key=lambda c: c[2] or c[1] or ""):
        path = new_path or old_path or ""
        reason = None
        entries = [repo.entry(sha, p) for sha, p in ((base, old_path), (head, new_path)) if sha and p]
        if any(e is not None and e[0] == _GITLINK for e in entries):
            # A submodule's "contents" are a commit id of another repository (or of this one).
            before = after = None
            reason = "submodule"
        else:
            try:
                before = repo.blob(base, old_path) if base and old_path else None
                after = repo.blob(head, new_path) if new_path else None
            except MissingObjectError:
                before = after = None
                reason = "missing"
        datas = [d for d in (before, after) if d is not None]
        if reason:
            pass
        elif any(_is_binary(d) for d in datas):
            reason = "binary"
        elif any(len(d) > config.output.max_file_bytes for d in datas):
            reason = "too-large"
        if reason:
            omitted.add(path)
            files.append(
                VisibleFile(
                    path=path,
                    old_path=old_path if status == "R" else None,
                    status=_STATUS.get(status, "modified"),
                    encoding=None,
                    before=None,
                    after=None,
                    omitted=reason,
                )
            )
            continue
        encoding = "utf-8" if all(decode(d)[1] == "utf-8" for d in datas) else "latin-1"
        before_text = before.decode(encoding) if before is not None else None
        after_text = after.decode(encoding) if after is not None else None
        if config.strip.enabled and after_text is not None and new_path in added:
            after_text, edits = blank_comments(new_path, after_text, added[new_path], config.strip)
            after_text, dropped = drop_commit_ids(new_path, after_text, added[new_path], is_commit)
            edits = sorted(edits + dropped, key=lambda b: (b.line, b.text))
            if edits:
                blanked += edits
                lines = after_text.split("\n")
                blanked_text[new_path] = {e.line: lines[e.line - 1] for e in edits}
        files.append(
            VisibleFile(
                path=path,
                old_path=old_path if status == "R" else None,
                status=_STATUS.get(status, "modified"),
                encoding=encoding,
                before=before_text,
                after=after_text,
            )
        )
    title_replaced = False
    if config.strip.enabled:
        fix_subjects = tuple(sorted({d.summary for d in defects or ()}))
        title, description, title_replaced = sanitize_message(
            message,
            config.strip.description,
            config.strip,
            avoid=fix_subjects,
            is_commit=is_commit,
            paths=[f.path for f in files],
        )
    else:
        title, description = raw_message(message, config.strip.description)
    visible = Visible(
        id=fid, title=title, description=description, diff=_visible_diff(patch, blanked_text, omitted), files=tuple(files)
    )
    answer = make_answer(source, job, meta, blanked, config, title_replaced=title_replaced)
    return Fixture(visible=visible, answer=answer)


def make_answer(
    source: Source, job: FixtureJob, meta: CommitMeta, blanked: Iterable[Blanked], config: Config, **extra: Any
) -> Answer:
    """A fixture's answer part: what it is, where it came from, where its defects are and what was
    blanked. ``extra`` holds what only the whole build knows (family, how clean a clean one is)."""
    return Answer(
        id=fixture_id(source.identity, job.head, config.split.salt),
        kind=job.kind,
        repository=source.repository,
        split=job.split,
        base=meta.parents[0] if meta.parents else None,
        head=job.head,
        head_date=iso(meta.committed),
        author_date=iso(meta.authored),
        defects=job.defects,
        observed_days=job.observed_days,
        fresh=freshness(meta.committed, config.split),
        description_mode=config.strip.description,
        blanked=tuple(blanked),
        **extra,
    )
