"""``miner audit``: independent checks that a fixture set leaks nothing and claims only what holds.

The checks re-derive everything from the output and, when given, the mined repositories and
materialized fixture repositories; they share no code with the stages that wrote the output,
so a bug there shows up here. Each check is named in every finding it makes:

  sha           the title, description or an added line (of a file or the diff) holds a prefix (7+ hex
                digits) of a commit of the source repository (the rest of a file is the base as it was)
  sha-like      title or description holds a 7-40 character hex token with a digit and a letter
                (a warning: without the repository it cannot be told from a hash or a colour)
  issue-ref     title or description holds ``#123``, ``GH-123``, ``PROJ-123``, ``owner/repo#123`` or an
                advisory id in any case (``cve-2024-39338``, ``GHSA-xxxx-xxxx-xxxx``), ``RHBZ#123``
  url, email    title or description holds a link or an e-mail address
  fix-subject   title or description holds the subject of a fix that labelled the change
  trailer       title or description holds a trailer (``Signed-off-by``, ``Docker-DCO-1.1-Signed-off-by``,
                ``Change-Id``, any ``strip.trailer_keys`` key) or a piece of a DCO sign-off
  fragment      title or description holds what redaction left: a sentence ending where a reference was
                cut, a line opening with punctuation a removal left, digits of a cut id (see ``fragments``);
                counted per kind. An error when the commit's message shows it is no author's (``--repo``),
                else a warning
  oracle-comment a comment on an added line carries a marker (FIXME, TODO, ...), an issue reference or a link
  contents      a visible file's before/after is not the blob at base/head (blanked lines aside),
                or the visible files are not exactly the files the change touched
  diff          a line of the visible diff is not the line of the visible file it claims to be
  blanked       a recorded blank is not on an added line, or the line is not the original minus the comment
  defect-lines  a defect's lines lie outside the head file or outside the change's added lines
  family        fixtures sharing an introducing commit, a fix or a patch-id sit in different splits
  fresh         a fresh-for-cutoff claim does not follow from the change's date and the cutoffs
  head-date     the recorded date of the change is not its committer date
  layout        the manifest and the files of the output disagree, or a file does not parse
  materialized  a materialized repository holds a ref, commit or object it must not, or fails fsck
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from miner.commands.fragments import KINDS, fragments, trailer_lines
from miner.commands.sources import RepoSpec, mined_repositories
from miner.core.config import Config
from miner.core.errors import OutputDirError
from miner.core.lexer import comment_spans
from miner.core.output import Manifest, open_output
from miner.core.records import Answer, Visible, VisibleFile, iso
from miner.git import Repo, header_path

Severity = Literal["error", "warning"]

_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")
_SHA_LIKE = re.compile(r"(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])")
_URL = re.compile(r"\b(?:https?|ftp|ssh|git)://\S+|\bwww\.[\w-]+\.\w+", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
# A key followed by a dot and a digit is a version (GPL-2.0), not a ticket.
_ISSUE = re.compile(r"(?<![\w&])#\d+\b|\b(?:GH|gh|GL|gl)-\d+\b|\b[\w.-]+/[\w.-]+#\d+\b|\b([A-Z][A-Z0-9]+)-\d+\b(?![.]\d)")
# In any case: cve-2024-39338; and a tracker's prefix glued to the number: RHBZ#1150656, PR#12.
_ADVISORY = re.compile(r"\bCVE-\d{4}-\d{4,}\b|\bGHSA(?:-[0-9a-z]{4}){3}\b|\b[A-Za-z]{1,6}#\d+\b", re.I)
# Upper-case words followed by a number that name a standard, not a ticket.
_NOT_TICKETS = {"UTF", "UCS", "ISO", "SHA", "MD", "PEP", "RFC", "CP", "WIN", "AES", "HTTP", "TLS", "SSL", "X"}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Finding:
    check: str
    fixture: str | None
    detail: str
    severity: Severity = "error"

    def to_json(self) -> dict[str, str | None]:
        return {"check": self.check, "fixture": self.fixture, "detail": self.detail, "severity": self.severity}

    def line(self) -> str:
        where = f"{self.fixture}: " if self.fixture else ""
        return f"{self.severity}: {self.check}: {where}{self.detail}"


@dataclass
class AuditReport:
    findings: list[Finding] = field(default_factory=list)
    checked: Counter[str] = field(default_factory=Counter)
    skipped: set[str] = field(default_factory=set)
    without_repo: set[str] = field(default_factory=set)  # repositories whose --repo checks were skipped
    fragments: Counter[str] = field(default_factory=lambda: Counter({k: 0 for k in KINDS}))  # per kind

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "findings": [f.to_json() for f in self.findings],
            "checked": dict(sorted(self.checked.items())),
            "fragments": dict(sorted(self.fragments.items())),
            "skipped": sorted(self.skipped),
            "skipped_repositories": sorted(self.without_repo),
        }

    def text(self) -> str:
        errors = sum(f.severity == "error" for f in self.findings)
        warnings = len(self.findings) - errors
        counts = ", ".join(f"{k}={v}" for k, v in sorted(self.checked.items()))
        pieces = ", ".join(f"{k}={v}" for k, v in sorted(self.fragments.items()))
        which = f" for {', '.join(map(repr, sorted(self.without_repo)))}" if self.without_repo else ""
        tail = f"; skipped{which} (give --repo): {', '.join(sorted(self.skipped))}" if self.skipped else ""
        verdict = "clean" if self.ok else "FAILED"
        return "\n".join(
            [
                *(f.line() for f in self.findings),
                f"audit {verdict}: {errors} error(s), {warnings} warning(s); checked {counts}; fragments {pieces}{tail}",
            ]
        )


# -- reading the output --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fixture:
    id: str
    split: str
    visible: Visible
    answer: Answer


def _load(out: Path, report: AuditReport) -> tuple[Manifest, list[_Fixture]]:
    fixtures_set = open_output(out)
    fixtures: list[_Fixture] = []
    listed: set[str] = set()
    for entry in fixtures_set.manifest.fixtures:
        if entry.visible in listed:  # one file for two entries: the one written last hides the other
            report.findings.append(Finding("layout", entry.id, "listed more than once in the manifest"))
            continue
        listed |= {entry.visible, entry.answer}
        try:
            fixture = fixtures_set[entry.id]
        except OutputDirError as exc:
            report.findings.append(Finding("layout", entry.id, f"visible or answer file unreadable: {exc}"))
            continue
        if fixture.visible.id != entry.id or fixture.answer.id != entry.id or fixture.answer.split != entry.split:
            report.findings.append(Finding("layout", entry.id, "ids or split differ between manifest, visible and answer"))
        fixtures.append(_Fixture(entry.id, fixture.answer.split, fixture.visible, fixture.answer))
    for sub in ("visible", "answers"):
        for path in sorted((out / sub).glob("*")) if (out / sub).is_dir() else []:
            if f"{sub}/{path.name}" not in listed:
                report.findings.append(Finding("layout", None, f"{sub}/{path.name} is not listed in the manifest"))
    report.checked["fixtures"] = len(fixtures)
    return fixtures_set.manifest, fixtures


# -- leak checks ---------------------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def _is_commit_prefix(token: str, commits: list[str]) -> bool:
    i = bisect.bisect_left(commits, token)
    return i < len(commits) and commits[i].startswith(token)


def _message_leaks(fx: _Fixture, commits: list[str] | None) -> Iterator[Finding]:
    for where, text in (("title", fx.visible.title), ("description", fx.visible.description)):
        for match in _URL.finditer(text):
            yield Finding("url", fx.id, f"{where}: {match.group(0)!r}")
        for match in _EMAIL.finditer(text):
            yield Finding("email", fx.id, f"{where}: {match.group(0)!r}")
        for match in _ISSUE.finditer(text):
            if match.group(1) not in _NOT_TICKETS:
                yield Finding("issue-ref", fx.id, f"{where}: {match.group(0)!r}")
        for match in _ADVISORY.finditer(text):
            if "#" in match.group(0) or match.group(0) != match.group(0).upper():  # else reported above
                yield Finding("issue-ref", fx.id, f"{where}: {match.group(0)!r}")
        for match in _HEX.finditer(text):
            token = match.group(0).lower()
            if commits is not None and _is_commit_prefix(token, commits):
                continue  # reported by the sha check over every visible text
            if _SHA_LIKE.match(token):
                yield Finding("sha-like", fx.id, f"{where}: {token!r} looks like a commit SHA", "warning")
    message = _norm(f"{fx.visible.title}\n{fx.visible.description}")
    for subject in sorted({d.summary for d in fx.answer.defects or ()}):
        if len(_norm(subject)) >= 8 and _norm(subject) in message:
            yield Finding("fix-subject", fx.id, f"the fix's subject {subject!r} shows in the title or description")


def _redaction(fx: _Fixture, original: str | None, keys: list[str]) -> Iterator[Finding]:
    """Trailers and fragments in the title and description (``original``: the commit's message)."""
    for where, text in (("title", fx.visible.title), ("description", fx.visible.description)):
        for line in trailer_lines(text, keys):
            yield Finding("trailer", fx.id, f"{where}: {line[:80]!r}")
    for kind, what, confirmed in fragments(fx.visible.title, fx.visible.description, original):
        if original is None or confirmed:
            yield Finding("fragment", fx.id, f"{kind}: {what!r}", "error" if confirmed else "warning")


def _sha_leaks(fx: _Fixture, commits: list[str], added: dict[str, set[int]]) -> Iterator[Finding]:
    """Commit prefixes in what the change's author wrote: its title, description and added lines.
    The rest of a file is the base as it was, which a materialized fixture hands over whole (and
    its files' links and addresses are not checked either)."""
    texts = [("title", fx.visible.title), ("description", fx.visible.description)]
    for vf in fx.visible.files:
        if vf.after:
            lines = vf.after.split("\n")
            texts += [(f"{vf.path}:{n}", lines[n - 1]) for n in sorted(added.get(vf.path, ())) if 0 < n <= len(lines)]
    # The diff's added lines too: a file shown without contents (a submodule) has them only there.
    texts += [("diff", line) for line in fx.visible.diff.split("\n") if line[:1] == "+" and not line.startswith("+++ ")]
    for where, text in texts:
        for match in _HEX.finditer(text):
            token = match.group(0).lower()
            if _is_commit_prefix(token, commits):
                yield Finding("sha", fx.id, f"{where}: {token!r} is a prefix of a commit of the source repository")


def _marker(config: Config) -> re.Pattern[str]:
    words = "|".join(re.escape(m) for m in config.strip.comment_markers)
    return re.compile(rf"\b(?:{words})\b|(?<![\w&])#\d+\b|\b(?:GH|gh)-\d+\b|https?://")


def _oracle_comments(fx: _Fixture, added: dict[str, set[int]], marker: re.Pattern[str]) -> Iterator[Finding]:
    for vf in fx.visible.files:
        lines = added.get(vf.path)
        if not lines or vf.after is None:
            continue
        text_lines = vf.after.split("\n")
        if not any(marker.search(text_lines[n - 1]) for n in lines if 0 < n <= len(text_lines)):
            continue
        for span in comment_spans(vf.path, vf.after):
            if span.line in lines and marker.search(span.text):
                yield Finding("oracle-comment", fx.id, f"{vf.path}:{span.line}: comment {span.text.strip()!r}")


# -- what the change is --------------------------------------------------------------------------------


@dataclass
class _Section:
    old_path: str | None = None
    new_path: str | None = None
    lines: list[tuple[str, int, int, str]] = field(default_factory=list)  # (tag, old no, new no, text)
    omitted: bool = False
    error: str | None = None  # why unidiff could not read the section


def _parse_diff(diff: str) -> list[_Section]:
    """Every file section of a visible diff with each line's old and new numbers, read by unidiff: a
    parser of its own, not the code that wrote the diff. A section whose contents the fixture stage
    left out (a hunk header, then ``(contents omitted)``) is marked so and not given to unidiff."""
    chunks: list[list[str]] = []
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            chunks.append([])
        if chunks:
            chunks[-1].append(line)
    sections: list[_Section] = []
    for chunk in chunks:
        if "(contents omitted)" in chunk:
            section = _Section(omitted=True)
            for line in chunk:
                if line.startswith("--- "):
                    section.old_path = header_path(line[4:].encode("utf-8", "surrogateescape"))
                elif line.startswith("+++ "):
                    section.new_path = header_path(line[4:].encode("utf-8", "surrogateescape"))
            sections.append(section)
            continue
        try:
            (patched,) = PatchSet("\n".join(chunk) + "\n")
        except (UnidiffParseError, ValueError) as exc:
            sections.append(_Section(error=str(exc) or exc.__class__.__name__))
            continue
        sections.append(
            _Section(
                old_path=_header(patched.source_file),
                new_path=_header(patched.target_file),
                lines=[
                    (line.line_type, line.source_line_no or 0, line.target_line_no or 0, line.value.rstrip("\n"))
                    for hunk in patched
                    for line in hunk
                    if line.line_type in ("+", "-", " ")
                ],
            )
        )
    return sections


def _header(path: str | None) -> str | None:
    """A path as unidiff gives it (``a/x``, git's C-quoting kept) to the path of the repository."""
    return None if path is None else header_path(path.encode("utf-8", "surrogateescape"))


def _added(diff: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for section in _parse_diff(diff):
        if section.new_path is not None:
            out.setdefault(section.new_path, set()).update(n for tag, _, n, _ in section.lines if tag == "+")
    return out


def _same_line(claimed: str, actual: str, encoding: str | None) -> bool:
    if claimed == actual:
        return True
    if encoding == "latin-1":  # a section git printed as UTF-8 while the file as a whole is Latin-1
        try:
            return claimed.encode("utf-8").decode("latin-1") == actual
        except UnicodeError:
            return False
    return False


def _diff_matches_files(fx: _Fixture) -> Iterator[Finding]:
    files = {vf.path: vf for vf in fx.visible.files}
    for section in _parse_diff(fx.visible.diff):
        if section.error:
            yield Finding("diff", fx.id, f"a section of the diff does not parse: {section.error}")
            continue
        path = section.new_path or section.old_path
        vf = files.get(path or "")
        if vf is None:
            if section.lines:
                yield Finding("diff", fx.id, f"the diff shows {path!r}, which is not among the visible files")
            continue
        if section.omitted or vf.omitted:
            continue
        before = vf.before.split("\n") if vf.before is not None else []
        after = vf.after.split("\n") if vf.after is not None else []
        for tag, old_no, new_no, text in section.lines:
            sides = ([] if tag == "+" else [(before, old_no, "before")]) + ([] if tag == "-" else [(after, new_no, "after")])
            for lines, no, side in sides:
                if not (0 < no <= len(lines)) or not _same_line(text, lines[no - 1], vf.encoding):
                    yield Finding("diff", fx.id, f"{path}: diff line {tag}{no} is not line {no} of the {side} file")
                    break
            else:
                continue
            break


def _without_blanks(original: str, texts: list[str]) -> str:
    for text in sorted(texts, key=len, reverse=True):
        original = original.replace(text, "", 1)
    return original.rstrip()


def _contents(fx: _Fixture, repo: Repo, added: dict[str, set[int]]) -> Iterator[Finding]:
    a = fx.answer
    touched = {path for _, old, new in repo.changes(a.base, a.head) if (path := new or old)}
    shown = {vf.path for vf in fx.visible.files}
    if touched != shown:
        extra, missing = sorted(shown - touched), sorted(touched - shown)
        yield Finding("contents", fx.id, f"visible files differ from the change: extra {extra}, missing {missing}")
    blanks: dict[str, dict[int, list[str]]] = {}
    for b in a.blanked:
        blanks.setdefault(b.path, {}).setdefault(b.line, []).append(b.text)
        if b.line not in added.get(b.path, set()):
            yield Finding("blanked", fx.id, f"{b.path}:{b.line} was blanked but is not an added line")
    for vf in fx.visible.files:
        if vf.omitted or vf.encoding is None:
            continue
        yield from _one_file(fx, repo, vf, blanks.get(vf.path, {}))


def _one_file(fx: _Fixture, repo: Repo, vf: VisibleFile, blanks: dict[int, list[str]]) -> Iterator[Finding]:
    a = fx.answer
    assert vf.encoding is not None
    old = vf.old_path or vf.path
    want_before = repo.blob(a.base, old) if a.base and vf.status != "added" else None
    want_after = repo.blob(a.head, vf.path) if vf.status != "deleted" else None
    if (vf.before.encode(vf.encoding) if vf.before is not None else None) != want_before:
        yield Finding("contents", fx.id, f"{vf.path}: 'before' is not the blob at the base")
    if vf.after is None or want_after is None:
        if (vf.after is None) != (want_after is None):
            yield Finding("contents", fx.id, f"{vf.path}: 'after' is not the blob at the head")
        return
    shown, real = vf.after.split("\n"), want_after.decode(vf.encoding).split("\n")
    if len(shown) != len(real):
        yield Finding("contents", fx.id, f"{vf.path}: 'after' has {len(shown)} lines, the head blob {len(real)}")
        return
    for no, (s, r) in enumerate(zip(shown, real), 1):
        if s == r:
            continue
        if no in blanks and s.rstrip() == _without_blanks(r, blanks[no]):
            continue
        yield Finding("contents", fx.id, f"{vf.path}:{no}: 'after' differs from the head blob")
        return
    for no, texts in blanks.items():
        if 0 < no <= len(real) and shown[no - 1].rstrip() != _without_blanks(real[no - 1], texts):
            yield Finding("blanked", fx.id, f"{vf.path}:{no}: the line is not the original minus the blanked comment")


def _defect_lines(fx: _Fixture, added: dict[str, set[int]]) -> Iterator[Finding]:
    files = {vf.path: vf for vf in fx.visible.files}
    for d in fx.answer.defects or ():
        span = f"{d.path}:{d.line_start}-{d.line_end}"
        vf = files.get(d.path)
        if vf is None or vf.status == "deleted":
            yield Finding("defect-lines", fx.id, f"{span}: the change leaves no such file")
            continue
        if vf.after is not None and not (1 <= d.line_start <= d.line_end <= len(vf.after.split("\n"))):
            yield Finding("defect-lines", fx.id, f"{span}: outside the head file")
            continue
        outside = [n for n in range(d.line_start, d.line_end + 1) if n not in added.get(d.path, set())]
        if outside:
            yield Finding("defect-lines", fx.id, f"{span}: line(s) {outside[:5]} are not added by the change")


# -- families and freshness ----------------------------------------------------------------------------


def _families(fixtures: list[_Fixture], patch_ids: dict[str, str]) -> Iterator[Finding]:
    parent = {fx.id: fx.id for fx in fixtures}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, str] = {}
    why: dict[str, str] = {}
    for fx in fixtures:
        keys = [("introducing commit", fx.answer.head)] + [("fix", d.fix) for d in fx.answer.defects or ()]
        if fx.id in patch_ids:
            keys.append(("patch-id", patch_ids[fx.id]))
        for kind, key in keys:
            if key in owner:
                a, b = root(owner[key]), root(fx.id)
                if a != b:
                    parent[b] = a
                    why.setdefault(a, f"{kind} {key[:12]}")
            else:
                owner[key] = fx.id
    groups: dict[str, list[_Fixture]] = {}
    for fx in fixtures:
        groups.setdefault(root(fx.id), []).append(fx)
    for top, members in sorted(groups.items()):
        splits = sorted({m.split for m in members})
        if len(splits) > 1:
            listing = ", ".join(f"{m.id} ({m.split})" for m in sorted(members, key=lambda m: m.id))
            yield Finding("family", top, f"a family sharing {why.get(top, 'a key')} spans splits {splits}: {listing}")


def _fresh(fx: _Fixture, cutoffs: dict[str, dt.date]) -> Iterator[Finding]:
    claims = fx.answer.fresh
    if set(claims) != set(cutoffs):
        yield Finding("fresh", fx.id, f"claims cover {sorted(claims)}, the cutoffs are {sorted(cutoffs)}")
    day = dt.datetime.fromisoformat(fx.answer.head_date.replace("Z", "+00:00")).astimezone(dt.timezone.utc).date()
    for name, claim in sorted(claims.items()):
        if name in cutoffs and claim != (day > cutoffs[name]):
            yield Finding("fresh", fx.id, f"claims fresh={claim} for {name} ({cutoffs[name]}), landed {day}")


def _cutoffs(manifest: Manifest) -> dict[str, dt.date]:
    return {name: dt.date.fromisoformat(day) for name, day in manifest.cutoffs.items()}


# -- materialized repositories -------------------------------------------------------------------------


def _materialized(
    path: Path, fixtures: list[_Fixture], repos: dict[str, Repo], ancestors: dict[tuple[str, str], set[str]]
) -> Iterator[Finding]:
    where = str(path)
    repo = Repo(path)
    refs = repo.refs()
    extra = sorted(set(refs) - {"refs/heads/base", "refs/heads/pr"})
    if extra or len(refs) != 2:
        yield Finding("materialized", where, f"refs other than base and pr: {extra or sorted(refs)}")
    if (repo.git_dir / "logs").exists():
        yield Finding("materialized", where, "holds reflogs (.git/logs)")
    for name in ("ORIG_HEAD", "FETCH_HEAD", "shallow"):
        if (repo.git_dir / name).exists():
            yield Finding("materialized", where, f"holds .git/{name}")
    if repo.run("remote").strip():
        yield Finding("materialized", where, "has remotes")
    yield from _fsck(repo, where)
    objects = repo.objects()
    unreachable = set(objects) - repo.reachable()
    if unreachable:
        yield Finding("materialized", where, f"{len(unreachable)} unreachable object(s), e.g. {min(unreachable)}")
    base = refs.get("refs/heads/base")
    pr = refs.get("refs/heads/pr")
    if base is None or pr is None:
        return
    if repo.first_parent(pr) != base:
        yield Finding("materialized", where, "pr is not one commit on top of base")
    commits = {oid for oid, kind in objects.items() if kind == "commit"}
    history = repo.ancestors(base)
    later = sorted(commits - history - {pr})
    if later:
        yield Finding("materialized", where, f"holds {len(later)} commit(s) outside the base history, e.g. {later[0]}")
    for fx in fixtures:
        for sha in sorted({fx.answer.head, *(d.fix for d in fx.answer.defects or ())} & (commits - history)):
            yield Finding("materialized", where, f"holds {sha}, the change or a fix of fixture {fx.id}")
    # Every commit the source repository knows must be an ancestor of the base there too: nothing newer.
    for name, source in sorted(repos.items()):
        known = [c for c in sorted(commits) if source.expand(c) == c]
        if not known:
            continue
        allowed = ancestors.setdefault((name, base), source.ancestors(base) if source.expand(base) == base else set())
        newer = [c for c in known if c not in allowed]
        if newer:
            yield Finding(
                "materialized",
                where,
                f"holds {len(newer)} commit(s) of {name} that are not ancestors of the base, e.g. {newer[0]}",
            )
    yield from _pr_tree(repo, where, pr, base, fixtures)


def _fsck(repo: Repo, where: str) -> Iterator[Finding]:
    """``git fsck --strict`` must pass; objects copied verbatim from old upstream history that fail only
    the strict format rules (e.g. zero-padded file modes from 2010) are a warning, not a leak."""
    problems = repo.fsck(strict=True)
    if not problems:
        return
    loose = repo.fsck(strict=False)
    named = {m.group(1) for p in problems if (m := re.search(r"\b([0-9a-f]{40})\b", p))}
    base = repo.refs().get("refs/heads/base")
    if loose or not named or base is None or not named <= repo.objects_of(base):
        yield Finding("materialized", where, f"git fsck --strict: {(loose or problems)[0]}")
        return
    kinds = sorted({p.rsplit(": ", 2)[-2] if p.count(": ") >= 2 else p for p in problems})
    yield Finding(
        "materialized",
        where,
        f"{len(named)} object(s) of the copied base history fail only strict "
        f"format rules ({', '.join(kinds)}); plain git fsck passes",
        "warning",
    )


def _pr_tree(repo: Repo, where: str, pr: str, base: str, fixtures: list[_Fixture]) -> Iterator[Finding]:
    """When the fixture can be told (its base, or its date for a squashed base), pr must show its visible files."""
    when = iso(repo.committer_date(pr))
    mine = [fx for fx in fixtures if fx.answer.base == base] or [fx for fx in fixtures if fx.answer.head_date == when]
    if len(mine) != 1:
        return
    fx = mine[0]
    for vf in fx.visible.files:
        data = repo.blob(pr, vf.path)
        if vf.status == "deleted":
            if data is not None:
                yield Finding("materialized", where, f"{vf.path} is deleted by {fx.id} but present on pr")
        elif vf.after is not None and vf.encoding is not None and data != vf.after.encode(vf.encoding):
            yield Finding("materialized", where, f"{vf.path} on pr is not the visible 'after' of {fx.id}")


# -- the audit -----------------------------------------------------------------------------------------


def audit(out: Path, config: Config, repos: Iterable[RepoSpec] = (), materialized: Iterable[Path] = ()) -> AuditReport:
    """Run every check on the output at ``out``; the report says what failed and what was checked.

    ``repos`` are the mined repositories, each a path or a ``(name, path)`` pair naming the manifest's
    entry it is (needed only when one holds another's history, as a fork mined beside its origin)."""
    report = AuditReport()
    manifest, fixtures = _load(out, report)
    sources = mined_repositories(manifest, list(repos))
    checked_paths = [Path(p) for p in materialized]
    for path in checked_paths:
        Repo(path)  # a bad path is reported before any work
    commits: dict[str, list[str]] = {name: repo.all_commits() for name, repo in sources.items()}
    every_commit = sorted({c for cs in commits.values() for c in cs})
    marker = _marker(config)
    cutoffs = _cutoffs(manifest)
    patch_ids: dict[str, str] = {}
    for name, source in sorted(sources.items()):
        mine = [fx for fx in fixtures if fx.answer.repository == name]
        by_head = source.commit_patch_ids(fx.answer.head for fx in mine)
        patch_ids.update({fx.id: by_head[fx.answer.head] for fx in mine if fx.answer.head in by_head})
    for fx in fixtures:
        repo = sources.get(fx.answer.repository)
        report.findings += _message_leaks(fx, every_commit if sources else None)
        original = repo.message(fx.answer.head) if repo is not None and fx.visible.title else None
        found = list(_redaction(fx, original, config.strip.trailer_keys))
        report.fragments.update(f.detail.split(":", 1)[0] for f in found if f.check == "fragment")
        report.findings += found
        added = (
            _added(repo.patch(fx.answer.base, fx.answer.head).decode("utf-8", "surrogateescape"))
            if repo is not None
            else _added(fx.visible.diff)
        )
        if sources:
            report.findings += _sha_leaks(fx, every_commit, added)
        report.findings += _oracle_comments(fx, added, marker)
        report.findings += _diff_matches_files(fx)
        report.findings += _defect_lines(fx, added)
        report.findings += _fresh(fx, cutoffs)
        report.checked["visible_files"] += len(fx.visible.files)
        report.checked["defects"] += len(fx.answer.defects or ())
        if repo is None:
            report.skipped |= {"sha", "contents", "head-date", "patch-id families"}
            report.without_repo.add(fx.answer.repository)
            continue
        report.findings += _contents(fx, repo, added)
        report.checked["contents"] += 1
        if iso(repo.committer_date(fx.answer.head)) != fx.answer.head_date:
            report.findings.append(
                Finding("head-date", fx.id, f"head_date {fx.answer.head_date} is not the change's committer date")
            )
    family = list(_families(fixtures, patch_ids))
    report.findings += family
    report.checked["families"] = len({fx.answer.head for fx in fixtures})
    ancestors: dict[tuple[str, str], set[str]] = {}
    for path in checked_paths:
        report.findings += _materialized(path, fixtures, sources, ancestors)
        report.checked["materialized"] += 1
    report.checked["repositories"] = len(sources)
    return report


def to_json(report: AuditReport) -> str:
    return json.dumps(report.to_json(), indent=2, sort_keys=True)
