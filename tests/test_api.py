"""The public API: what `import miner` offers, and the example of docs/python-api.md run as it is written."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import miner
from miner.core.errors import OutputDirError

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "python-api.md"


def test_every_public_name_resolves() -> None:
    for name in miner.__all__:
        assert getattr(miner, name) is not None, name
    with pytest.raises(AttributeError):
        miner.no_such_name  # noqa: B018


def test_the_documented_python_example_runs(samples: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = PAGE.read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    shutil.copytree(samples["pyledger"].path, tmp_path / "sample_repo")
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(PAGE), "exec"), {})
    lines = printed.getvalue().splitlines()
    assert re.fullmatch(r"\d+ fixtures from \['sample_repo'\]", lines[0])
    assert len(lines) > 1 and all(line.startswith("fx-") for line in lines[1:])


def test_a_fixture_set_reads_as_it_was_written(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    fixtures = miner.open_output(out)
    # The typed manifest writes back the very bytes the build wrote.
    assert fixtures.manifest.json_text() == (out / "manifest.json").read_text(encoding="utf-8")
    ids = [entry.id for entry in fixtures.manifest.fixtures]
    assert [f.id for f in fixtures] == ids and len(fixtures) == len(ids)
    first = fixtures[ids[0]]
    assert first.answer.model_dump(mode="json") == json.loads((out / "answers" / f"{ids[0]}.json").read_text())
    assert [a.id for a in fixtures.answers()] == ids
    with pytest.raises(KeyError):
        fixtures["fx-nosuchfixture000"]
    with pytest.raises(OutputDirError, match="list them with"):
        fixtures.require("fx-nosuchfixture000")


def test_a_damaged_output_is_one_line(tmp_path: Path, samples: dict) -> None:
    with pytest.raises(OutputDirError, match="has no manifest.json"):
        miner.open_output(tmp_path)
    out = tmp_path / "out"
    miner.build([samples["pyledger"].path], out, miner.load_config(), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["fixtures"][0]["kind"] = "maybe"
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(OutputDirError, match=r"fixtures\.0\.kind") as raised:
        miner.open_output(out)
    assert "\n" not in str(raised.value)
    os.remove(out / "manifest.json")


def test_scripts_import_only_the_public_api() -> None:
    scripts = ROOT / "scripts"
    for path in sorted([*scripts.glob("*.py"), *scripts.glob("reviewers/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("miner.") for a in node.names), f"{path.name} imports a miner module"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("miner"):
                assert node.module == "miner", f"{path.name} imports from {node.module}; use names in miner.__all__"
                for alias in node.names:
                    assert alias.name in miner.__all__, f"{path.name} imports {alias.name}, which is not public"
