"""``miner materialize``: a repository with the base checked out, the change on ``pr``, and nothing later."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner
from test_audit import Planted, planted  # noqa: F401  (the module-scoped fixture)

from miner.cli import main
from miner.commands.build import build
from miner.core.config import load_config


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, text=True).stdout


def snapshot(repo: Path) -> dict[str, tuple[int, int]]:
    """Every file under .git with its size and modification time: the source must not change."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in (repo / ".git").rglob("*") if p.is_file()}


def materialize(p: Planted, to: Path, *extra: str) -> tuple[str, dict, dict]:
    fid = p.fixture(p.stripped)
    code, out, err = run("materialize", str(p.stripped), fid, "--to", str(to), "--repo", str(p.repo), *extra)
    assert code == 0, err
    answer = json.loads((p.stripped / "answers" / f"{fid}.json").read_text())
    visible = json.loads((p.stripped / "visible" / f"{fid}.json").read_text())
    return fid, answer, visible


def assert_nothing_else(to: Path) -> None:
    assert git(to, "fsck", "--strict") == ""
    assert git(to, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/base", "refs/heads/pr"]
    assert git(to, "tag") == "" and git(to, "remote") == "" and git(to, "stash", "list") == ""
    assert not (to / ".git" / "logs").exists()
    assert git(to, "symbolic-ref", "HEAD").strip() == "refs/heads/base"
    assert git(to, "status", "--porcelain") == ""
    every = set(git(to, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    reachable = {line.split()[0] for line in git(to, "rev-list", "--objects", "--all").splitlines()}
    assert every == reachable, "unreachable objects"


def test_full_history(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    before = snapshot(planted.repo)
    to = tmp_path / "review"
    fid, answer, visible = materialize(planted, to)
    assert snapshot(planted.repo) == before, "the source repository was written to"
    assert_nothing_else(to)
    pr = git(to, "rev-parse", "pr").strip()
    assert git(to, "rev-parse", "base").strip() == answer["base"] == planted.shas["helper"]
    assert set(git(to, "rev-list", "--all").split()) == {planted.shas["init"], planted.shas["helper"], pr}
    for later in ("intro", "docs", "fix"):
        assert (
            subprocess.run(["git", "-C", str(to), "cat-file", "-e", planted.shas[later]], capture_output=True).returncode != 0
        ), later
    assert pr != answer["head"]
    assert (
        git(to, "log", "-1", "--format=%P|%an <%ae>|%cn <%ce>|%cI", "pr").strip()
        == f"{answer['base']}|miner <miner@invalid>|miner <miner@invalid>|{answer['head_date'].replace('Z', '+00:00')}"
    )
    message = git(to, "log", "-1", "--format=%B", "pr").strip()
    assert message == f"{visible['title']}\n\n{visible['description']}".strip()
    for vf in visible["files"]:
        assert git(to, "show", f"pr:{vf['path']}") == vf["after"]  # blanked comments stay blank
    assert "FIXME" not in git(to, "show", "pr:calc.py")
    assert (to / "calc.py").read_text() == git(planted.repo, "show", f"{answer['base']}:calc.py")
    code, out, _ = run("audit", str(planted.stripped), "--repo", str(planted.repo), "--materialized", str(to))
    assert code == 0, out


def test_squashed_base_has_exactly_two_commits(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    to = tmp_path / "review"
    _, answer, visible = materialize(planted, to, "--squash")
    assert_nothing_else(to)
    commits = git(to, "rev-list", "--all").split()
    assert len(commits) == 2 and not set(commits) & set(planted.shas.values())
    assert git(to, "rev-parse", "base^{tree}") == git(planted.repo, "rev-parse", f"{answer['base']}^{{tree}}")
    assert git(to, "log", "-1", "--format=%an <%ae>", "base").strip() == "miner <miner@invalid>"
    assert git(to, "show", "pr:calc.py") == visible["files"][0]["after"]
    code, out, _ = run("audit", str(planted.stripped), "--repo", str(planted.repo), "--materialized", str(to))
    assert code == 0, out


def test_an_empty_directory_is_a_fine_target(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    to = tmp_path / "empty"
    to.mkdir()
    materialize(planted, to)
    assert_nothing_else(to)


def test_a_root_commit_fixture_gets_an_empty_base(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    shutil.copytree(planted.stripped, out)
    fid = planted.fixture(out)
    path = out / "answers" / f"{fid}.json"
    answer = json.loads(path.read_text())
    answer["base"] = None
    path.write_text(json.dumps(answer))
    to = tmp_path / "review"
    code, _, err = run("materialize", str(out), fid, "--to", str(to), "--repo", str(planted.repo))
    assert code == 0, err
    assert_nothing_else(to)
    assert git(to, "ls-tree", "base") == "" and len(git(to, "rev-list", "--all").split()) == 2


def test_audit_flags_a_repository_holding_the_fix(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    to = tmp_path / "review"
    materialize(planted, to)
    pack = subprocess.run(
        ["git", "-C", str(planted.repo), "pack-objects", "--revs", "--stdout", "-q"],
        input=f"{planted.shas['fix']}\n".encode(),
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["git", "-C", str(to), "index-pack", "--stdin"], input=pack, capture_output=True, check=True)
    git(to, "update-ref", "refs/heads/later", planted.shas["fix"])
    code, out, _ = run("audit", str(planted.stripped), "--repo", str(planted.repo), "--materialized", str(to))
    assert code == 1
    assert "refs other than base and pr" in out and planted.shas["fix"] in out


def one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    for word in words:
        assert word in err, err


def test_bad_inputs(planted: Planted, tmp_path: Path) -> None:  # noqa: F811
    fid = planted.fixture(planted.stripped)
    base = ["materialize", str(planted.stripped)]
    code, _, err = run(*base, "fx-nosuchfixture0000", "--to", str(tmp_path / "a"), "--repo", str(planted.repo))
    one_line_error(code, err, "no fixture")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    code, _, err = run(*base, fid, "--to", str(busy), "--repo", str(planted.repo))
    one_line_error(code, err, "not empty")
    assert os.listdir(busy) == ["keep.txt"]
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "a.txt").write_text("x")
    git(other, "add", "a.txt")
    subprocess.run(["git", "-C", str(other), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "x"], check=True)
    code, _, err = run(*base, fid, "--to", str(tmp_path / "b"), "--repo", str(other))
    one_line_error(code, err, "--repo")
    inside = planted.repo / "review"  # in the work tree of the repository it reads
    code, _, err = run(*base, fid, "--to", str(inside), "--repo", str(planted.repo))
    one_line_error(code, err, "inside the repository at", "never writes into", "-review")
    assert not inside.exists() and not git(planted.repo, "status", "--porcelain", "--ignored")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".miner")]


def test_a_repository_with_several_roots(tmp_path: Path) -> None:
    """A history merged in later brings a root the older changes do not reach; --repo must still
    be accepted, whichever of the roots names the repository."""
    from test_messy import merge_a_root_sorting_before, with_a_bug

    repo = tmp_path / "roots"
    repo.mkdir()
    first, intro = with_a_bug(repo)
    merge_a_root_sorting_before(repo, first)
    out = tmp_path / "out"
    build([repo], out, load_config(), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["repositories"][0]["identity"] == first  # the first-parent line's root
    (entry,) = [e for e in manifest["fixtures"] if e["kind"] == "bug"]
    code, _, err = run("materialize", str(out), entry["id"], "--to", str(tmp_path / "review"), "--repo", str(repo))
    assert code == 0, err
    assert git(tmp_path / "review", "rev-parse", "base").strip() == first
    assert json.loads((out / entry["answer"]).read_text())["head"] == intro
