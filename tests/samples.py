"""Build the sample repositories from their readable specs (for the tests, ``scripts/make_sample_repos.py``
and ``scripts/fault_injection.py``; a development tool, not part of the installed package).

A spec (``sample_repos/<name>/spec.yaml``) lists commits in order. Each commit names its
changes as operations on files, so a spec reads like a changelog rather than a dump of
file contents; authors and dates are fixed, so every SHA is stable on every machine.
The spec is turned into a ``git fast-import`` stream, which writes the whole repository
in one process.

Commit fields:
  id        symbolic name, used by the ground truth (``truth.yaml``) and by ``parents``
  message   full commit message
  date      ISO 8601 (UTC if no offset); default: previous commit's date + 3 days
  author    ``Name <email>``; default: the spec's ``author``
  committer default: the author; ``commit_date`` default: ``date``
  branch    branch the commit lands on (default ``main``); a new branch starts at ``from``
  from      id the first commit of a new branch starts from
  merge     ids (or branch names) merged in: extra parents, making a merge commit
  changes   list of operations, applied in order:
    {write: PATH, content: TEXT}            whole file (text, UTF-8)
    {write: PATH, latin1: TEXT}             whole file, encoded as Latin-1 (non-UTF-8 bytes)
    {write: PATH, generate: {count: N, line: "X_{n} = {n}"}, header: TEXT}
                                            N generated lines (a huge file, readably)
    {edit: PATH, replace: OLD, with: NEW}   OLD must occur exactly once in the file
    {edit: PATH, append: TEXT}
    {delete: PATH}
    {rename: OLD, to: NEW}
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from miner.core.errors import SpecError

DEFAULT_STEP = dt.timedelta(days=3)


@dataclass
class _State:
    files: dict[str, bytes] = field(default_factory=dict)


def _parse_date(value: Any, where: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, dt.date):
        parsed = dt.datetime(value.year, value.month, value.day, 10, 0)
    else:
        try:
            parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError as exc:
            raise SpecError(f"{where}: bad date {value!r}; use ISO 8601 like 2024-01-31T10:00:00Z") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed


def _git_date(when: dt.datetime) -> str:
    offset = when.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{int(when.timestamp())} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def _data(payload: bytes) -> bytes:
    return b"data " + str(len(payload)).encode() + b"\n" + payload + b"\n"


def _apply(state: _State, op: dict[str, Any], where: str) -> list[bytes]:
    """Apply one change to the tree state; return the fast-import file commands."""
    if "write" in op:
        path = str(op["write"])
        if "content" in op:
            payload = str(op["content"]).encode("utf-8")
        elif "latin1" in op:
            payload = str(op["latin1"]).encode("latin-1")
        elif "generate" in op:
            gen = op["generate"]
            header = str(op.get("header", ""))
            body = "".join(str(gen["line"]).format(n=i) + "\n" for i in range(int(gen["count"])))
            payload = (header + body).encode("utf-8")
        else:
            raise SpecError(f"{where}: write needs content, latin1 or generate")
        state.files[path] = payload
        return [b"M 100644 inline " + path.encode() + b"\n" + _data(payload)]
    if "edit" in op:
        path = str(op["edit"])
        if path not in state.files:
            raise SpecError(f"{where}: edit of {path!r}, which does not exist")
        text = state.files[path].decode("utf-8")
        if "replace" in op:
            old, new = str(op["replace"]), str(op["with"])
            count = text.count(old)
            if count != 1:
                raise SpecError(f"{where}: {path}: replace text occurs {count} times, need exactly 1: {old!r}")
            text = text.replace(old, new)
        elif "append" in op:
            text += str(op["append"])
        else:
            raise SpecError(f"{where}: edit needs replace/with or append")
        payload = text.encode("utf-8")
        state.files[path] = payload
        return [b"M 100644 inline " + path.encode() + b"\n" + _data(payload)]
    if "delete" in op:
        path = str(op["delete"])
        if state.files.pop(path, None) is None:
            raise SpecError(f"{where}: delete of {path!r}, which does not exist")
        return [b"D " + path.encode() + b"\n"]
    if "rename" in op:
        old, new = str(op["rename"]), str(op["to"])
        if old not in state.files:
            raise SpecError(f"{where}: rename of {old!r}, which does not exist")
        state.files[new] = state.files.pop(old)
        return [b'R "' + old.encode() + b'" "' + new.encode() + b'"\n']
    raise SpecError(f"{where}: unknown change {sorted(op)}")


_REF = re.compile(r"\{(sha|short):([^}]+)\}")


def fast_import_chunks(spec: dict[str, Any], sha_of: Callable[[int], str]) -> Iterator[bytes]:
    """Turn a spec into a ``git fast-import`` stream, one commit at a time.

    A message may name an earlier commit as ``{sha:ID}`` or ``{short:ID}`` (as trailers and
    reverts do); ``sha_of(mark)`` asks fast-import for that commit's SHA.
    """
    default_author = str(spec.get("author", "Sample Author <author@example.com>"))
    tips: dict[str, str] = {}
    states: dict[str, _State] = {}
    starts: dict[str, str | None] = {}  # commit id -> where its branch forked
    marks: dict[str, int] = {}
    last_date: dt.datetime | None = None
    for index, commit in enumerate(spec["commits"]):
        cid = str(commit["id"])
        where = f"commit {cid!r}"
        if cid in marks:
            raise SpecError(f"{where}: duplicate id")
        branch = str(commit.get("branch", "main"))
        date = (
            _parse_date(commit["date"], where)
            if "date" in commit
            else ((last_date + DEFAULT_STEP) if last_date else _parse_date("2023-01-02T10:00:00Z", where))
        )
        last_date = date
        commit_date = _parse_date(commit["commit_date"], where) if "commit_date" in commit else date
        author = str(commit.get("author", default_author))
        committer = str(commit.get("committer", author))
        parent = tips.get(branch)
        if parent is None and "from" in commit:
            parent = str(commit["from"])
        elif "from" in commit:
            raise SpecError(f"{where}: 'from' only starts a new branch; {branch!r} exists")
        state = _State(dict(states[parent].files)) if parent else _State()
        fork = starts[tips[branch]] if branch in tips else (str(commit["from"]) if "from" in commit else None)
        merges = [tips.get(str(m), str(m)) for m in commit.get("merge", [])]
        for merged in merges:
            if merged not in marks:
                raise SpecError(f"{where}: merges unknown commit or branch {merged!r}")
            # A merge takes every file the merged branch changed since it forked; the
            # merge commit's own changes resolve anything else.
            forked = starts.get(merged)
            base = states[forked].files if forked else {}
            theirs = states[merged].files
            for path in set(base) | set(theirs):
                if base.get(path) != theirs.get(path):
                    if path in theirs:
                        state.files[path] = theirs[path]
                    else:
                        state.files.pop(path, None)
        mark = index + 1
        out: list[bytes] = []

        def resolve(match: re.Match[str]) -> str:
            ref = match.group(2)
            if ref not in marks or ref == cid:
                raise SpecError(f"{where}: message names unknown earlier commit {ref!r}")
            sha = sha_of(marks[ref])
            return sha if match.group(1) == "sha" else sha[:12]

        message = _REF.sub(resolve, str(commit["message"])).encode("utf-8")
        if not message.endswith(b"\n"):
            message += b"\n"
        out.append(b"commit refs/heads/" + branch.encode() + b"\n")
        out.append(b"mark :" + str(mark).encode() + b"\n")
        out.append(b"author " + author.encode() + b" " + _git_date(date).encode() + b"\n")
        out.append(b"committer " + committer.encode() + b" " + _git_date(commit_date).encode() + b"\n")
        out.append(_data(message))
        if parent:
            out.append(b"from :" + str(marks[parent]).encode() + b"\n")
        for merged in merges:
            out.append(b"merge :" + str(marks[merged]).encode() + b"\n")
        if merges:
            # Write the merged tree explicitly so the merge result is exactly the spec's.
            out.append(b"deleteall\n")
            for path in sorted(state.files):
                out.append(b"M 100644 inline " + path.encode() + b"\n" + _data(state.files[path]))
        for n, op in enumerate(commit.get("changes", [])):
            out.extend(_apply(state, op, f"{where} change {n + 1}"))
        marks[cid] = mark
        states[cid] = state
        starts[cid] = fork
        yield b"".join(out) + b"\n"
        tips[branch] = cid
    yield b"reset refs/heads/main\nfrom :" + str(marks[tips["main"]]).encode() + b"\n\n"


def load_spec(path: Path) -> dict[str, Any]:
    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SpecError(f"cannot read spec {path}: {exc}") from exc
    if not isinstance(spec, dict) or "commits" not in spec:
        raise SpecError(f"{path}: a spec is a mapping with a 'commits' list")
    return spec


def build_repo(spec_dir: Path, dest: Path) -> dict[str, str]:
    """Build the repository of ``spec_dir`` at ``dest``; return commit id -> SHA."""
    spec = load_spec(spec_dir / "spec.yaml")
    env = _clean_git_env()
    dest.mkdir(parents=True, exist_ok=False)
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True, env=env)
    marks_file = dest / ".git" / "sample-marks"
    proc = subprocess.Popen(
        ["git", "-C", str(dest), "fast-import", "--quiet", f"--export-marks={marks_file}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    pipe_in, pipe_out = proc.stdin, proc.stdout

    def sha_of(mark: int) -> str:
        pipe_in.write(b"get-mark :" + str(mark).encode() + b"\n")
        pipe_in.flush()
        return pipe_out.readline().decode().strip()

    try:
        for chunk in fast_import_chunks(spec, sha_of):
            pipe_in.write(chunk)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    pipe_in.close()
    if proc.wait() != 0:
        raise SpecError(f"git fast-import failed building {spec_dir}")
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "-f", "main"], check=True, env=env)
    by_mark = {}
    for line in marks_file.read_text().splitlines():
        mark, sha = line.split()
        by_mark[int(mark[1:])] = sha
    marks_file.unlink()
    return {str(c["id"]): by_mark[i + 1] for i, c in enumerate(spec["commits"])}


def _clean_git_env() -> dict[str, str]:
    """An environment in which the user's git config cannot change what is built."""
    env = dict(os.environ)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "TZ": "UTC"})
    return env


def spec_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("*/spec.yaml"))


def build_all(root: Path, dest: Path) -> dict[str, dict[str, str]]:
    """Build every sample under ``root`` into ``dest/<name>``; return name -> id -> SHA."""
    return {d.name: build_repo(d, dest / d.name) for d in spec_dirs(root)}
