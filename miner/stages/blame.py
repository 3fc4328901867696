"""Stage 3: blame what each fix changed back to the commit that introduced it (SZZ).

For every fix, the code lines it removed or changed are blamed at its first parent, skipping
blank and comment-only lines (a real lexer decides), tests, docs, vendored and generated
files. Commits that only changed whitespace are looked through (``--ignore-rev``), so a
reformat never takes the blame; a revert of a revert is looked through to the change it
re-applied. A fix that only adds lines points at the first code line after each insertion: a
weaker, heuristic link.

``trace`` and ``decide`` talk to git only through the small ``History`` protocol; ``decide``
turns what blame found into a ``Label`` with its evidence and tier.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from miner.core.classify import has_generated_marker, is_bot, path_kind, reapplies, reverted_shas
from miner.core.config import TIERS, Config, Tier
from miner.core.errors import MissingObjectError
from miner.core.lexer import code_lines
from miner.core.records import Candidate, CommitMeta, Defect, Evidence, FileDiff, FixCommit, Label, iso
from miner.git import BlameHit, runs, squeeze


class History(Protocol):
    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]: ...
    def blob(self, sha: str, path: str) -> bytes | None: ...
    def is_cosmetic(self, sha: str) -> bool: ...
    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...
    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]: ...
    def same_lines(self, new: str, old: str, path: str, lines: Iterable[int]) -> dict[int, int]: ...
    def removed_text(self, sha: str) -> frozenset[str]: ...
    def removed_lines(self, sha: str) -> dict[str, tuple[str, ...]]: ...
    def occurrences(self, revs: Iterable[str], words: Iterable[str]) -> dict[str, Counter[str]]: ...


@dataclass(frozen=True)
class FixText:
    """The code lines a fix removed and added (source files only), as text."""

    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    added_at: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (path at the fix's parent, lines it added there)

    @staticmethod
    def of(diffs: list[FileDiff], config: Config) -> FixText:
        files = [
            d
            for d in diffs
            if not d.binary and not d.link and path_kind(d.new_path or d.old_path or "", config.paths) == "source"
        ]
        return FixText(
            removed=tuple(t for d in files for _, t in d.removed),
            added=tuple(t for d in files for _, t in d.added),
            added_at=tuple((d.old_path, tuple(t for _, t in d.added)) for d in files if d.old_path),
        )

    def added_in(self, path: str) -> tuple[str, ...]:
        return next((lines for p, lines in self.added_at if p == path), ())


_STRINGS_AND_COMMENTS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`[^`]*`|//.*$|#.*$|/\*.*?\*/", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def identifiers(lines: Iterable[str], keywords: Iterable[str]) -> set[str]:
    """The names a few lines of code use, outside strings and comments, less the language's own words."""
    words = {w for line in lines for w in _WORD.findall(_STRINGS_AND_COMMENTS.sub(" ", line))}
    return words - set(keywords)


def victim(fix: FixCommit, intro: str, text: FixText, config: Config, history: History) -> tuple[str, ...]:
    """The names the fix takes off its lines that nothing else in the repository uses any more at the
    fix's parent, though something else did when ``intro`` was made: a function, option or constant
    renamed or removed after ``intro``, leaving its lines stale. Those lines were right when
    ``intro`` wrote them; the fix adapts them to a later change (a "victim line")."""
    keywords = config.labels.keywords
    removed = Counter(w for line in text.removed for w in _words(line, keywords))
    gone = set(removed) - identifiers(text.added, keywords)
    if not gone:
        return ()
    parent = fix.meta.parents[0]
    # A name the fix's own files use, at its parent, more often than the fix removed it is still used
    # elsewhere: no tree need be searched for it. Most names are (and the words of a comment block the
    # fix removed, which are many and common, and slow to count in a whole tree).
    gone = _still_used(gone, removed, parent, text, history)
    if not gone:
        return ()
    # The fix's parent first: most names are still used elsewhere there, and then the tree of
    # ``intro`` need not be searched at all (each search reads a whole tree).
    at_parent = history.occurrences((parent,), gone)[parent]
    stale = {w for w in gone if at_parent[w] <= removed[w]}
    if not stale:
        return ()
    at_intro = history.occurrences((intro,), stale)[intro]
    return tuple(sorted(w for w in stale if removed[w] < at_intro[w]))


def _still_used(names: set[str], removed: Counter[str], parent: str, text: FixText, history: History) -> set[str]:
    """``names`` less those the fix's files at ``parent`` hold more often than the fix removed them.
    The count is a lower bound of what ``History.occurrences`` counts in the tree (``git grep -I -o -w``:
    a name as a whole word, anywhere in a text file), so it never keeps a name the search would drop."""
    seen: Counter[bytes] = Counter()
    for path, _ in text.added_at:
        data = history.blob(parent, path)
        if data is not None and b"\0" not in data[:8000]:  # git grep -I passes over binary files as git tells them
            seen.update(_GREP_WORD.findall(data))
    return {name for name in names if seen[name.encode()] <= removed[name]}


_GREP_WORD = re.compile(rb"[A-Za-z0-9_]+")  # what git grep -w takes for a word's edges: letters, digits, _


def _words(line: str, keywords: Iterable[str]) -> list[str]:
    skip = set(keywords)
    return [w for w in _WORD.findall(_STRINGS_AND_COMMENTS.sub(" ", line)) if w not in skip]


@dataclass(frozen=True)
class Traced:
    """One line of the fix, and the commit blame led it to."""

    hit: BlameHit
    added_only: bool
    looked_through: tuple[str, ...]
    path: str = ""  # the file as the fix's parent has it


def authored(intro: str, traced: list[Traced], history: History) -> int:
    """How many of the lines blamed on ``intro`` it added from scratch (a pure insertion or a new
    file), rather than by rewriting lines that were there before."""
    by_path: dict[str, list[int]] = {}
    for t in traced:
        if t.hit.sha == intro:
            by_path.setdefault(t.hit.orig_path, []).append(t.hit.orig_line)
    return sum(len(history.from_scratch(intro, path, by_path[path])) for path in sorted(by_path))


def prior_authors(intro: str, traced: list[Traced], history: History) -> tuple[str, ...]:
    """Who wrote the lines ``intro`` rewrote: blame them once more, where ``intro`` left them, looking
    past it (``--ignore-rev``). Starting at ``intro`` rather than at the fix gives the same answer (the
    lines did not change in between) without walking that stretch of history again."""
    by_path: dict[str, list[int]] = {}
    for t in traced:
        if t.hit.sha == intro:
            by_path.setdefault(t.hit.orig_path, []).append(t.hit.orig_line)
    prior = {
        hit.sha
        for path in sorted(by_path)
        for hit in history.blame(intro, path, by_path[path], ignore=(intro,))
        if hit.sha != intro
    }
    return tuple(sorted(prior))


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _blame_through_cosmetic(
    history: History, rev: str, path: str, lines: list[int], hops: int, see_through: Callable[[str], bool]
) -> tuple[list[BlameHit], tuple[str, ...]]:
    """Blame, looking past commits that wrote no code of their own (``see_through``: whitespace-only
    commits and plain reverts, whose lines belong to whoever wrote them before)."""
    hits = history.blame(rev, path, lines)
    ignored: set[str] = set()
    for _ in range(hops):
        cosmetic = {h.sha for h in hits if h.sha not in ignored and see_through(h.sha)}
        if not cosmetic:
            break
        ignored |= cosmetic
        hits = history.blame(rev, path, lines, ignore=ignored)
    return hits, tuple(sorted(ignored))


def _insertion_points(insertions: list[tuple[str, str, tuple[int, ...]]]) -> list[tuple[str, list[int]]]:
    """For a fix that removed no code: the first code line after each insertion (or the last before it)."""
    inserted: list[tuple[str, list[int]]] = []
    for path, text, at_lines in insertions:
        code = sorted(code_lines(path, text))
        points: set[int] = set()
        for at in at_lines:
            i = bisect.bisect_left(code, at)
            if i < len(code):
                points.add(code[i])
            elif code:
                points.add(code[-1])
        if points:
            inserted.append((path, sorted(points)))
    return inserted


def _source_files(
    parent: str, diffs: list[FileDiff], history: History, config: Config, skipped: Counter[str]
) -> Iterator[tuple[str, FileDiff, str]]:
    """The fix's files that blame may read (source code at the fix's parent, not generated): the path
    there, the diff, and the text there; ``skipped`` counts the lines of the others by why."""
    for diff in diffs:
        if diff.old_path is None or diff.binary:
            continue
        if diff.link:
            skipped["fix_lines_in_link"] += 1
            continue
        kind = path_kind(diff.old_path, config.paths)
        if kind != "source":
            skipped[f"fix_lines_in_{kind}"] += 1
            continue
        try:
            data = history.blob(parent, diff.old_path)
        except MissingObjectError:
            skipped["fix_file_missing_object"] += 1
            continue
        if data is None:
            continue
        if has_generated_marker(data, config.paths):
            skipped["fix_lines_in_generated"] += 1
            continue
        yield diff.old_path, diff, _text(data)


def beside(fix: FixCommit, diffs: list[FileDiff], history: History, config: Config) -> list[BlameHit]:
    """Blame, at the fix's parent, the code lines just around what it changed: up to
    ``labels.disturbed_lines`` lines above and below each run of lines it removed and each place it
    inserted lines. A commit that rewrote one of them after the label's commit may be what made the
    fixed lines wrong (see ``decide``)."""
    k = config.labels.disturbed_lines
    hits: list[BlameHit] = []
    if not k:
        return hits
    for path, diff, text in _source_files(fix.meta.parents[0], diffs, history, config, Counter()):
        changed = sorted({n for n, _ in diff.removed})
        near: set[int] = set()
        for start, end in runs(changed) if changed else ():
            near.update(range(start - k, start), range(end + 1, end + k + 1))
        for at in diff.insertions:  # the old line the inserted block stands before
            near.update(range(at - k, at + k))
        near.difference_update(changed)
        if near:
            code = code_lines(path, text, max(near))
            lines = sorted(n for n in near if n in code)
            if lines:
                hits += history.blame(fix.meta.parents[0], path, lines)
    return hits


def trace(
    fix: FixCommit,
    diffs: list[FileDiff],
    history: History,
    config: Config,
    skipped: Counter[str],
    see_through: Callable[[str], bool] | None = None,
) -> list[Traced]:
    """Blame the fix's removed code lines (or, failing any, its insertion points) at its parent."""
    parent = fix.meta.parents[0]
    removed: list[tuple[str, list[int]]] = []
    insertions: list[tuple[str, str, tuple[int, ...]]] = []  # only needed when no code line was removed
    for path, diff, text in _source_files(parent, diffs, history, config, skipped):
        if diff.removed:  # lexing stops at the last removed line: most of a large file is never read
            code = code_lines(path, text, max(n for n, _ in diff.removed))
            lines = [n for n, _ in diff.removed if n in code]
            if len(lines) < len(diff.removed):
                skipped["fix_lines_blank_or_comment"] += len(diff.removed) - len(lines)
            if lines:
                removed.append((path, lines))
                continue
        if diff.insertions:  # nothing but insertions, or only blank and comment lines removed
            insertions.append((path, text, diff.insertions))
    targets, added_only = (removed, False) if removed else (_insertion_points(insertions), True)
    traced: list[Traced] = []
    for path, lines in targets:
        hits, through = _blame_through_cosmetic(
            history, parent, path, lines, config.labels.max_cosmetic_hops, see_through or history.is_cosmetic
        )
        traced += [Traced(hit, added_only, through, path) for hit in hits]
    return traced


def through_relands(
    traced: list[Traced], lookup: Callable[[str], CommitMeta | None], config: Config, history: History
) -> tuple[list[Traced], set[str], set[str]]:
    """Lines blame gave to a revert of a revert go to the commit it re-applied, wherever that
    commit left them unchanged: the re-land only brought its code back.

    Returns the lines, the re-lands blame reached, and the originals that took lines from them.
    """
    relands: dict[str, str] = {}
    for sha in sorted({t.hit.sha for t in traced}):
        meta = lookup(sha)
        original = reapplies(meta, lookup, config.fixes) if meta else None
        if original:
            relands[sha] = original
    if not relands:
        return traced, set(), set()
    asked: dict[tuple[str, str], list[int]] = {}
    for t in traced:
        if t.hit.sha in relands:
            asked.setdefault((t.hit.sha, t.hit.orig_path), []).append(t.hit.orig_line)
    moved = {key: history.same_lines(key[0], relands[key[0]], key[1], lines) for key, lines in sorted(asked.items())}
    out: list[Traced] = []
    took: set[str] = set()
    for t in traced:
        line = moved.get((t.hit.sha, t.hit.orig_path), {}).get(t.hit.orig_line)
        if line is not None:
            original = relands[t.hit.sha]
            took.add(original)
            t = Traced(
                BlameHit(final_line=t.hit.final_line, sha=original, orig_path=t.hit.orig_path, orig_line=line),
                t.added_only,
                tuple(sorted({*t.looked_through, t.hit.sha})),
                t.path,
            )
        out.append(t)
    return out, set(relands), took


def _reject(sha: str, meta: CommitMeta | None, config: Config, history: History) -> str | None:
    """Why a commit blame reached cannot be the one that introduced a defect, if it cannot."""
    if meta is None:
        return "outside_walk"
    if not meta.parents:
        return "initial_import"
    if meta.changed_lines > config.labels.import_lines:
        return "import"
    if is_bot(meta, config):
        return "bot_author"
    if history.is_cosmetic(sha):
        return "cosmetic"
    return None


def trivial(text: str) -> bool:
    """A line too plain to say who wrote it (``}``, ``end``, ``else {``): such text turns up anywhere."""
    return len(text) < 4 or not any(c.isalpha() for c in text)


def carried(intro: str, lines: Iterable[tuple[str, int]], history: History) -> set[tuple[str, int]]:
    """Of ``lines`` (path, line) as ``intro`` left them, those whose text ``intro`` also removed,
    somewhere: a line it moved (within a file or from another) or only re-indented. Blame gives
    such a line to ``intro``, but its defect, if any, was there before. Plain lines are never
    counted as carried."""
    removed = history.removed_text(intro)
    by_path: dict[str, set[int]] = {}
    for path, line in lines:
        by_path.setdefault(path, set()).add(line)
    found: set[tuple[str, int]] = set()
    for path in sorted(by_path):
        data = history.blob(intro, path)
        if data is None or not removed:
            continue
        text = _text(data).split("\n")
        for line in by_path[path]:
            body = squeeze(text[line - 1]) if 0 < line <= len(text) else ""
            if not trivial(body) and body in removed:
                found.add((path, line))
    return found


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _closest(line: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``line`` (at least half alike), or None."""
    best, score = None, 0.5
    for candidate in candidates:
        ratio = SequenceMatcher(None, line.strip(), candidate.strip(), autojunk=False).ratio()
        if ratio > score or (ratio == score and best is None):
            best, score = candidate, ratio
    return best


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return list(SequenceMatcher(None, a, b, autojunk=False).get_opcodes())


def inherited(intro: str, mine: list[Traced], text: FixText, history: History) -> bool:
    """Whether, on every line blame gave to ``intro``, the fix changed only words ``intro`` did not
    write: ``intro`` rewrote the line (``if x > 0:`` into ``if x > 0 and y:``) but kept the part the fix
    repairs (``x > 0`` into ``x >= 0``), so the defect is older than ``intro``. Each line is paired
    with the most alike line ``intro`` replaced and the most alike line the fix put in its place;
    without both, the answer is no."""
    removed = history.removed_lines(intro)
    lines = _texts(mine, intro, history)
    if not mine:
        return False
    for t, now in zip(mine, lines):
        before = _closest(now, removed.get(t.hit.orig_path, ()))
        after = _closest(now, text.added_in(t.path))
        if before is None or after is None:
            return False
        old, mid, new = (_TOKEN.findall(x) for x in (before, now, after))
        written: set[int] = set()  # where intro changed the line: words it wrote, and the places it deleted
        for op, _, _, j1, j2 in _opcodes(old, mid):
            written.update(range(j1, j2) if op in ("replace", "insert") else (j1 - 1, j1) if op == "delete" else ())
        touched: set[int] = set()
        for op, i1, i2, _, _ in _opcodes(mid, new):
            if op in ("replace", "delete"):
                touched.update(range(i1, i2))
            elif op == "insert":
                touched.update((i1 - 1, i1))
        if written & touched or not touched:
            return False
    return True


def restores(text: FixText, intro: str, history: History) -> bool:
    """Whether the fix puts back text ``intro`` took out: every code line the fix added is a line
    ``intro`` removed. The strongest sign that ``intro`` is what the fix repairs."""
    code = {squeeze(t) for t in text.added} - {""}
    code = {t for t in code if not trivial(t)}
    return bool(code) and code <= history.removed_text(intro)


def _demoted(tier: Tier, floor: Tier) -> Tier:
    return tier if TIERS.index(tier) >= TIERS.index(floor) else floor


def _same_subject(a: CommitMeta | None, b: CommitMeta) -> bool:
    return a is not None and squeeze(a.subject).lower() == squeeze(b.subject).lower()


def _spans(traced: list[Traced]) -> list[tuple[str, int, int]]:
    """The traced lines as ranges: (path, first line, last line), by path and line."""
    by_path: dict[str, set[int]] = {}
    for t in traced:
        by_path.setdefault(t.hit.orig_path, set()).add(t.hit.orig_line)
    spans: list[tuple[str, int, int]] = []
    for path in sorted(by_path):
        for start, end in runs(sorted(by_path[path])):
            spans.append((path, start, end))
    return spans


def _defects(fix: FixCommit, traced: list[Traced], evidence: Evidence) -> tuple[Defect, ...]:
    return tuple(
        Defect(
            path=path,
            line_start=start,
            line_end=end,
            fix=fix.meta.sha,
            fix_date=iso(fix.meta.committed),
            summary=fix.meta.subject,
            evidence=evidence,
        )
        for path, start, end in _spans(traced)
    )


def decide(
    fix: FixCommit,
    traced: list[Traced],
    lookup: Callable[[str], CommitMeta | None],
    config: Config,
    history: History,
    text: FixText = FixText(),
    around: Callable[[], list[BlameHit]] | None = None,
) -> list[Label]:
    """Turn what blame found for one fix into labels: one per introducing commit, or a drop.

    ``text`` holds the fix's own code lines: a fix that restores what the candidate replaced is
    strong evidence for it; one that takes off its lines a name the rest of the repository has
    since dropped adapts a victim line to a later change. ``around`` gives blame's answer for the
    code lines beside the fixed ones (``beside``), asked only of labels that would otherwise be `blame`.
    """
    traced, relands, reapplied = through_relands(traced, lookup, config, history)
    counts = Counter(t.hit.sha for t in traced)
    rejected = {sha: _reject(sha, lookup(sha), config, history) for sha in counts}
    candidates = tuple(
        Candidate(sha=sha, lines=n, rejected=rejected[sha]) for sha, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    blamed = tuple(sorted(set(counts) | set(fix.named) | relands))
    through = tuple(sorted({s for t in traced for s in t.looked_through}))
    total = len(traced)
    labels = config.labels

    def _time(sha: str) -> int:
        meta = lookup(sha)
        return meta.committer_time if meta else 0

    def _age_days(sha: str) -> int:
        return (fix.meta.committer_time - _time(sha)) // 86400

    def _older_than(sha: str, days: int) -> bool:
        return fix.meta.committer_time - _time(sha) > days * 86400

    def _disturbed(intro: str) -> bool:
        # A commit more than a day newer than ``intro`` rewrote a code line right beside the fixed ones:
        # it may be what made them wrong (the fix edits a victim line), and blame cannot tell. Lines it
        # only added there (a log call, a new branch) say much less, and do not count.
        if around is None:
            return False
        after = _time(intro) + 86400
        for hit in sorted(around(), key=lambda h: (h.sha, h.orig_path, h.orig_line)):
            if hit.sha == intro or not after < _time(hit.sha) <= fix.meta.committer_time:
                continue
            if _reject(hit.sha, lookup(hit.sha), config, history) is None and not history.from_scratch(
                hit.sha, hit.orig_path, [hit.orig_line]
            ):
                return True
        return False

    def label(
        intro: str,
        link: str,
        tier: Tier,
        reasons: tuple[str, ...] = (),
        lines_authored: int | None = None,
        prior: tuple[str, ...] = (),
    ) -> Label:
        if _same_subject(lookup(intro), fix.meta):
            # The "fix" carries the change's own message: the same patch applied again, in reverse
            # or twice by mistake, not a repair.
            return Label(fix=fix.meta.sha, intro=None, tier=None, dropped="fix_repeats_change", blamed=blamed)
        if intro in reapplied:
            reasons += ("reapplied",)
        mine = [t for t in traced if t.hit.sha == intro]
        moved = carried(intro, ((t.hit.orig_path, t.hit.orig_line) for t in mine), history)
        kept = [t for t in mine if (t.hit.orig_path, t.hit.orig_line) not in moved]
        if moved and any(not trivial(squeeze(line)) for line in _texts(kept, intro, history)):
            reasons += ("moved_lines_left_out",)
        elif moved:  # every line it has of its own only moved or re-indented: the defect is older
            tier, reasons, kept = _demoted(tier, "weak"), reasons + ("carried",), mine
        if tier in ("explicit", "blame") and labels.victim_check:
            later = victim(fix, intro, text, config, history)
            if later:
                tier, reasons = "weak", reasons + ("victim",)
        if tier == "blame" and _disturbed(intro):
            tier, reasons = "plurality", reasons + ("disturbed",)
        spots = {(t.hit.orig_path, t.hit.orig_line) for t in kept}
        ranges = len(_spans(kept))
        if len(spots) > labels.max_defect_lines or ranges > labels.max_defect_ranges:
            tier, reasons = _demoted(tier, "diffuse"), reasons + ("diffuse",)
        evidence = Evidence(
            link=link,
            tier=tier,
            lines_blamed=total,
            lines_agreeing=counts[intro],
            candidates=candidates,
            looked_through=through,
            age_days=_age_days(intro),
            lines_authored=lines_authored,
            prior=prior,
            reasons=reasons,
            fix_reasons=fix.reasons,
        )
        return Label(fix=fix.meta.sha, intro=intro, tier=tier, defects=_defects(fix, kept, evidence), blamed=blamed)

    def drop(reason: str) -> list[Label]:
        return [Label(fix=fix.meta.sha, intro=None, tier=None, dropped=reason, blamed=blamed)]

    if fix.link in ("trailer", "revert"):
        made = [label(sha, fix.link, "explicit") for sha in fix.named if counts[sha] and not rejected.get(sha)]
        return made or drop("link_not_blamed")
    if not traced:
        return drop("no_code_lines")
    valid = [c for c in candidates if c.rejected is None]
    if not valid:
        return drop(candidates[0].rejected or "no_candidate")
    added_only = traced[0].added_only
    if len(valid) == 1 and len(valid) == len(candidates):
        sha = valid[0].sha
        if added_only:
            return [label(sha, "added-only", "heuristic", ("added_only",))]
        # A much older commit than the fix: often the victim line of a defect introduced elsewhere.
        if _older_than(sha, labels.max_blame_age_days):
            return [label(sha, "blame", "weak", ("unanimous", "old"))]
        # Unanimous and recent enough: is the evidence strong? Code the candidate wrote from scratch
        # is its own. A line it only rewrote may carry a defect from whoever wrote it before; when
        # that was shortly before, blame cannot tell which of the two the fix repairs.
        scratch = authored(sha, traced, history)
        if scratch:
            return [label(sha, "blame", "blame", ("unanimous", "authored"), scratch)]
        if restores(text, sha, history):
            return [label(sha, "blame", "blame", ("unanimous", "rewrote", "restores"), 0)]
        if inherited(sha, [t for t in traced if t.hit.sha == sha], text, history):
            # It rewrote the lines, but the words the fix changed were there before it.
            return [label(sha, "blame", "weak", ("unanimous", "rewrote", "inherited"), 0)]
        prior = prior_authors(sha, traced, history)
        window = labels.recent_carry_days * 86400
        # An initial or huge import, or a bot, could never have been the one: it does not compete.
        rivals = [p for p in prior if _reject(p, lookup(p), config, history) is None]
        if any(_time(p) >= _time(sha) - window for p in rivals):
            return [label(sha, "blame", "plurality", ("unanimous", "rewrote", "recent_prior"), 0, prior)]
        why = "old_prior" if rivals else "prior_not_candidate" if prior else "old_prior"
        return [label(sha, "blame", "blame", ("unanimous", "rewrote", why), 0, prior)]
    if added_only:
        return drop("added_only_ambiguous")
    if len(valid) > 1 and valid[0].lines == valid[1].lines:
        if not labels.break_ties_by_recency:
            return drop("ambiguous_candidates")
        tied = [c.sha for c in valid if c.lines == valid[0].lines]
        newest = max(tied, key=lambda sha: (_time(sha), sha))
        return [label(newest, "blame", "weak", ("tie", "newest"))]
    if _older_than(valid[0].sha, labels.max_blame_age_days):
        return [label(valid[0].sha, "blame", "weak", ("most_lines", "old"))]
    return [label(valid[0].sha, "blame", "plurality", ("most_lines",))]


def _texts(traced: list[Traced], sha: str, history: History) -> list[str]:
    """The text of each traced line as ``sha`` left it."""
    files: dict[str, list[str]] = {}
    out: list[str] = []
    for t in traced:
        if t.hit.orig_path not in files:
            data = history.blob(sha, t.hit.orig_path)
            files[t.hit.orig_path] = _text(data).split("\n") if data is not None else []
        text = files[t.hit.orig_path]
        out.append(text[t.hit.orig_line - 1] if 0 < t.hit.orig_line <= len(text) else "")
    return out


def tier_allowed(tier: Tier, min_tier: Tier) -> bool:
    return TIERS.index(tier) <= TIERS.index(min_tier)


def label_fixes(
    fixes: Iterable[tuple[FixCommit, list[FileDiff]]],
    history: History,
    lookup: Callable[[str], CommitMeta | None],
    config: Config,
    dropped: Counter[str],
) -> Iterator[Label]:
    """Stage contract: (fix, its diff) in, labels out; every fix yields at least one label."""
    for fix, diffs in fixes:
        if not fix.meta.parents:
            dropped["fix_is_root"] += 1
            continue
        see_through = _see_through(history, lookup, config)
        traced = trace(fix, diffs, history, config, dropped, see_through)
        around = functools.cache(functools.partial(beside, fix, diffs, history, config))
        for lab in decide(fix, traced, lookup, config, history, FixText.of(diffs, config), around):
            if lab.dropped:
                dropped[lab.dropped] += 1
            yield lab


def _see_through(history: History, lookup: Callable[[str], CommitMeta | None], config: Config) -> Callable[[str], bool]:
    """Commits blame looks past: whitespace-only ones, and plain reverts (the lines a revert put
    back belong to whoever wrote them before the reverted change; a revert of a revert is handled
    apart, by giving its lines to the change it re-applied)."""

    def see(sha: str) -> bool:
        if history.is_cosmetic(sha):
            return True
        meta = lookup(sha)
        return (
            meta is not None and bool(reverted_shas(meta.message, config.fixes)) and reapplies(meta, lookup, config.fixes) is None
        )

    return see


def age_days(earlier: dt.datetime, later: dt.datetime) -> int:
    return int((later - earlier).total_seconds() // 86400)
