"""miner report: one self-contained page, with its tables beside it."""

from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

import miner
from miner.commands.report import report


def test_the_page_is_self_contained_and_its_tables_match(samples: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    miner.build(
        [samples["pyledger"].path],
        out,
        miner.load_config().with_overrides(split={"cutoffs": {"model-a": "2023-01-01"}}),
        progress=False,
    )
    scores = tmp_path / "scores.json"
    scores.write_text(
        json.dumps(
            {
                "tolerance": 3,
                "paired": [],
                "reviewers": {
                    "nobody": {
                        "fixtures": {"bug": 10, "clean": 1, "errors": 0},
                        "recall": {"value": 0.0, "low": 0.0, "high": 0.0},
                        "detection": None,
                        "fp_per_clean": {"value": 0.0, "low": 0.0, "high": 0.0},
                        "clean_flagged": None,
                        "per_fixture": {},
                    }
                },
            }
        )
    )
    calibration = tmp_path / "calibration.json"
    calibration.write_text(
        json.dumps(
            {
                "repository": "pyledger",
                "in_scope": {"fixes": 7},
                "baseline": None,
                "default": {"labels": 6, "precision": 0.8333, "recall": 0.7143, "yield": 0.857, "yield_over_code_fixes": 0.9123},
            }
        )
    )
    written = report(out, tmp_path / "report" / "index.html", [scores], [calibration])
    page = written.page.read_text()
    assert not re.search(r"\b(src|href)=\"(https?:)?//", page) and "<script" not in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 3 and all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert "nobody" in page and "model-a" in page and "0.8333" in page and "0.9123" in page
    fixtures = miner.open_output(out)
    rows = list(csv.DictReader(open(tmp_path / "report" / "fixtures.csv")))
    assert len(rows) == len(fixtures) and {r["kind"] for r in rows} == {"bug", "clean"}
    summary = json.loads(written.summary.read_text())
    assert summary["fixtures"] == len(fixtures) and summary["scores"][0]["reviewers"]["nobody"]
    assert summary["audit"]["ok"] is True and "The audit passes" in page
    assert all(f.id in page for f in fixtures)  # the per-fixture table
    # The same fixture set gives the same page.
    again = report(out, tmp_path / "again" / "index.html", [scores], [calibration])
    assert again.page.read_text() == page


def test_a_judged_set_says_what_its_screening_cost(samples: dict, tmp_path: Path) -> None:
    from fake_endpoint import serve

    out = tmp_path / "out"
    with serve() as endpoint:
        judge = miner.JudgeCommand(f"miner judge --url {endpoint.url} --model m")
        miner.build([samples["pyledger"].path], out, miner.load_config(), miner.BuildOptions(judge=judge), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    written = report(out, tmp_path / "report" / "index.html")
    page = written.page.read_text()
    assert f"Screened by a judge (<code>--judge</code>): {manifest['judge']['verdicts']} verdicts" in page
    assert f"{manifest['judge']['input_tokens']:,} input" in page and manifest["judge"]["input_tokens"] > 0
    plain = tmp_path / "plain"
    miner.build([samples["pyledger"].path], plain, miner.load_config(), progress=False)
    assert "Screened by a judge" not in report(plain, tmp_path / "r2" / "index.html").page.read_text()
