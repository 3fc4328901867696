"""End to end on every sample repository: the answers miner writes match the hand-written truth."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Sample, every_clean_config

from miner.commands.build import BuildOptions, build
from miner.core.config import TIERS, load_config

URL = re.compile(r"https?://|www\.")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
# ISO-8859-1 and UTF-8 name encodings, not tickets: they stay whole (cutting them left "as -1").
ISSUE = re.compile(r"(?<![\w&])#\d+\b|\bGH-\d+\b|\b(?!ISO-|UTF-)[A-Z]{2,}-\d+\b")


def answers(out: Path) -> dict[str, dict]:
    """head SHA -> answer, for every fixture of an output directory."""
    manifest = json.loads((out / "manifest.json").read_text())
    found = {}
    for entry in manifest["fixtures"]:
        answer = json.loads((out / entry["answer"]).read_text())
        assert answer["id"] == entry["id"] and answer["kind"] == entry["kind"]
        found[answer["head"]] = answer
    return found


def all_shas(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "rev-list", "--all"], capture_output=True, check=True, text=True)
    return out.stdout.split()


def test_every_truth_defect_yields_its_bug_fixture(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name, sample in samples.items():
        found = answers(full_build[name])
        for defect in sample.truth["defects"]:
            where = f"{name}: {defect['case']} (fix {defect['fix']})"
            answer = found.get(sample.sha(defect["introduced_by"]))
            assert answer is not None, f"{where}: no fixture for {defect['introduced_by']}"
            assert answer["kind"] == "bug", where
            mine = [d for d in answer["defects"] if d["fix"] == sample.sha(defect["fix"])]
            assert mine, f"{where}: fixture has no defect from this fix"
            assert {d["path"] for d in mine} == {defect["path"]}, where
            lines = sorted(n for d in mine for n in range(d["line_start"], d["line_end"] + 1))
            assert lines == sample.truth_lines(defect), where
            link = {d["evidence"]["link"] for d in mine}
            assert link == {defect["evidence"]}, f"{where}: evidence {link}"


def test_no_other_bug_fixtures(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name, sample in samples.items():
        expected = {sample.sha(d["introduced_by"]) for d in sample.truth["defects"] + sample.truth.get("demoted", [])}
        bugs = {head for head, a in answers(full_build[name]).items() if a["kind"] == "bug"}
        names = {v: k for k, v in sample.shas.items()}
        assert bugs <= expected, f"{name}: unexpected bug fixtures {[names[b] for b in bugs - expected]}"


def test_clean_fixtures_are_exactly_the_clean_commits(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name, sample in samples.items():
        names = {v: k for k, v in sample.shas.items()}
        clean = {names[h] for h, a in answers(full_build[name]).items() if a["kind"] == "clean"}
        assert clean == set(sample.truth["clean"]), name


def test_never_commits_never_appear(samples: dict[str, Sample], full_build: dict[str, Path], default_build: Path) -> None:
    default = answers(default_build)
    for name, sample in samples.items():
        heads = set(answers(full_build[name])) | set(default)
        for cid in sample.truth["never"]:
            assert sample.sha(cid) not in heads, f"{name}: {cid} became a fixture"


def test_unlabelled_fixes_are_dropped_with_their_reason(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name, sample in samples.items():
        manifest = json.loads((full_build[name] / "manifest.json").read_text())
        found = answers(full_build[name])
        for entry in sample.truth.get("unlabelled_fixes", []):
            dropped = manifest["repositories"][0]["dropped"][entry.get("stage", "blame")]
            assert dropped.get(entry["reason"], 0) >= 1, f"{name}: {entry}"
            fix = sample.sha(entry["fix"])
            assert not any(d["fix"] == fix for a in found.values() for d in a["defects"] or []), name


def test_demoted_labels_stay_below_the_default_tiers_with_their_reason(
    samples: dict[str, Sample], full_build: dict[str, Path], default_build: Path
) -> None:
    default = answers(default_build)
    for name, sample in samples.items():
        found = answers(full_build[name])
        for entry in sample.truth.get("demoted", []):
            fix = sample.sha(entry["fix"])
            answer = found.get(sample.sha(entry["introduced_by"]))
            assert answer is not None, f"{name}: {entry['case']}"
            mine = [d for d in answer["defects"] if d["fix"] == fix]
            assert mine and {d["evidence"]["tier"] for d in mine} == {entry["tier"]}, f"{name}: {entry['case']}"
            assert all(entry["reason"] in d["evidence"]["reasons"] for d in mine), f"{name}: {entry['case']}"
            assert not any(d["fix"] == fix for a in default.values() for d in a["defects"] or []), entry["case"]


def test_clean_candidates_are_refused_with_their_reason(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name, sample in samples.items():
        manifest = json.loads((full_build[name] / "manifest.json").read_text())
        dropped = manifest["repositories"][0]["dropped"]["clean"]
        found = answers(full_build[name])
        for entry in sample.truth.get("clean_refused", []):
            assert dropped.get(entry["reason"], 0) >= 1, f"{name}: {entry}"
            assert sample.sha(entry["commit"]) not in found, f"{name}: {entry['commit']} became a fixture"
        assert manifest["repositories"][0]["vendored_trees"] == sample.truth.get("vendored_trees", []), name


def test_default_output_keeps_only_tiers_up_to_blame(samples: dict[str, Sample], default_build: Path) -> None:
    found = answers(default_build)
    kept = TIERS[: TIERS.index("blame") + 1]
    for answer in found.values():
        for defect in answer["defects"] or []:
            assert defect["evidence"]["tier"] in kept
    for sample in samples.values():
        for defect in sample.truth["defects"]:
            fix = sample.sha(defect["fix"])
            present = any(d["fix"] == fix for a in found.values() for d in a["defects"] or [])
            assert present == (defect["evidence"] != "added-only"), f"{sample.name}: {defect['case']}"


def test_visible_files_hold_no_sha_link_issue_or_email(
    samples: dict[str, Sample], default_build: Path, full_build: dict[str, Path]
) -> None:
    prefixes = {sha[:7] for s in samples.values() for sha in all_shas(s.path)}
    for out in [default_build, *full_build.values()]:
        for visible in sorted((out / "visible").glob("*.json")):
            data = json.loads(visible.read_text())
            assert set(data) == {"id", "title", "description", "diff", "files"}
            shown = " ".join([data["title"], data["description"], data["diff"]])
            for token in re.findall(r"\b[0-9a-f]{7,40}\b", shown):
                assert token[:7] not in prefixes, f"{visible.name}: SHA {token}"
            message = data["title"] + "\n" + data["description"]
            assert not URL.search(message) and not EMAIL.search(message) and not ISSUE.search(message), message


def test_fixme_comments_are_blanked_and_recorded(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    assert any(d["case"] == "fixme" for s in samples.values() for d in s.truth["defects"])
    for name, sample in samples.items():
        cases = [d for d in sample.truth["defects"] if d["case"] == "fixme"]
        out = full_build[name]
        for defect in cases:
            answer = answers(out)[sample.sha(defect["introduced_by"])]
            assert answer["blanked"], f"{name}: nothing blanked"
            visible = json.loads((out / "visible" / f"{answer['id']}.json").read_text())
            for edit in answer["blanked"]:
                after = next(f["after"] for f in visible["files"] if f["path"] == edit["path"])
                line = after.split("\n")[edit["line"] - 1]
                assert edit["text"] not in line
                assert not re.search(r"FIXME|TODO|XXX", line)
                assert edit["text"] not in visible["diff"]
            # Blanking keeps every line number: the head file has as many lines as before.
            head = sample.show(defect["introduced_by"], defect["path"]).decode("utf-8", "replace")
            after = next(f["after"] for f in visible["files"] if f["path"] == defect["path"])
            assert after.count("\n") == head.count("\n")


def test_visible_contents_give_back_the_exact_bytes(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    checked_latin1 = 0
    for name, sample in samples.items():
        out = full_build[name]
        for head, answer in answers(out).items():
            if answer["blanked"]:
                continue
            visible = json.loads((out / "visible" / f"{answer['id']}.json").read_text())
            for f in visible["files"]:
                if f["omitted"] or f["after"] is None:
                    continue
                blob = subprocess.run(
                    ["git", "-C", str(sample.path), "show", f"{head}:{f['path']}"], capture_output=True, check=True
                ).stdout
                assert f["after"].encode(f["encoding"]) == blob, f"{name}: {f['path']}"
                checked_latin1 += f["encoding"] == "latin-1"
    assert checked_latin1 >= 1, "no sample fixture carries a non-UTF-8 file"


def test_two_runs_are_byte_identical(samples: dict[str, Sample], tmp_path: Path, default_build: Path) -> None:
    again = tmp_path / "again"
    build([s.path for s in samples.values()], again, load_config(), progress=False)
    first = sorted(p.relative_to(default_build) for p in default_build.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    for rel in first:
        assert (default_build / rel).read_bytes() == (again / rel).read_bytes(), rel


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_rebuild_from_the_cache_writes_the_same_bytes(samples: dict[str, Sample], tmp_path: Path, default_build: Path) -> None:
    """Labels come back from the cache exactly as they were made: the evidence a label's defects
    share is kept once, and a cache written whole (before that) still reads."""
    repos = [s.path for s in samples.values()]
    expected = _files(default_build)
    out = tmp_path / "out"
    shutil.copytree(default_build, out)
    entries = [json.loads(line) for f in sorted(out.glob("cache/*/labels.jsonl")) for line in f.read_text().splitlines()]
    several = [lab for e in entries for lab in e["labels"] if len(lab["defects"]) > 1]
    assert several and all("evidence" in lab and not any("evidence" in d for d in lab["defects"]) for lab in several)
    result = build(repos, out, load_config(), progress=False, force=True)
    assert all(r.reused_labels == r.labelled > 0 for r in result.reports)
    assert (
        sum(r.reused_clean for r in result.reports)
        == sum(len(f.read_text().splitlines()) for f in (default_build / "cache").glob("*/clean_checks.jsonl"))
        > 0
    )
    assert _files(out) == expected
    # The same cache written the old way, each defect carrying the whole evidence:
    for f in sorted(out.glob("cache/*/labels.jsonl")):
        lines = []
        for line in f.read_text().splitlines():
            entry = json.loads(line)
            for lab in entry["labels"]:
                shared = lab.pop("evidence", None)
                for d in lab["defects"]:
                    d["evidence"] = d.get("evidence", shared)
            lines.append(json.dumps(entry, sort_keys=True) + "\n")
        f.write_text("".join(lines))
    result = build(repos, out, load_config(), progress=False, force=True)
    assert all(r.reused_labels == r.labelled for r in result.reports)
    assert _files(out) == expected


def test_a_newer_miner_labels_and_strips_afresh(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an older miner labelled or let through a strip is not handed on by a newer one."""
    import miner.runner.cache

    sample = samples["pyledger"]
    out = tmp_path / "out"
    build([sample.path], out, load_config(), progress=False)
    old_key = json.loads((out / "manifest.json").read_text())["visible_key"]
    monkeypatch.setattr(miner.runner.cache, "__version__", "99.0.0")
    result = build([sample.path], out, load_config(), progress=False, force=True)
    assert result.reports[0].reused_labels == 0
    assert json.loads((out / "manifest.json").read_text())["visible_key"] != old_key


def test_fixture_ids_are_stable_and_opaque(samples: dict[str, Sample], default_build: Path, full_build: dict[str, Path]) -> None:
    """The same repository and commit give the same id in every build, and the id shows no SHA."""
    default_answers = answers(default_build)
    shared = 0
    for name in samples:
        for head, answer in answers(full_build[name]).items():
            assert head[:7] not in answer["id"]
            if head in default_answers:
                assert default_answers[head]["id"] == answer["id"]
                shared += 1
    assert shared > 0


def test_manifest_records_provenance(samples: dict[str, Sample], default_build: Path) -> None:
    manifest = json.loads((default_build / "manifest.json").read_text())
    assert manifest["miner_version"] and len(manifest["config_hash"]) == 16
    repos = {r["name"]: r for r in manifest["repositories"]}
    assert set(repos) == set(samples)
    for name, sample in samples.items():
        head = subprocess.run(
            ["git", "-C", str(sample.path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert repos[name]["head"] == head
        assert repos[name]["dropped"]["walk"] is not None
        assert sum(repos[name]["dropped"]["clean"].values()) > 0


def test_mining_never_writes_to_the_repository(samples: dict[str, Sample], tmp_path: Path) -> None:
    sample = next(iter(samples.values()))

    def snapshot() -> dict[str, tuple[int, int]]:
        return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sample.path.rglob("*") if p.is_file()}

    before = snapshot()
    build([sample.path], tmp_path / "out", load_config(), progress=False)
    assert snapshot() == before


@pytest.mark.parametrize("mode", ["title", "none"])
def test_description_modes(samples: dict[str, Sample], tmp_path: Path, mode: str) -> None:
    sample = next(iter(samples.values()))
    config = load_config().with_overrides(strip={"description": mode})
    build([sample.path], tmp_path / "out", config, progress=False)
    for visible in (tmp_path / "out" / "visible").glob("*.json"):
        data = json.loads(visible.read_text())
        assert data["description"] == ""
        assert (data["title"] == "") == (mode == "none")


def test_clean_answers_record_how_clean_they_are(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    for name in samples:
        cleans = [a for a in answers(full_build[name]).values() if a["kind"] == "clean"]
        assert cleans
        for a in cleans:
            assert a["wait_days"] == 365 and a["observed_days"] >= 365
            assert a["clean_confidence"] in ("high", "medium")
            assert a["survival"] is None or 0 <= a["survival"] <= 1
            assert a["stratum"]
        manifest = json.loads((full_build[name] / "manifest.json").read_text())
        sizes = manifest["repositories"][0]["sizes"]
        assert sizes["clean"]["count"] == len(cleans)
        for kind in ("bug", "clean"):  # floats whatever the count, so a consumer sees one type
            assert isinstance(sizes[kind]["median_lines"], float) and isinstance(sizes[kind]["median_files"], float)


def test_young_commits_are_clean_only_when_the_window_is_lowered(samples: dict[str, Sample], tmp_path: Path) -> None:
    from conftest import every_clean_config

    sample = samples["gokv"]
    names = {v: k for k, v in sample.shas.items()}
    build([sample.path], tmp_path / "short", every_clean_config().with_overrides(clean={"wait_days": 30}), progress=False)
    short = {names[h]: a for h, a in answers(tmp_path / "short").items() if a["kind"] == "clean"}
    young = {cid for cid, a in short.items() if a["observed_days"] < 365}
    assert young, "lowering the window admits younger clean commits"
    assert not young & set(sample.truth["clean"])
    assert not young & set(sample.truth["never"])
    assert all(short[c]["wait_days"] == 30 and short[c]["clean_confidence"] != "low" for c in young)


def test_survival_agrees_with_blame_at_head(samples: dict[str, Sample], full_build: dict[str, Path]) -> None:
    """Reverse blame (what miner uses) against an independent count: blame at HEAD of whole files."""
    from miner.core.classify import path_kind
    from miner.core.config import load_config

    paths = load_config().paths
    checked = 0
    for name, sample in samples.items():
        git = ["git", "-C", str(sample.path)]
        for head, answer in answers(full_build[name]).items():
            if answer["kind"] != "clean":
                continue
            numstat = subprocess.run(
                [*git, "show", "--numstat", "--format=", "-M", head], capture_output=True, text=True, check=True
            ).stdout.split("\n")
            if any("=>" in line for line in numstat):
                continue  # a rename: blame at HEAD gives the moved lines to their first author
            added = {
                p: int(a)
                for a, _, p in (line.split("\t") for line in numstat if line)
                if a != "-" and int(a) and path_kind(p, paths) == "source"
            }
            at_head = subprocess.run(
                [*git, "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.split()
            if not added or not set(added) <= set(at_head):
                continue
            standing = 0
            for path in added:
                blame = subprocess.run(
                    [*git, "blame", "--porcelain", "HEAD", "--", path], capture_output=True, check=True
                ).stdout.decode("latin-1")
                standing += sum(1 for line in blame.split("\n") if line.startswith(head + " "))
            assert answer["survival"] == round(standing / sum(added.values()), 4), f"{name}: {head[:8]}"
            checked += 1
    assert checked >= 10


def test_a_fix_in_the_same_files_soon_after_keeps_a_change_out_of_clean(samples: dict[str, Sample], tmp_path: Path) -> None:
    """With the default window, clean fixtures are the truth's clean commits less exactly those that a
    fix commit followed within 365 days in one of their source files (worked out here from git log)."""
    from conftest import every_clean_config

    from miner.core.classify import fix_link, path_kind
    from miner.core.config import load_config

    config = every_clean_config().with_overrides(clean={"fix_window_days": 365, "fix_window_scope": "file"})
    paths, fixes_config = load_config().paths, load_config().fixes
    removed_somewhere = False
    for name, sample in samples.items():
        out = tmp_path / name
        build([sample.path], out, config, progress=False)
        names = {v: k for k, v in sample.shas.items()}
        clean = {names[h] for h, a in answers(out).items() if a["kind"] == "clean"}
        log = subprocess.run(
            ["git", "-C", str(sample.path), "log", "--no-merges", "-M", "--name-only", "--format=%x00%H %ct%n%B%x01"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        commits = []
        for record in log.split("\x00")[1:]:
            head, _, rest = record.partition("\n")
            message, _, files = rest.partition("\x01")
            sha, when = head.split()
            commits.append((sha, int(when), message, {f for f in files.split("\n") if f}))
        fixes = [(t, files) for _, t, message, files in commits if fix_link(message, fixes_config)[0]]
        expected = set()
        for cid in sample.truth["clean"]:
            _, landed, _, touched = next(c for c in commits if c[0] == sample.sha(cid))
            source = {f for f in touched if path_kind(f, paths) == "source"}
            if not any(landed < t <= landed + 365 * 86400 and source & fixed for t, fixed in fixes):
                expected.add(cid)
        assert clean == expected, name
        removed_somewhere |= clean != set(sample.truth["clean"])
    assert removed_somewhere, "the layer never removed anything on the samples: the test tests nothing"


def test_a_revert_of_a_revert_is_looked_through_to_the_change_it_reapplied(
    samples: dict[str, Sample], full_build: dict[str, Path]
) -> None:
    """pyledger: reland-cache-balances reverts the revert of cache-balances. Blame of the later fix
    lands on the re-land; the label goes to cache-balances, and the re-land is neither a fix nor clean."""
    sample = samples["pyledger"]
    found = answers(full_build["pyledger"])
    fix, reland = sample.sha("fix-stale-balance-cache"), sample.sha("reland-cache-balances")
    mine = [d for d in found[sample.sha("cache-balances")]["defects"] if d["fix"] == fix]
    assert {"reapplied"} <= set(mine[0]["evidence"]["reasons"])
    assert reland in mine[0]["evidence"]["looked_through"]
    assert reland not in found
    manifest = json.loads((full_build["pyledger"] / "manifest.json").read_text())
    assert manifest["repositories"][0]["dropped"]["walk"]["revert_of_revert"] == 1


def test_a_rebuild_at_a_newer_head_reuses_the_clean_checks_that_still_hold_and_writes_a_cold_builds_bytes(
    samples: dict[str, Sample], tmp_path: Path
) -> None:
    """A sample mined without its last commit, then rebuilt at its head: the checks of candidates
    whose waiting window closed before that commit are reused, the rest asked again, and the output
    is the cold build's, cache included. The shelf sample mined before its golden file's year is
    bumped has the yearly report clean; rebuilt after, it is refused as the cold build refuses it."""
    config = load_config().with_overrides(clean={"ratio": 100.0, "min_count": 100, "admit_young": True})
    for name, rev in (("gokv", "HEAD~1"), ("shelf", samples["shelf"].sha("bump-golden-year") + "^")):
        repo = samples[name].path
        build([repo], tmp_path / name / "cold", config, progress=False)
        out = tmp_path / name / "out"
        build([repo], out, config, BuildOptions(rev=rev), progress=False)
        asked = len((next(out.glob("cache/*/clean_checks.jsonl"))).read_text().splitlines())
        result = build([repo], out, config, progress=False, force=True)
        rebuilt, cold = _files(out), _files(tmp_path / name / "cold")
        if name == "shelf":  # a fixture gone: the ledger keeps its placement, the cache its commit's patch-id
            rebuilt, cold = (
                {k: v for k, v in files.items() if not k.endswith(("ledger.json", "patch_ids.json"))} for files in (rebuilt, cold)
            )
        assert rebuilt == cold, name
        if name == "gokv":
            assert 0 < result.reports[0].reused_clean < asked
    yearly = samples["shelf"].sha("add-yearly-report")
    before = tmp_path / "before-bump"
    build(
        [samples["shelf"].path], before, config, BuildOptions(rev=samples["shelf"].sha("bump-golden-year") + "^"), progress=False
    )
    assert yearly in _clean_heads(before) and yearly not in _clean_heads(tmp_path / "shelf" / "cold")


def test_the_later_commits_a_clean_check_reads_come_from_the_walk_and_change_no_byte(
    samples: dict[str, Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every candidate is checked (a large ratio): the later commits each check reads are worked out
    from the walk's records (miner.git.history) with no ``git log`` per candidate, and the output is
    the same as when git is asked each time. The shelf sample's changes that later commits
    corrected (its truth lists four) are still refused for it."""
    from miner.git.history import PathHistory
    from miner.git.reader import Repo

    config = every_clean_config()
    asked: list[tuple[object, ...]] = []
    git_log = Repo.later_commits

    def counted(self: Repo, *args: Any) -> Any:
        asked.append(args)
        return git_log(self, *args)

    monkeypatch.setattr(Repo, "later_commits", counted)
    names = ("shelf", "gokv")
    corrected = {}
    for name in names:
        result = build([samples[name].path], tmp_path / name / "walk", config, progress=False)
        corrected[name] = result.reports[0].dropped["clean"]["corrected_later"]
    assert asked == [] and corrected["shelf"] >= 4
    monkeypatch.setattr(PathHistory, "listed", lambda *args: None)
    for name in names:
        build([samples[name].path], tmp_path / name / "git", config, progress=False)
        assert _files(tmp_path / name / "walk") == _files(tmp_path / name / "git"), name
    assert len(asked) > 5


def _clean_heads(out: Path) -> set[str]:
    return {head for head, answer in answers(out).items() if answer["kind"] == "clean"}


def test_two_builds_into_one_output_cannot_run_at_once(samples: dict, tmp_path: Path) -> None:
    from miner.core.errors import OutputLockedError
    from miner.stages.write import Staging

    out = tmp_path / "out"
    first = Staging(out)  # a build in progress
    with pytest.raises(OutputLockedError, match="another miner build is writing"):
        build([samples["shelf"].path], out, load_config(), progress=False)
    assert first.dir.is_dir()  # the first build's staging directory is left alone
    first.abort()
    build([samples["shelf"].path], out, load_config(), progress=False)
    assert (out / "manifest.json").is_file()
