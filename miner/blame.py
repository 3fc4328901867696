"""Stage 2: blame what each fix changed back to the commit that introduced it (SZZ).

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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from miner.classify import has_generated_marker, is_bot, path_kind, reapplies
from miner.config import TIERS, Config, Tier
from miner.errors import MissingObjectError
from miner.git import BlameHit
from miner.lexer import code_lines
from miner.records import Candidate, CommitMeta, Defect, Evidence, FileDiff, FixCommit, Label, iso


class History(Protocol):
    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]: ...
    def blob(self, sha: str, path: str) -> bytes | None: ...
    def is_cosmetic(self, sha: str) -> bool: ...
    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...
    def from_scratch(self, sha: str, path: str, lines: Iterable[int]) -> set[int]: ...
    def same_lines(self, new: str, old: str, path: str, lines: Iterable[int]) -> dict[int, int]: ...


@dataclass(frozen=True)
class Traced:
    """One line of the fix, and the commit blame led it to."""

    hit: BlameHit
    added_only: bool
    looked_through: tuple[str, ...]


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
    prior = {hit.sha for path in sorted(by_path)
             for hit in history.blame(intro, path, by_path[path], ignore=(intro,)) if hit.sha != intro}
    return tuple(sorted(prior))


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _blame_through_cosmetic(history: History, rev: str, path: str, lines: list[int],
                            hops: int) -> tuple[list[BlameHit], tuple[str, ...]]:
    hits = history.blame(rev, path, lines)
    ignored: set[str] = set()
    for _ in range(hops):
        cosmetic = {h.sha for h in hits if h.sha not in ignored and history.is_cosmetic(h.sha)}
        if not cosmetic:
            break
        ignored |= cosmetic
        hits = history.blame(rev, path, lines, ignore=ignored)
    return hits, tuple(sorted(ignored))


def _insertion_points(insertions: list[tuple[str, str, list[int]]]) -> list[tuple[str, list[int]]]:
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


def trace(fix: FixCommit, diffs: list[FileDiff], history: History, config: Config,
          skipped: Counter[str]) -> list[Traced]:
    """Blame the fix's removed code lines (or, failing any, its insertion points) at its parent."""
    parent = fix.meta.parents[0]
    removed: list[tuple[str, list[int]]] = []
    insertions: list[tuple[str, str, list[int]]] = []  # only needed when no code line was removed
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
        text = _text(data)
        if diff.removed:  # lexing stops at the last removed line: most of a large file is never read
            code = code_lines(diff.old_path, text, max(n for n, _ in diff.removed))
            lines = [n for n, _ in diff.removed if n in code]
            if len(lines) < len(diff.removed):
                skipped["fix_lines_blank_or_comment"] += len(diff.removed) - len(lines)
            if lines:
                removed.append((diff.old_path, lines))
                continue
        if diff.insertions:  # nothing but insertions, or only blank and comment lines removed
            insertions.append((diff.old_path, text, diff.insertions))
    targets, added_only = (removed, False) if removed else (_insertion_points(insertions), True)
    traced: list[Traced] = []
    for path, lines in targets:
        hits, through = _blame_through_cosmetic(history, parent, path, lines, config.labels.max_cosmetic_hops)
        traced += [Traced(hit, added_only, through) for hit in hits]
    return traced


def through_relands(traced: list[Traced], lookup: Callable[[str], CommitMeta | None], config: Config,
                    history: History) -> tuple[list[Traced], set[str], set[str]]:
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
            t = Traced(BlameHit(final_line=t.hit.final_line, sha=original, orig_path=t.hit.orig_path, orig_line=line),
                       t.added_only, tuple(sorted({*t.looked_through, t.hit.sha})))
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


def _defects(fix: FixCommit, intro: str, traced: list[Traced], evidence: Evidence) -> tuple[Defect, ...]:
    by_path: dict[str, list[int]] = {}
    for t in traced:
        if t.hit.sha == intro:
            by_path.setdefault(t.hit.orig_path, []).append(t.hit.orig_line)
    defects: list[Defect] = []
    for path in sorted(by_path):
        lines = sorted(set(by_path[path]))
        start = prev = lines[0]
        for line in lines[1:] + [None]:  # type: ignore[list-item]
            if line is not None and line == prev + 1:
                prev = line
                continue
            defects.append(Defect(path=path, line_start=start, line_end=prev, fix=fix.meta.sha,
                                  fix_date=iso(fix.meta.committed), summary=fix.meta.subject, evidence=evidence))
            if line is not None:
                start = prev = line
    return tuple(defects)


def decide(fix: FixCommit, traced: list[Traced], lookup: Callable[[str], CommitMeta | None],
           config: Config, history: History) -> list[Label]:
    """Turn what blame found for one fix into labels: one per introducing commit, or a drop."""
    traced, relands, reapplied = through_relands(traced, lookup, config, history)
    counts = Counter(t.hit.sha for t in traced)
    rejected = {sha: _reject(sha, lookup(sha), config, history) for sha in counts}
    candidates = tuple(Candidate(sha=sha, lines=n, rejected=rejected[sha])
                       for sha, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
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

    def label(intro: str, link: str, tier: Tier, reasons: tuple[str, ...] = (), lines_authored: int | None = None,
              prior: tuple[str, ...] = ()) -> Label:
        if intro in reapplied:
            reasons += ("reapplied",)
        evidence = Evidence(link=link, tier=tier, lines_blamed=total, lines_agreeing=counts[intro],  # type: ignore[arg-type]
                            candidates=candidates, looked_through=through, age_days=_age_days(intro),
                            lines_authored=lines_authored, prior=prior, reasons=reasons)
        return Label(fix=fix.meta.sha, intro=intro, tier=tier, defects=_defects(fix, intro, traced, evidence),
                     blamed=blamed)

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
        prior = prior_authors(sha, traced, history)
        window = labels.recent_carry_days * 86400
        if any(_time(p) >= _time(sha) - window for p in prior):
            return [label(sha, "blame", "plurality", ("unanimous", "rewrote", "recent_prior"), 0, prior)]
        return [label(sha, "blame", "blame", ("unanimous", "rewrote", "old_prior"), 0, prior)]
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


def tier_allowed(tier: Tier, min_tier: Tier) -> bool:
    return TIERS.index(tier) <= TIERS.index(min_tier)


def label_fixes(fixes: Iterable[tuple[FixCommit, list[FileDiff]]], history: History,
                lookup: Callable[[str], CommitMeta | None], config: Config,
                dropped: Counter[str]) -> Iterator[Label]:
    """Stage contract: (fix, its diff) in, labels out; every fix yields at least one label."""
    for fix, diffs in fixes:
        if not fix.meta.parents:
            dropped["fix_is_root"] += 1
            continue
        traced = trace(fix, diffs, history, config, dropped)
        for lab in decide(fix, traced, lookup, config, history):
            if lab.dropped:
                dropped[lab.dropped] += 1
            yield lab


def age_days(earlier: dt.datetime, later: dt.datetime) -> int:
    return int((later - earlier).total_seconds() // 86400)
