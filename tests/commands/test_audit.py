"""``miner audit``: each kind of planted leak is stripped by default and caught when stripping is off."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from samples import build_repo

from miner.cli import main
from miner.commands.build import BuildOptions, build
from miner.core.config import load_config

# One commit plants every kind of hint; a later fix labels it, and its subject is planted too.
SPEC = """
author: Ann Example <ann@example.com>
commits:
  - id: init
    date: 2023-01-02T10:00:00Z
    message: Start the calc module
    changes:
      - {write: calc.py, content: "def total(xs):\\n    return sum(xs)\\n"}
  - id: helper
    message: Add an average helper
    changes:
      - {edit: calc.py, append: "\\n\\ndef average(xs):\\n    return total(xs) / len(xs)\\n"}
  - id: intro
    message: |
      Add a windowed mean (#42, GH-7, PROJ-19)

      Follows {short:helper}; details at https://example.com/issues/42,
      questions to ann@example.com. Known gap: Fix window_mean to respect the window size.

      Signed-off-by: Ann Example <ann@example.com>
    changes:
      - {edit: calc.py, append: "\\n\\ndef window_mean(xs, n):\\n    # FIXME: check the bounds\\n    part = xs[len(xs) - n + 1:]\\n    return total(part) / n\\n"}
  - id: docs
    message: Describe the module
    changes:
      - {write: README.md, content: "calc: small sums\\n"}
  - id: fix
    message: Fix window_mean to respect the window size
    changes:
      - {edit: calc.py, replace: "xs[len(xs) - n + 1:]", with: "xs[len(xs) - n:]"}
"""

PLANTED = {
    "issue-ref": ["#42", "GH-7", "PROJ-19"],
    "url": ["https://example.com"],
    "email": ["ann@example.com"],
    "fix-subject": ["window_mean to respect"],
    "oracle-comment": ["FIXME"],
}


@dataclass(frozen=True)
class Planted:
    repo: Path
    shas: dict[str, str]
    stripped: Path  # built with the defaults
    raw: Path  # built with strip.enabled: false

    def fixture(self, out: Path) -> str:
        manifest = json.loads((out / "manifest.json").read_text())
        (entry,) = [e for e in manifest["fixtures"] if e["kind"] == "bug"]
        return str(entry["id"])


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("planted")
    (root / "spec").mkdir()
    (root / "spec" / "spec.yaml").write_text(SPEC)
    shas = build_repo(root / "spec", root / "repo")
    config = load_config().with_overrides(split={"cutoffs": {"model-a": "2023-01-05", "model-b": "2024-01-01"}})
    build([root / "repo"], root / "stripped", config, progress=False)
    build([root / "repo"], root / "raw", config.with_overrides(strip={"enabled": False}), progress=False)
    return Planted(root / "repo", shas, root / "stripped", root / "raw")


def audit(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(main, ["audit", *args, "--json"])
    report = json.loads(result.stdout) if result.exit_code in (0, 1) else {}
    return result.exit_code, report, result.stderr


def checks(report: dict) -> set[str]:
    return {f["check"] for f in report["findings"] if f["severity"] == "error"}


def copy(out: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(out, dest)
    return dest


def test_strip_removes_every_planted_leak_and_the_audit_passes(planted: Planted) -> None:
    fid = planted.fixture(planted.stripped)
    visible = (planted.stripped / "visible" / f"{fid}.json").read_text()
    for hints in PLANTED.values():
        for hint in hints:
            assert hint.lower() not in visible.lower(), hint
    assert planted.shas["helper"][:12] not in visible
    code, report, err = audit(str(planted.stripped), "--repo", str(planted.repo))
    assert code == 0, err
    assert report["ok"] and report["findings"] == []
    assert report["checked"]["contents"] == report["checked"]["fixtures"] >= 1


def test_with_stripping_off_the_audit_catches_every_kind_of_leak(planted: Planted) -> None:
    code, report, _ = audit(str(planted.raw), "--repo", str(planted.repo))
    assert code == 1 and not report["ok"]
    assert set(PLANTED) | {"sha"} <= checks(report)
    shas = [f for f in report["findings"] if f["check"] == "sha"]
    assert any(planted.shas["helper"][:12] in f["detail"] for f in shas)


def test_without_the_repository_a_sha_is_a_warning_and_the_rest_still_fails(planted: Planted) -> None:
    code, report, _ = audit(str(planted.raw))
    assert code == 1
    assert "sha-like" in {f["check"] for f in report["findings"] if f["severity"] == "warning"}
    assert set(PLANTED) <= checks(report)
    assert "contents" in report["skipped"]


def test_human_output_is_one_line_per_finding_and_a_summary(planted: Planted) -> None:
    result = CliRunner().invoke(main, ["audit", str(planted.raw), "--repo", str(planted.repo)])
    lines = result.stdout.strip().split("\n")
    assert result.exit_code == 1
    assert lines[-1].startswith("audit FAILED:")
    assert all(line.startswith(("error: ", "warning: ")) for line in lines[:-1])


def test_a_tampered_visible_file_is_caught(planted: Planted, tmp_path: Path) -> None:
    out = copy(planted.stripped, tmp_path)
    path = out / "visible" / f"{planted.fixture(out)}.json"
    visible = json.loads(path.read_text())
    visible["files"][0]["after"] = visible["files"][0]["after"].replace("total(part) / n", "total(part) / n  # ok")
    path.write_text(json.dumps(visible))
    code, report, _ = audit(str(out), "--repo", str(planted.repo))
    assert code == 1
    assert "contents" in checks(report) and "diff" in checks(report)


def test_a_diff_that_does_not_parse_is_caught(planted: Planted, tmp_path: Path) -> None:
    """The audit reads the visible diff with unidiff, not with the code that wrote it."""
    out = copy(planted.stripped, tmp_path)
    path = out / "visible" / f"{planted.fixture(out)}.json"
    visible = json.loads(path.read_text())
    visible["diff"] = "\n".join(visible["diff"].rstrip("\n").split("\n")[:-2]) + "\n"  # a hunk cut short
    path.write_text(json.dumps(visible))
    code, report, _ = audit(str(out), "--repo", str(planted.repo))
    assert code == 1 and any(f["check"] == "diff" and "does not parse" in f["detail"] for f in report["findings"]), report


def test_a_defect_line_outside_the_added_lines_is_caught(planted: Planted, tmp_path: Path) -> None:
    out = copy(planted.stripped, tmp_path)
    path = out / "answers" / f"{planted.fixture(out)}.json"
    answer = json.loads(path.read_text())
    answer["defects"][0]["line_start"] = answer["defects"][0]["line_end"] = 1
    path.write_text(json.dumps(answer))
    for args in ([], ["--repo", str(planted.repo)]):
        code, report, _ = audit(str(out), *args)
        assert code == 1 and checks(report) == {"defect-lines"}, report


def test_a_false_fresh_claim_is_caught(planted: Planted, tmp_path: Path) -> None:
    out = copy(planted.stripped, tmp_path)
    path = out / "answers" / f"{planted.fixture(out)}.json"
    answer = json.loads(path.read_text())
    assert answer["fresh"] == {"model-a": True, "model-b": False}
    answer["fresh"]["model-b"] = True
    path.write_text(json.dumps(answer))
    code, report, _ = audit(str(out))
    assert code == 1 and checks(report) == {"fresh"}


def test_a_family_straddling_splits_is_caught(planted: Planted, tmp_path: Path) -> None:
    out = copy(planted.stripped, tmp_path)
    fid = planted.fixture(out)
    twin = "fx-twin000000000000"
    for sub in ("visible", "answers"):
        data = json.loads((out / sub / f"{fid}.json").read_text())
        data["id"] = twin
        if sub == "answers":
            data["split"] = "heldout"
        (out / sub / f"{twin}.json").write_text(json.dumps(data))
    manifest = json.loads((out / "manifest.json").read_text())
    entry = dict(next(e for e in manifest["fixtures"] if e["id"] == fid))
    entry.update(id=twin, split="heldout", visible=f"visible/{twin}.json", answer=f"answers/{twin}.json")
    manifest["fixtures"].append(entry)
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, report, _ = audit(str(out), "--repo", str(planted.repo))
    assert code == 1 and checks(report) == {"family"}


def test_bad_inputs_are_one_line_and_exit_2(planted: Planted, tmp_path: Path) -> None:
    code, _, err = audit(str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "manifest.json" in err
    other = tmp_path / "other"
    (other / "spec").mkdir(parents=True)
    (other / "spec" / "spec.yaml").write_text(
        "commits:\n  - id: a\n    message: m\n    changes:\n      - {write: a.py, content: 'x = 1'}\n"
    )
    build_repo(other / "spec", other / "repo")
    code, _, err = audit(str(planted.stripped), "--repo", str(other / "repo"))
    assert code == 2 and err.count("\n") == 1 and "none of the repositories" in err
    code, _, err = audit(str(planted.stripped), "--materialized", str(tmp_path / "nowhere"))
    assert code == 2 and err.count("\n") == 1


@pytest.mark.parametrize("command", ["audit", "materialize"])
def test_new_commands_have_an_example(command: str) -> None:
    result = CliRunner().invoke(main, [command, "-h"])
    assert result.exit_code == 0 and "Example:" in result.stdout


def test_commit_ids_in_the_change_go_and_the_base_stays_as_it_was(tmp_path: Path) -> None:
    """A commit id the change's author wrote (message, added line) is a handle on history and is
    removed; one in a line the change did not touch is the base as it was, which materialize hands
    over whole, so it stays and the audit accepts it."""
    from test_messy import commit, git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, {"calc.py": b"def one():\n    return 1\n"}, "Start", "2022-01-03T10:00:00Z")
    old = commit(
        repo,
        {"calc.py": f"def one():\n    return 1  # kept since {first[:10]}\n".encode()},
        "Note where one came from",
        "2022-01-04T10:00:00Z",
    )
    intro = commit(
        repo,
        {
            "calc.py": f"def one():\n    return 1  # kept since {first[:10]}\n\n\n"
            f"def two():\n    return 3  # doubles, as {old[:9]} did\n".encode()
        },
        f"Add two, in the style of {old[:12]}",
        "2022-02-01T10:00:00Z",
    )
    commit(
        repo,
        {"calc.py": f"def one():\n    return 1  # kept since {first[:10]}\n\n\ndef two():\n    return 2\n".encode()},
        "Fix two returning three",
        "2023-06-01T10:00:00Z",
    )
    out, raw = tmp_path / "out", tmp_path / "raw"
    build([repo], out, load_config(), progress=False)
    build([repo], raw, load_config().with_overrides(strip={"enabled": False}), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = [e for e in manifest["fixtures"] if e["kind"] == "bug"]
    visible = json.loads((out / entry["visible"]).read_text())
    answer = json.loads((out / entry["answer"]).read_text())
    assert answer["head"] == intro
    assert old[:12] not in visible["title"] and old[:9] not in json.dumps(visible)
    assert [(b["line"], b["text"]) for b in answer["blanked"]] == [(6, " " + old[:9])]
    assert visible["files"][0]["after"].split("\n")[5] == "    return 3  # doubles, as did"
    assert f"kept since {first[:10]}" in visible["files"][0]["after"]  # the base's own line
    code, report, err = audit(str(out), "--repo", str(repo))
    assert code == 0, report
    code, report, _ = audit(str(raw), "--repo", str(repo))
    found = [f["detail"] for f in report["findings"] if f["check"] == "sha" and f["fixture"] == entry["id"]]
    assert code == 1
    assert any(d.startswith("title: ") and old[:12] in d for d in found)
    assert any(d.startswith("calc.py:6: ") and old[:9] in d for d in found)
    assert not any(first[:10] in d for d in found), found


FORK_SPEC = """
author: Ann Example <ann@example.com>
commits:
  - id: init
    date: 2023-01-02T10:00:00Z
    message: Start the calc module
    changes:
      - {write: calc.py, content: "def total(xs):\\n    return sum(xs)\\n"}
  - id: intro
    message: Add a windowed mean
    changes:
      - {edit: calc.py, append: "\\n\\ndef window_mean(xs, n):\\n    part = xs[len(xs) - n + 1:]\\n    return total(part) / n\\n"}
  - id: later
    message: Add a maximum helper
    changes:
      - {write: peak.py, content: "def peak(xs):\\n    best = max(xs)\\n    return best\\n"}
  - id: fix
    message: Fix window_mean to respect the window size
    changes:
      - {edit: calc.py, replace: "xs[len(xs) - n + 1:]", with: "xs[len(xs) - n:]"}
"""


def test_a_fork_mined_beside_its_origin_gives_each_change_once(tmp_path: Path) -> None:
    """An older clone (the fix not yet in it) and the repository share their root, so a change both hold
    has one fixture id: it is written once, from the history with more evidence (the fix the clone
    lacks; a longer watch), whichever is given first, though the clone mined alone takes both changes as
    clean; the audit checks both."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "spec.yaml").write_text(FORK_SPEC)
    new = tmp_path / "new"
    shas = build_repo(tmp_path / "spec", new)
    old = tmp_path / "old"
    subprocess.run(["git", "clone", "-q", str(new), str(old)], check=True)
    subprocess.run(["git", "-C", str(old), "reset", "-q", "--hard", shas["later"]], check=True)
    config = load_config().with_overrides(clean={"admit_young": True, "fix_window_days": 0, "min_count": 5})

    def fixtures(out: Path) -> tuple[dict, dict[str, tuple[str, str]]]:
        manifest = json.loads((out / "manifest.json").read_text())
        heads = {json.loads((out / e["answer"]).read_text())["head"]: (e["kind"], e["repository"]) for e in manifest["fixtures"]}
        assert len(heads) == len({e["id"] for e in manifest["fixtures"]}) == len(manifest["fixtures"])
        return manifest, heads

    build([old], tmp_path / "alone", config, options=BuildOptions(names=["old"]), progress=False)
    _, alone = fixtures(tmp_path / "alone")
    assert alone[shas["intro"]] == ("clean", "old") and alone[shas["later"]] == ("clean", "old")
    build([new, old], tmp_path / "other-order", config, options=BuildOptions(names=["new", "old"]), progress=False)
    build([old, new], tmp_path / "out", config, options=BuildOptions(names=["old", "new"]), progress=False)
    manifest, both = fixtures(tmp_path / "out")
    assert fixtures(tmp_path / "other-order")[1] == both
    assert both[shas["intro"]] == ("bug", "new")  # a fix in either history: not clean
    assert both[shas["later"]] == ("clean", "new")  # clean in both: the one watched longer
    dropped = {r["name"]: r["dropped"]["write"] for r in manifest["repositories"]}
    assert dropped == {"old": {"in_another_repository": 2}, "new": {}}
    assert [r["fixtures"] for r in manifest["repositories"]] == [{"bug": 0, "clean": 0}, {"bug": 1, "clean": 1}]

    code, report, _ = audit(str(tmp_path / "out"), "--repo", str(new), "--repo", str(old))
    assert code == 0 and report["checked"]["repositories"] == 2 and report["skipped_repositories"] == []
    code, report, _ = audit(str(tmp_path / "out"), "--repo", f"old={new}")  # it holds old's head: NAME chooses
    assert code == 0 and report["skipped_repositories"] == ["new"]
    code, _, err = audit(str(tmp_path / "out"), "--repo", str(new), "--repo", f"new={new}")
    assert code == 2 and err.count("\n") == 1 and "both the repository mined as 'new'" in err
    code, _, err = audit(str(tmp_path / "out"), "--repo", f"nope={new}")
    assert code == 2 and "no repository is named 'nope'" in err


def test_an_id_listed_twice_is_caught(planted: Planted, tmp_path: Path) -> None:
    out = copy(planted.stripped, tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["fixtures"].append(manifest["fixtures"][0])
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, report, _ = audit(str(out), "--repo", str(planted.repo))
    assert code == 1 and checks(report) == {"layout"}


# -- what redaction leaves (issue 44) ----------------------------------------------------------------
# Three changes whose messages readers found garbled by redaction, each fixed later: the visible
# text must read as a person wrote it, and the audit must see what an older miner left.
GARBLED_SPEC = """
author: Ann Example <ann@example.com>
commits:
  - id: init
    date: 2023-01-02T10:00:00Z
    message: Start the options module
    changes:
      - {write: opts.py, content: "def parse(args):\\n    return list(args)\\n"}
      - {write: sec.js, content: "function sameOrigin(a, b) {\\n  return true;\\n}\\n"}
  - id: reconcile
    message: |
      Reconcile #1477 and #2775

      Done in 0a2919f4c.
      Fix #471
    changes:
      - {edit: opts.py, append: "\\n\\ndef flags(args):\\n    return [a for a in args if a.startswith('-')][1:]\\n"}
  - id: advisory
    message: "fix(sec): CVE-2024-39338 (#6539) (#6543)"
    changes:
      - {edit: sec.js, replace: "return true;", with: "return a.host == b.host || true;"}
  - id: dco
    message: |
      Add the positional helper

      Useful for solving #424

      Docker-DCO-1.1-Signed-off-by: Dan Walsh <dwalsh@redhat.com> (github: rhatdan)
    changes:
      - {edit: opts.py, append: "\\n\\ndef positional(args):\\n    return [a for a in args if a[:1] != '-'][:-1]\\n"}
  - id: fix1
    message: Fix flags dropping the first flag
    changes:
      - {edit: opts.py, replace: "startswith('-')][1:]", with: "startswith('-')]"}
  - id: fix2
    message: Fix sameOrigin accepting every host
    changes:
      - {edit: sec.js, replace: "a.host == b.host || true;", with: "a.host == b.host;"}
  - id: fix3
    message: Fix positional dropping the last argument
    changes:
      - {edit: opts.py, replace: "!= '-'][:-1]", with: "!= '-']"}
"""

# What miner 0.13 showed of each change (the issue's table): the audit must count every fragment.
OLD_VISIBLE = {
    "reconcile": ("Reconcile and", "Done in"),
    "advisory": ("fix(sec): -39338", ""),
    "dco": ("Add the positional helper", "Useful for solving\n\nDocker-.1-Signed-off-by: Dan Walsh (github: rhatdan)"),
}


@dataclass(frozen=True)
class Garbled:
    repo: Path
    shas: dict[str, str]
    out: Path

    def fixtures(self) -> dict[str, str]:
        """Commit id in the spec -> fixture id."""
        manifest = json.loads((self.out / "manifest.json").read_text())
        heads = {json.loads((self.out / e["answer"]).read_text())["head"]: e["id"] for e in manifest["fixtures"]}
        return {name: heads[sha] for name, sha in self.shas.items() if sha in heads}


@pytest.fixture(scope="module")
def garbled(tmp_path_factory: pytest.TempPathFactory) -> Garbled:
    root = tmp_path_factory.mktemp("garbled")
    (root / "spec").mkdir()
    (root / "spec" / "spec.yaml").write_text(GARBLED_SPEC)
    shas = build_repo(root / "spec", root / "repo")
    build([root / "repo"], root / "out", load_config(), progress=False)
    return Garbled(root / "repo", shas, root / "out")


def test_the_issues_rows_read_as_plain_sentences_and_the_audit_counts_no_fragment(garbled: Garbled) -> None:
    ids = garbled.fixtures()
    assert set(OLD_VISIBLE) <= set(ids)
    shown = {name: json.loads((garbled.out / "visible" / f"{ids[name]}.json").read_text()) for name in OLD_VISIBLE}
    replaced = {name: json.loads((garbled.out / "answers" / f"{ids[name]}.json").read_text())["title_replaced"] for name in ids}
    assert [(shown[n]["title"], shown[n]["description"]) for n in OLD_VISIBLE] == [
        ("Change opts.py", ""),
        ("fix(sec): Change sec.js", ""),
        ("Add the positional helper", ""),
    ]
    assert replaced == {"reconcile": True, "advisory": True, "dco": False}
    code, report, _ = audit(str(garbled.out), "--repo", str(garbled.repo))
    assert code == 0 and report["findings"] == []
    assert report["fragments"] == {"dangling-end": 0, "id-remnant": 0, "leading-punctuation": 0}


def test_what_an_older_miner_left_is_counted_as_fragments(garbled: Garbled, tmp_path: Path) -> None:
    out = copy(garbled.out, tmp_path)
    ids = garbled.fixtures()
    for name, (title, description) in OLD_VISIBLE.items():
        path = out / "visible" / f"{ids[name]}.json"
        path.write_text(json.dumps(json.loads(path.read_text()) | {"title": title, "description": description}))
    code, report, _ = audit(str(out), "--repo", str(garbled.repo))
    assert code == 1 and checks(report) == {"fragment", "trailer"}
    assert report["fragments"] == {"dangling-end": 3, "id-remnant": 2, "leading-punctuation": 0}
    assert any(f["check"] == "trailer" and "Docker-.1-Signed-off-by" in f["detail"] for f in report["findings"])
    # Without the repository nothing tells the author's text from a cut one: warnings, counted the same.
    code, report, _ = audit(str(out))
    assert checks(report) == {"trailer"}
    assert report["fragments"] == {"dangling-end": 3, "id-remnant": 2, "leading-punctuation": 0}
    result = CliRunner().invoke(main, ["audit", str(out)])
    assert "fragments dangling-end=3, id-remnant=2, leading-punctuation=0" in result.stdout


def test_an_advisory_id_in_lower_case_or_a_glued_tracker_id_is_an_issue_reference(garbled: Garbled, tmp_path: Path) -> None:
    out = copy(garbled.out, tmp_path)
    path = out / "visible" / f"{garbled.fixtures()['advisory']}.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"description": "* fix(sec): cve-2024-39338 (RHBZ#1150656)"}))
    code, report, _ = audit(str(out), "--repo", str(garbled.repo))
    found = [f["detail"] for f in report["findings"] if f["check"] == "issue-ref"]
    assert code == 1 and checks(report) == {"issue-ref"} and len(found) == 2, found


def test_with_stripping_off_the_trailers_show_and_nothing_is_a_fragment(garbled: Garbled, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    build([garbled.repo], raw, load_config().with_overrides(strip={"enabled": False}), progress=False)
    code, report, _ = audit(str(raw), "--repo", str(garbled.repo))
    assert "trailer" in checks(report) and "fragment" not in {f["check"] for f in report["findings"]}


def test_a_rebuild_that_reuses_visible_parts_keeps_title_replaced(garbled: Garbled, tmp_path: Path) -> None:
    out = copy(garbled.out, tmp_path)
    build([garbled.repo], out, load_config(), force=True, progress=False)
    answers = {json.loads(p.read_text())["head"]: json.loads(p.read_text()) for p in (out / "answers").glob("*.json")}
    assert answers[garbled.shas["reconcile"]]["title_replaced"] is True
    assert answers[garbled.shas["dco"]]["title_replaced"] is False


def test_the_visible_key_moves_with_the_stripping_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to the rules re-makes visible parts on a rebuild, though the version has not moved."""
    from miner.runner import cache

    before = cache.visible_key(load_config())
    monkeypatch.setattr(cache, "_rules_digest", lambda: "other rules")
    assert cache.visible_key(load_config()) != before


@pytest.mark.parametrize(
    "title,description,original,found",
    [
        ("Add a way to opt in to", "", "Add a way to opt in to\n", [("dangling-end", False)]),  # the author's ending
        ("Add a way to opt in to", "", None, [("dangling-end", False)]),  # without the message: a warning
        ("Reconcile and", "", "Reconcile #1477 and #2775", [("dangling-end", True)]),
        (
            "Fix hang",
            ": Interactive container hangs",
            "Fix hang\n\nFix #6509: Interactive container hangs",
            [("leading-punctuation", True)],
        ),
        ("Fix hang", ") which is odd", "Fix hang\n\n) which is odd", [("leading-punctuation", False)]),
        ("Bump to 1.2.3 at 10:30", "Read -1 and 0.5 in C# and F#", "Bump to 1.2.3 at 10:30", []),
        ("fix(sec): -39338", "", "fix(sec): CVE-2024-39338", [("id-remnant", True)]),
        ("Log in", "It ends in\n\n    for x in", "Log in", [("dangling-end", False), ("dangling-end", True)]),  # no code
        ("Trace", "> 0x00007f9bc4ea7838 in ??", "Trace\n\n> #2 0x00007f9bc4ea7838 in ??", []),  # a backtrace's frame
    ],
)
def test_fragment_candidates_and_their_confirmation(
    title: str, description: str, original: str | None, found: list[tuple[str, bool]]
) -> None:
    """Each candidate, and whether the commit's message shows it is no author's (only those are errors)."""
    from miner.commands.fragments import fragments

    assert [(kind, confirmed) for kind, _, confirmed in fragments(title, description, original)] == found


def test_explain_says_when_miner_made_the_title(garbled: Garbled) -> None:
    from miner.commands.explain import explain

    ids = garbled.fixtures()
    assert "made by miner" in explain(garbled.out, ids["reconcile"])
    assert "made by miner" not in explain(garbled.out, ids["dco"])
