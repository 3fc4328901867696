"""Parsers of what git prints: ``git log -z --numstat`` records, unified diffs, porcelain blame,
and the C-quoted paths in all of them. Pure functions of bytes: no git runs here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from miner.core.records import CommitMeta, FileDiff, FileStat

# The --format of the log records parse_commit reads: fields split by \x02, the message ended by \x03.
LOG_FORMAT = "%x01%H%x02%P%x02%an%x02%ae%x02%at%x02%ct%x02%B%x03"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}
_LINK_MODES = (b"120000", b"160000")  # symlink, submodule (gitlink)


def squeeze(line: str) -> str:
    """A line with every whitespace character taken out: equal for a line moved or re-indented."""
    return "".join(line.split())


def header_path(raw: bytes) -> str | None:
    """The path on a ``--- a/x`` or ``+++ b/x`` line, given what follows the marker; None for
    /dev/null. git C-quotes a path with special bytes, and ends the line with a tab when the
    path holds a space."""
    if raw.endswith(b"\t"):
        raw = raw[:-1]
    return None if raw == b"/dev/null" else unquote(raw)[2:]


def unquote(raw: bytes) -> str:
    """A path as git prints it (C-quoted when it holds special bytes) back to text."""
    if not (raw.startswith(b'"') and raw.endswith(b'"')):
        return raw.decode("utf-8", "surrogateescape")
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i : i + 1]
        if ch == b"\\" and i + 1 < len(body):
            nxt = body[i + 1 : i + 2]
            if nxt.isdigit():
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, nxt[0]))
            i += 2
            continue
        out += ch
        i += 1
    return bytes(out).decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class BlameHit:
    """One line of blame output: the commit that wrote it, and where it stood there."""

    final_line: int
    sha: str
    orig_path: str
    orig_line: int


def runs(lines: list[int]) -> Iterator[tuple[int, int]]:
    """Sorted line numbers as runs of consecutive lines: (first, last)."""
    start = prev = lines[0]
    for line in lines[1:]:
        if line != prev + 1:
            yield start, prev
            start = line
        prev = line
    yield start, prev


def parse_commit(record: bytes) -> CommitMeta:
    header, _, tail = record.partition(b"\x03")
    sha, parents, an, ae, at, ct, message = header.split(b"\x02", 6)
    files: list[FileStat] = []
    fields = tail.lstrip(b"\x00\n").split(b"\x00")
    i = 0
    while i < len(fields):
        entry = fields[i].lstrip(b"\n")
        if not entry:
            i += 1
            continue
        added, removed, path = entry.split(b"\t", 2)
        binary = added == b"-"
        if path:
            old, new = None, path
            i += 1
        else:
            old, new = fields[i + 1], fields[i + 2]
            i += 3
        files.append(
            FileStat(
                path=new.decode("utf-8", "surrogateescape"),
                old_path=old.decode("utf-8", "surrogateescape") if old is not None else None,
                added=0 if binary else int(added),
                removed=0 if binary else int(removed),
                binary=binary,
            )
        )
    return CommitMeta(
        sha=sha.decode(),
        parents=tuple(parents.decode().split()),
        author_name=an.decode("utf-8", "replace"),
        author_email=ae.decode("utf-8", "replace"),
        author_time=int(at),
        committer_time=int(ct),
        message=message.decode("utf-8", "replace"),
        files=tuple(files),
    )


def parse_diff(lines: list[bytes]) -> list[FileDiff]:
    """Parse ``git log -p`` output of one commit into per-file removed and added lines.

    ``insertions`` records, for every run of added lines with no removed line beside it,
    the old line number that follows the inserted block (where a missing check was put).
    """
    files: list[FileDiff] = []
    state: dict[str, Any] | None = None
    old_no = new_no = 0
    in_hunk = False
    run_start: int | None = None  # old line number where the current +/- run began
    run_removes = False

    def end_run() -> None:
        nonlocal run_start, run_removes
        if state is not None and run_start is not None and not run_removes:
            state["insertions"].append(run_start)
        run_start, run_removes = None, False

    def flush() -> None:
        end_run()
        if state is not None:
            if state["new_file"]:
                state["old_path"] = None
            if state["deleted_file"]:
                state["new_path"] = None
            files.append(FileDiff.model_validate(state))

    for line in lines:
        if line.startswith(b"diff --git "):
            flush()
            state = {
                "old_path": None,
                "new_path": None,
                "binary": False,
                "removed": [],
                "added": [],
                "insertions": [],
                "new_file": False,
                "deleted_file": False,
            }
            in_hunk = False
            rest = line[len(b"diff --git ") :]
            if rest.startswith(b"a/") and b" b/" in rest:
                a, _, b = rest[2:].partition(b" b/")
                state["old_path"], state["new_path"] = unquote(a), unquote(b)
            continue
        if state is None:
            continue
        tag = line[:1]
        if in_hunk and tag in (b"+", b"-", b" ", b"\\"):
            if tag == b"-":
                if run_start is None:
                    run_start = old_no
                run_removes = True
                state["removed"].append((old_no, line[1:].decode("utf-8", "surrogateescape")))
                old_no += 1
            elif tag == b"+":
                if run_start is None:
                    run_start = old_no
                state["added"].append((new_no, line[1:].decode("utf-8", "surrogateescape")))
                new_no += 1
            elif tag == b" ":
                end_run()
                old_no += 1
                new_no += 1
            continue
        end_run()
        match = _HUNK.match(line)
        if match:
            in_hunk = True
            old_no, new_no = int(match.group(1)), int(match.group(3))
            if match.group(2) == b"0":
                old_no += 1  # an empty old side names the line *before* the insertion
            continue
        in_hunk = False
        if line.startswith(b"--- "):
            state["old_path"] = header_path(line[4:])
        elif line.startswith(b"+++ "):
            state["new_path"] = header_path(line[4:])
        elif line.startswith(b"rename from "):
            state["old_path"] = unquote(line[len(b"rename from ") :])
        elif line.startswith(b"rename to "):
            state["new_path"] = unquote(line[len(b"rename to ") :])
        elif line.startswith(b"Binary files"):
            state["binary"] = True
        if line.startswith(b"new file mode"):
            state["new_file"] = True
        elif line.startswith(b"deleted file mode"):
            state["deleted_file"] = True
        if (
            line.startswith((b"new file mode ", b"deleted file mode ", b"old mode ", b"new mode ", b"index "))
            and line.rsplit(b" ", 1)[-1] in _LINK_MODES
        ):
            state["link"] = True
    flush()
    return files


def parse_blame(out: bytes, boundary: set[str] | None = None) -> list[BlameHit]:
    """Porcelain blame output as hits; the commits it marks as boundaries go into ``boundary``."""
    hits: list[BlameHit] = []
    filenames: dict[str, str] = {}
    current: tuple[str, int, int] | None = None
    for line in out.split(b"\n"):
        if line.startswith(b"\t"):
            if current is not None:
                sha, orig, final = current
                hits.append(BlameHit(final_line=final, sha=sha, orig_path=filenames.get(sha, ""), orig_line=orig))
            continue
        parts = line.split(b" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit() and parts[2].isdigit():
            current = (parts[0].decode(), int(parts[1]), int(parts[2]))
        elif line.startswith(b"filename ") and current is not None:
            filenames[current[0]] = unquote(line[len(b"filename ") :])
        elif line == b"boundary" and current is not None and boundary is not None:
            boundary.add(current[0])
    return hits
