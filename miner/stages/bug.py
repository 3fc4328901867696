"""The bug stage: which introducing commits that blame found become bug fixtures, and where their
defects are.

A label names an introducing commit only at some tier of evidence; the commit becomes a bug
candidate when the label clears ``labels.min_tier`` and the commit lies in the build's window,
is not too large and has UTF-8 paths. Each defect is then cut to the lines the change itself
added. Every refusal is counted (``dropped["bug"]`` in the manifest).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterable

from miner.core.config import Config
from miner.core.errors import MissingObjectError
from miner.core.records import CommitMeta, Defect, Label
from miner.git import Repo, runs
from miner.stages.blame import tier_allowed
from miner.stages.fixture import added_lines


def bug_heads(
    labels: Iterable[Label],
    lookup: Callable[[str], CommitMeta | None],
    config: Config,
    in_window: Callable[[dt.datetime], bool],
    dropped: Counter[str],
) -> dict[str, tuple[Defect, ...]]:
    """Introducing commit -> its defects, from every label that clears the tier bar and whose
    introducing commit is readable, in the window, small enough and named in UTF-8."""
    heads: dict[str, list[Defect]] = {}
    for lab in labels:
        if lab.intro is None or lab.tier is None:
            continue
        if not tier_allowed(lab.tier, config.labels.min_tier):
            dropped[f"below_min_tier_{lab.tier}"] += 1
            continue
        meta = lookup(lab.intro)
        if meta is None:
            dropped["intro_unreadable"] += 1
            continue
        if not in_window(meta.committed):
            dropped["outside_window"] += 1
            continue
        if meta.changed_lines > config.labels.max_intro_changed_lines:
            dropped["intro_too_large"] += 1
            continue
        if not meta.paths_are_utf8:
            dropped["non_utf8_path"] += 1
            continue
        heads.setdefault(lab.intro, []).extend(lab.defects)
    return {sha: tuple(sorted(d, key=lambda d: (d.path, d.line_start, d.fix))) for sha, d in heads.items()}


def added_in(repo: Repo) -> Callable[[str], dict[str, set[int]]]:
    """The lines a change added, by path, as its own diff against its first parent shows them."""
    return lambda sha: added_lines(repo.patch(repo.first_parent(sha), sha))


def on_added_lines(
    added_of: Callable[[str], dict[str, set[int]]], bugs: dict[str, tuple[Defect, ...]], dropped: Counter[str]
) -> dict[str, tuple[Defect, ...]]:
    """Each defect cut to the lines the change added, as its own diff shows them (``added_of``, e.g.
    ``added_in(repo)``: the diff a reviewer sees): blame may give a change a line its diff shows as
    context. A fixture left with no line is dropped (``defect_lines_not_added``)."""
    kept: dict[str, tuple[Defect, ...]] = {}
    for sha, defects in sorted(bugs.items()):
        try:
            added = added_of(sha)
        except MissingObjectError:
            kept[sha] = defects  # the fixture stage counts what it cannot read
            continue
        cut: list[Defect] = []
        for d in defects:
            lines = sorted(n for n in range(d.line_start, d.line_end + 1) if n in added.get(d.path, set()))
            cut += [d.model_copy(update={"line_start": a, "line_end": b}) for a, b in runs(lines)] if lines else []
        if cut:
            kept[sha] = tuple(cut)
        else:
            dropped["defect_lines_not_added"] += 1
    return kept
