"""The command line: every bad input gets one line naming the cause and the fix, exit 2, nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import Sample

from miner.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def sample(samples: dict[str, Sample]) -> Path:
    return next(iter(samples.values())).path


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    lines = [line for line in err.strip().split("\n") if line]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], lines[0]


def test_help_works_with_dash_h() -> None:
    code, out, _ = run("-h")
    assert code == 0 and "build" in out
    code, out, _ = run("build", "-h")
    assert code == 0 and "Example:" in out


def test_every_command_has_an_example_and_is_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for name, command in sorted(main.commands.items()):
        if isinstance(command, click.Group):
            for sub in command.commands:
                assert f"miner {name} {sub}" in readme, f"miner {name} {sub} is not in the README"
            continue
        assert f"miner {name}" in readme, f"miner {name} is not in the README"
        code, out, _ = run(name, "-h")
        assert code == 0 and "Example:" in out, f"miner {name} -h shows no example"


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    code, _, err = run("build", str(tmp_path / "plain"), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "not a git repository")
    assert not (tmp_path / "out").exists()


def test_a_directory_inside_a_repository_is_not_mined_as_the_whole(sample: Path, tmp_path: Path) -> None:
    inside = next(p for p in sorted(sample.iterdir()) if p.is_dir() and p.name != ".git")
    code, _, err = run("build", str(inside), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "inside the repository at", str(sample.resolve()))
    assert not (tmp_path / "out").exists()


def test_the_git_directory_of_a_repository_is_named_after_the_repository(sample: Path, tmp_path: Path) -> None:
    code, _, err = run("build", str(sample / ".git"), "--out", str(tmp_path / "out"), "-q")
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [r["name"] for r in manifest["repositories"]] == [sample.name]


def test_an_output_inside_the_mined_repository_is_refused(sample: Path, tmp_path: Path) -> None:
    for out in (sample / "fixtures_out", sample / ".git" / "fixtures"):
        code, _, err = run("build", str(sample), "--out", str(out))
        assert_one_line_error(code, err, "inside the repository at", "never writes into", f"{sample.name}-fixtures")
        assert not out.exists()
    status = subprocess.run(
        ["git", "-C", str(sample), "status", "--porcelain", "--ignored"], capture_output=True, text=True, check=True
    ).stdout
    assert status == ""


def test_missing_path(tmp_path: Path) -> None:
    code, _, err = run("build", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "does not exist")


def test_empty_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    code, _, err = run("build", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "no commits")
    assert not (tmp_path / "out").exists()


def test_unknown_revision(sample: Path, tmp_path: Path) -> None:
    code, _, err = run("build", str(sample), "--rev", "no-such-branch", "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "unknown revision", "no-such-branch")
    assert not (tmp_path / "out").exists()


def test_non_empty_output_needs_force_and_keeps_its_files(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    code, _, err = run("build", str(sample), "--out", str(out))
    assert_one_line_error(code, err, "not empty", "--force")
    code, _, err = run("build", str(sample), "--out", str(out), "--force")
    assert_one_line_error(code, err, "not a miner output")
    assert (out / "precious.txt").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_force_replaces_a_previous_output(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", str(sample), "--out", str(out), "-q")[0] == 0
    first = (out / "manifest.json").read_bytes()
    code, _, err = run("build", str(sample), "--out", str(out), "-q", "--force")
    assert code == 0, err
    assert (out / "manifest.json").read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    "content,words",
    [
        ("clean: [unclosed", ["not valid YAML"]),
        ("clean:\n  wait_days: soon\n", ["clean.wait_days"]),
        ("cleen:\n  wait_days: 3\n", ["cleen"]),
        ("- a list\n", ["mapping"]),
    ],
)
def test_bad_config(sample: Path, tmp_path: Path, content: str, words: list[str]) -> None:
    config = tmp_path / "miner.yaml"
    config.write_text(content)
    code, _, err = run("build", str(sample), "--config", str(config), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, *words)
    assert not (tmp_path / "out").exists()


def test_unreadable_config(sample: Path, tmp_path: Path) -> None:
    code, _, err = run("build", str(sample), "--config", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "o"))
    assert_one_line_error(code, err, "cannot read config")


def test_output_is_a_file(sample: Path, tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    code, _, err = run("build", str(sample), "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, "is a file")


def test_json_report(sample: Path, tmp_path: Path) -> None:
    code, out, err = run("build", str(sample), "--out", str(tmp_path / "out"), "--json", "-q")
    assert code == 0, err
    report = json.loads(out)
    assert report["fixtures"] == len(json.loads((tmp_path / "out" / "manifest.json").read_text())["fixtures"])


def test_summary_on_stderr(sample: Path, tmp_path: Path) -> None:
    code, out, err = run("build", str(sample), "--out", str(tmp_path / "out"))
    assert code == 0 and out == ""
    assert "dropped at clean" in err and "wrote" in err


def test_interrupted_build_leaves_nothing_that_looks_complete_and_resumes(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import miner.runner.engine

    real = miner.runner.engine.make_fixture
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(miner.runner.engine, "make_fixture", flaky)
    out = tmp_path / "out"
    code, _, err = run("build", str(sample), "--out", str(out), "-j", "1")
    assert code == 130 and "nothing was written" in err
    assert not out.exists()
    assert not list(tmp_path.rglob("manifest.json"))
    # What was mined before the interruption is kept beside the output, and the next run uses it.
    monkeypatch.setattr(miner.runner.engine, "make_fixture", real)
    code, _, err = run("build", str(sample), "--out", str(out), "-j", "1")
    assert code == 0, err
    assert "labels reused from the cache" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_name_a_repository_with_name_equals_path(sample: Path, tmp_path: Path) -> None:
    code, _, err = run("build", f"ledger={sample}", "--out", str(tmp_path / "out"), "-q", "-j", "1")
    assert code == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [r["name"] for r in manifest["repositories"]] == ["ledger"]
    assert {e["repository"] for e in manifest["fixtures"]} == {"ledger"}
    code, _, err = run("build", str(sample), f"{sample.name}={sample}", "--out", str(tmp_path / "o2"))
    assert_one_line_error(code, err, "NAME=PATH")
