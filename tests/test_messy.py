"""Real history is messy: empty commits, octopus merges, binaries, submodules, shallow clones and
repositories that lack some of their objects. miner mines them without falling over."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from miner.cli import main
from miner.commands.build import BuildOptions, build, summary_table
from miner.core.config import load_config


def git(repo: Path, *args: str, date: str = "2023-01-02T10:00:00Z") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ann",
        "GIT_AUTHOR_EMAIL": "ann@example.com",
        "GIT_COMMITTER_NAME": "Ann",
        "GIT_COMMITTER_EMAIL": "ann@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout


def commit(repo: Path, files: dict[str, bytes], message: str, date: str) -> str:
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def with_a_bug(repo: Path) -> tuple[str, str]:
    """A new repository at ``repo``: an import, then a change whose defect a later fix repairs.
    Returns (the root, the change)."""
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, {"calc.py": b"def one():\n    return 1\n"}, "Import", "2022-01-03T10:00:00Z")
    intro = commit(
        repo, {"calc.py": b"def one():\n    return 1\n\n\ndef two():\n    return 3\n"}, "Add two", "2022-02-01T10:00:00Z"
    )
    commit(
        repo,
        {"calc.py": b"def one():\n    return 1\n\n\ndef two():\n    return 2\n"},
        "Fix two returning three",
        "2023-06-01T10:00:00Z",
    )
    return first, intro


def merge_a_root_sorting_before(repo: Path, first: str) -> str:
    """Merge into main an unrelated history whose root's SHA sorts before ``first`` (the dates are
    fixed, so which try succeeds is too); return that root."""
    n = 0
    while True:
        git(repo, "checkout", "-q", "--orphan", f"docs{n}")
        git(repo, "rm", "-q", "-rf", ".")
        other = commit(repo, {"docs.txt": f"docs {n}\n".encode()}, f"Start the docs {n}", "2023-07-01T10:00:00Z")
        if other < first:
            break
        n += 1
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--allow-unrelated-histories", "-m", "Merge the docs", other, date="2023-07-02T10:00:00Z")
    return other


FILES = ("a.py", "b.py", "d/c.py", "d/e.py", "f.txt")


def _write(repo: Path, rng: random.Random, step: int) -> None:
    """Change one or two files: new text, an old text again (so merges can equal a parent), a
    deletion, a rename, or a file turned into a directory."""
    for name in rng.sample(FILES, rng.randint(1, 2)):
        target = repo / name
        roll = rng.random()
        if roll < 0.1 and target.is_file():
            target.unlink()
        elif roll < 0.18 and target.is_file():
            target.rename(repo / (name + ".moved"))
        elif roll < 0.22 and target.is_file() and name == "f.txt":
            target.unlink()
            (repo / "f.txt").mkdir()
            (repo / "f.txt" / "inside.py").write_text(f"inside {step}\n")
        elif not (repo / name).is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"{name} {rng.choice([step, 0, 1])}\n")


def seeded_history(repo: Path, seed: int) -> list[str]:
    """A history of about 90 steps on several branches; returns every commit made."""
    rng = random.Random(seed)
    git(repo, "init", "-q", "-b", "main")
    made: list[str] = []
    branches = ["main"]
    hour = 0

    def when() -> str:
        nonlocal hour
        hour += 1 if rng.random() > 0.08 else -30  # now and then a commit dated before its parent
        return f"@{1704067200 + hour * 3600} +0000"

    for step in range(90):
        roll = rng.random()
        branch = rng.choice(branches)
        if made:
            git(repo, "checkout", "-q", "-f", branch)
            git(repo, "clean", "-q", "-fd")
        if roll < 0.55 or not made:
            _write(repo, rng, step)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", f"Change {step}", date=when())
        elif roll < 0.7:
            name = f"b{step}"
            git(repo, "checkout", "-q", "-f", "-b", name, rng.choice(made))
            branches.append(name)
            continue
        else:
            others = [b for b in branches if b != branch]
            if not others:
                continue
            theirs = rng.sample(others, 2 if roll > 0.95 and len(others) > 1 else 1)
            how = rng.choice([["-X", "theirs"], ["-s", "ours"], ["-X", "ours"]]) if len(theirs) == 1 else []
            if not _merge(repo, [*how, "-m", f"Merge {step}", *theirs], when()):
                continue
        made.append(git(repo, "rev-parse", "HEAD").strip())
    git(repo, "checkout", "-q", "-f", "main")
    for branch in branches[1:]:
        _merge(repo, ["-X", "theirs", "-m", f"Merge {branch}", branch], when())
    return made


def _merge(repo: Path, args: list[str], date: str) -> bool:
    """Merge, or give up on a conflict the strategy cannot settle (leaving the branch as it was)."""
    try:
        git(repo, "merge", "-q", "--no-ff", *args, date=date)
        return True
    except subprocess.CalledProcessError:
        git(repo, "reset", "-q", "--merge")
        git(repo, "reset", "-q", "--hard")
        return False


@pytest.fixture
def messy(tmp_path: Path) -> dict[str, str]:
    repo = tmp_path / "messy"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {}
    shas["import"] = commit(
        repo,
        {"app.py": b"def div(a, b):\n    return a / b\n", "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary"},
        "Import",
        "2022-01-03T10:00:00Z",
    )
    shas["feature"] = commit(repo, {"calc.py": b"def mul(a, b):\n    return a + b\n"}, "Add mul", "2022-02-01T10:00:00Z")
    shas["empty"] = commit(repo, {}, "Nothing at all", "2022-02-02T10:00:00Z")
    for name in ("one", "two", "three"):
        git(repo, "checkout", "-q", "-b", name, shas["empty"])
        shas[name] = commit(repo, {f"{name}.py": f"X_{name} = 1\nY_{name} = 2\n".encode()}, f"Add {name}", "2022-03-01T10:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Octopus", "one", "two", "three", date="2022-03-02T10:00:00Z")
    # A submodule entry (gitlink) pointing at a commit that is not in this repository.
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/lib")
    git(repo, "commit", "-q", "-m", "Add a submodule", date="2022-03-03T10:00:00Z")
    shas["big"] = commit(
        repo,
        {
            "data/blob.bin": bytes(range(256)) * 64,
            "readme.txt": b"caf\xe9\n",
            "util.py": b"def size(data):\n    return len(data)\n",
        },
        "Add data",
        "2022-03-04T10:00:00Z",
    )
    shas["fix"] = commit(
        repo, {"calc.py": b"def mul(a, b):\n    return a * b\n"}, "Fix mul returning a sum", "2023-06-01T10:00:00Z"
    )
    return {**shas, "path": str(repo)}


def answers(out: Path) -> dict[str, dict]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {a["head"]: a for a in (json.loads((out / e["answer"]).read_text()) for e in manifest["fixtures"])}


def test_messy_history_mines_cleanly(messy: dict[str, str], tmp_path: Path) -> None:
    config = load_config().with_overrides(clean={"ratio": 100.0, "min_count": 100})
    build([Path(messy["path"])], tmp_path / "out", config, progress=False)
    found = answers(tmp_path / "out")
    assert found[messy["feature"]]["kind"] == "bug"
    assert found[messy["feature"]]["defects"][0]["line_start"] == 2
    assert messy["empty"] not in found and messy["import"] not in found
    assert {messy["one"], messy["two"], messy["three"]} <= set(found)


def test_shallow_clone(messy: dict[str, str], tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{messy['path']}", str(shallow)], check=True)
    result = build([shallow], tmp_path / "out", load_config(), progress=False)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["repositories"][0]["shallow"] is True
    assert "note: shallow is a shallow clone" in summary_table(result)
    assert "shallow clone" not in summary_table(build([Path(messy["path"])], tmp_path / "full", load_config(), progress=False))


def test_a_missing_blob_leaves_out_its_path_not_the_build(messy: dict[str, str], tmp_path: Path) -> None:
    repo = Path(messy["path"])
    blob = git(repo, "rev-parse", f"{messy['big']}:data/blob.bin").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    config = load_config().with_overrides(clean={"ratio": 100.0, "min_count": 100, "fix_window_days": 0})
    build([repo], tmp_path / "out", config, progress=False)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["repositories"][0]["dropped"]["walk"]["paths_with_missing_objects"] == 1
    # The audit reads the history the same way: without the path whose objects are missing.
    audit = CliRunner().invoke(main, ["audit", str(tmp_path / "out"), "--repo", str(repo)])
    assert audit.exit_code == 0, audit.output
    found = answers(tmp_path / "out")
    assert found[messy["feature"]]["kind"] == "bug"
    # The commit whose blob is missing was still weighed as a clean candidate, without its data file.
    assert found[messy["big"]]["kind"] == "clean"

    # A rebuild over the finished output, and one with no cache at all, read the history the same
    # way and write the same bytes.
    before = fixture_bytes(tmp_path / "out")
    build([repo], tmp_path / "out", config, progress=False, force=True)
    assert fixture_bytes(tmp_path / "out") == before
    build([repo], tmp_path / "cold", config, BuildOptions(use_cache=False), progress=False)
    assert fixture_bytes(tmp_path / "cold") == before


def fixture_bytes(out: Path) -> dict[str, bytes]:
    """Every file a build writes but its cache: what a consumer of the fixtures reads."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "cache" not in p.relative_to(out).parts
    }


def test_the_commit_graph_is_kept_for_the_next_build_and_a_broken_one_is_replaced(messy: dict[str, str], tmp_path: Path) -> None:
    from miner.git import Repo
    from miner.git.overlay import write_overlay

    out = tmp_path / "out"
    build([Path(messy["path"])], out, load_config(), progress=False)
    kept = list(out.glob("cache/*/commit-graphs/commit-graph-chain"))
    assert kept
    assert list(out.glob("cache/*/patch_ids.json"))  # patch-ids too: a commit's never changes
    build([Path(messy["path"])], out, load_config(), progress=False, force=True)  # extends what was kept
    assert list(out.glob("cache/*/commit-graphs/commit-graph-chain"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "commit-graph-chain").write_text("0" * 40 + "\n")
    repo = Repo(messy["path"])
    overlay = write_overlay(repo.git_dir, tmp_path / "overlay", broken)
    assert overlay is not None
    (hit,) = Repo(messy["path"], overlay=overlay).blame(messy["fix"] + "^", "calc.py", [2])
    assert hit.sha == messy["feature"]


def test_a_path_that_is_not_utf8_drops_its_fixture_not_the_build(tmp_path: Path) -> None:
    """A file name in Latin-1 reaches Python with surrogate escapes. The commit cache keeps it
    exactly; a fixture, whose JSON is UTF-8, would have to change it, so that one is dropped."""
    repo = tmp_path / "latin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    name = os.fsdecode(b"caf\xe9.py")
    commit(repo, {"app.py": b"def f(x):\n    return x + 1\n"}, "Import", "2022-01-03T10:00:00Z")
    intro = commit(repo, {name: b"def g(x):\n    return x * 2\n"}, "Add g", "2022-02-01T10:00:00Z")
    good = commit(repo, {"h.py": b"def h(x):\n    return x - 2\n"}, "Add h", "2022-03-01T10:00:00Z")
    commit(repo, {name: b"def g(x):\n    return x * 3\n"}, "Fix g doubling", "2023-06-01T10:00:00Z")
    commit(repo, {"h.py": b"def h(x):\n    return x - 1\n"}, "Fix h taking two", "2023-06-02T10:00:00Z")
    out = tmp_path / "out"
    result = build([repo], out, load_config(), progress=False)
    assert result.reports[0].dropped["bug"]["non_utf8_path"] == 1
    assert set(answers(out)) == {good}  # h's defect is still a fixture; g's is not
    assert intro not in answers(out)
    cached = (next(out.glob("cache/*/commits.jsonl"))).read_text(encoding="utf-8")
    assert "caf\\udce9.py" in cached
    # The rebuild reads the path back from the cache as it was, and writes the same bytes.
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    result = build([repo], out, load_config(), progress=False, force=True)
    assert result.reports[0].reused_labels == 2
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_a_message_in_latin1_is_read_in_the_encoding_its_commit_declares(tmp_path: Path) -> None:
    repo = tmp_path / "latin1-message"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"app.py": b"def f(x):\n    return x + 1\n"}, "Import", "2022-01-03T10:00:00Z")
    (tmp_path / "message").write_bytes("Add h, résumé of things\n".encode("latin-1"))
    (repo / "h.py").write_bytes(b"def h(x):\n    return x - 2\n")
    git(repo, "add", "-A")
    git(
        repo, "-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-F", str(tmp_path / "message"), date="2022-03-01T10:00:00Z"
    )
    intro = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, {"h.py": b"def h(x):\n    return x - 1\n"}, "Fix h taking two", "2023-06-02T10:00:00Z")
    out = tmp_path / "out"
    build([repo], out, load_config(), progress=False)
    fixture = answers(out)[intro]["id"]
    assert json.loads((out / "visible" / f"{fixture}.json").read_text())["title"] == "Add h, résumé of things"


def test_odd_path_names_and_symlinks(tmp_path: Path) -> None:
    """git quotes a path with special bytes and ends its ---/+++ line with a tab when it holds a
    space; a symlink's 'line' is its target. The fix's lines are found in every such file, the
    flagged comment is blanked in the visible part, and the symlink is never blamed."""
    repo = tmp_path / "odd"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    spaced, quoted, newline = 'dir with space/we"ird\tname.py', "tab\tand\\back.py", "new\nline.py"
    commit(repo, {"base.py": b"X = 1\n"}, "Import", "2022-01-03T10:00:00Z")
    (repo / "link.py").symlink_to("base.py")
    intro = commit(
        repo,
        {
            spaced: b"def a():\n    return 1  # FIXME: should this be 10?\n",
            quoted: b"def c():\n    return 3\n",
            newline: b"def b():\n    return 2\n",
        },
        "Add a, b and c",
        "2022-02-01T10:00:00Z",
    )
    (repo / "link.py").unlink()
    (repo / "link.py").symlink_to("other.py")
    commit(
        repo,
        {spaced: b"def a():\n    return 10\n", quoted: b"def c():\n    return 30\n", newline: b"def b():\n    return 20\n"},
        "Fix the constants",
        "2023-06-01T10:00:00Z",
    )
    out = tmp_path / "out"
    result = build([repo], out, load_config(), progress=False)
    assert result.reports[0].dropped["blame"]["fix_lines_in_link"] == 1
    answer = answers(out)[intro]
    assert sorted((d["path"], d["line_start"]) for d in answer["defects"]) == [(spaced, 2), (newline, 2), (quoted, 2)]
    assert [(b["path"], b["line"]) for b in answer["blanked"]] == [(spaced, 2)]
    visible = json.loads((out / "visible" / f"{answer['id']}.json").read_text())
    after = next(f["after"] for f in visible["files"] if f["path"] == spaced)
    assert "FIXME" not in after and "FIXME" not in visible["diff"]


def test_a_submodule_in_a_change_is_omitted_not_shown_as_a_commit_id(tmp_path: Path) -> None:
    """A submodule's 'contents' are the commit id it points at (here one of this repository's own,
    as mypy's mypyc/external/mypy does): the visible part omits it, and the audit agrees."""
    repo = tmp_path / "sub"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, {"app.py": b"def f(x):\n    return x + 1\n"}, "Import", "2022-01-03T10:00:00Z")
    (repo / "h.py").write_bytes(b"def h(x):\n    return x - 2\n")
    git(repo, "add", "h.py")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{first},ext/self")
    git(repo, "commit", "-q", "-m", "Add h and pin ext/self", date="2022-03-01T10:00:00Z")
    intro = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, {"h.py": b"def h(x):\n    return x - 1\n"}, "Fix h taking two", "2023-06-02T10:00:00Z")
    out = tmp_path / "out"
    build([repo], out, load_config(), progress=False)
    answer = answers(out)[intro]
    visible = json.loads((out / "visible" / f"{answer['id']}.json").read_text())
    sub = next(f for f in visible["files"] if f["path"] == "ext/self")
    assert sub["omitted"] == "submodule" and sub["before"] is None and sub["after"] is None
    assert first[:7] not in json.dumps(visible)
    audit = CliRunner().invoke(main, ["audit", str(out), "--repo", str(repo)])
    assert audit.exit_code == 0, audit.output
