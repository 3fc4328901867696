"""The labelling decision, on blame results written here (no git)."""

from __future__ import annotations

from collections.abc import Iterable

from miner.blame import Traced, decide
from miner.config import load_config
from miner.git import BlameHit
from miner.records import CommitMeta, FileStat, FixCommit

CONFIG = load_config()
A, B, ROOT, FIX = "a" * 40, "b" * 40, "c" * 40, "f" * 40


def meta(sha: str, parents: tuple[str, ...] = (ROOT,), lines: int = 10, author: str = "Ann",
         message: str = "Change things") -> CommitMeta:
    return CommitMeta(sha=sha, parents=parents, author_name=author, author_email="ann@example.com",
                      author_time=0, committer_time=0, message=message,
                      files=(FileStat(path="x.py", added=lines, removed=0),))


METAS = {A: meta(A), B: meta(B), ROOT: meta(ROOT, parents=()), "d" * 40: meta("d" * 40, author="dependabot[bot]")}


class NoCosmetic:
    def blame(self, rev: str, path: str, lines: Iterable[int], ignore: Iterable[str] = ()) -> list[BlameHit]:
        return []

    def blob(self, sha: str, path: str) -> bytes | None:
        return None

    def is_cosmetic(self, sha: str) -> bool:
        return False

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return True


def traced(*pairs: tuple[str, int], added_only: bool = False) -> list[Traced]:
    return [Traced(BlameHit(final_line=i, sha=sha, orig_path="x.py", orig_line=line), added_only, ())
            for i, (sha, line) in enumerate(pairs, 1)]


def fix(link: str = "keyword", named: tuple[str, ...] = ()) -> FixCommit:
    return FixCommit(meta=meta(FIX, parents=(A,), message="Fix it"), link=link, named=named)  # type: ignore[arg-type]


def run(f: FixCommit, t: list[Traced]):  # type: ignore[no-untyped-def]
    return decide(f, t, METAS.get, CONFIG, NoCosmetic())


def test_unanimous_blame_is_the_blame_tier_with_merged_line_ranges() -> None:
    (label,) = run(fix(), traced((A, 4), (A, 5), (A, 9)))
    assert (label.intro, label.tier) == (A, "blame")
    assert [(d.line_start, d.line_end) for d in label.defects] == [(4, 5), (9, 9)]
    assert label.defects[0].evidence.lines_agreeing == 3


def test_plurality_and_ties() -> None:
    (label,) = run(fix(), traced((A, 1), (A, 2), (B, 7)))
    assert (label.intro, label.tier) == (A, "plurality")
    assert [c.sha for c in label.defects[0].evidence.candidates] == [A, B]
    (tie,) = run(fix(), traced((A, 1), (B, 7)))  # a tie goes to the newer candidate, in the weak tier
    assert (tie.intro, tie.tier) == (B, "weak")
    strict = CONFIG.with_overrides(labels={"break_ties_by_recency": False})
    (tie,) = decide(fix(), traced((A, 1), (B, 7)), METAS.get, strict, NoCosmetic())
    assert tie.intro is None and tie.dropped == "ambiguous_candidates"


def test_a_much_older_candidate_is_the_weak_tier() -> None:
    year = 365 * 86400
    old = {**METAS, FIX: meta(FIX, parents=(A,))}
    late = FixCommit(meta=meta(FIX, parents=(A,), message="Fix it").model_copy(update={"committer_time": 3 * year}),
                     link="keyword")
    (label,) = decide(late, traced((A, 4), (A, 5)), old.get, CONFIG, NoCosmetic())
    assert (label.intro, label.tier) == (A, "weak")  # three years old: maybe a victim line
    soon = late.model_copy(update={"meta": late.meta.model_copy(update={"committer_time": year})})
    (label,) = decide(soon, traced((A, 4), (A, 5)), old.get, CONFIG, NoCosmetic())
    assert (label.intro, label.tier) == (A, "blame")


def test_initial_import_and_bots_are_never_candidates() -> None:
    (label,) = run(fix(), traced((ROOT, 1), (ROOT, 2)))
    assert label.intro is None and label.dropped == "initial_import"
    (label,) = run(fix(), traced(("d" * 40, 1)))
    assert label.dropped == "bot_author"
    (label,) = run(fix(), traced((ROOT, 1), (A, 3)))
    assert (label.intro, label.tier) == (A, "plurality")  # a rejected candidate lowers the tier


def test_explicit_link_needs_blame_to_agree() -> None:
    (label,) = run(fix("trailer", (B,)), traced((A, 1), (B, 2)))
    assert (label.intro, label.tier) == (B, "explicit")
    assert [(d.line_start, d.evidence.link) for d in label.defects] == [(2, "trailer")]
    (label,) = run(fix("revert", (B,)), traced((A, 1)))
    assert label.dropped == "link_not_blamed"
    assert set(label.blamed) == {A, B}  # still both kept out of the clean sample


def test_added_only_is_the_heuristic_tier() -> None:
    (label,) = run(fix(), traced((A, 12), added_only=True))
    assert (label.intro, label.tier, label.defects[0].evidence.link) == (A, "heuristic", "added-only")
    (label,) = run(fix(), traced((A, 12), (B, 30), added_only=True))
    assert label.dropped == "added_only_ambiguous"


def test_no_lines_no_label() -> None:
    (label,) = run(fix(), [])
    assert label.dropped == "no_code_lines"
