"""``miner report``: one page that shows a fixture set, and its scores, at a glance.

The page is self-contained: plots are PNG images embedded in it (matplotlib), it is made from a
template (jinja2), it needs no JavaScript and asks nothing of the network. Beside it go
``summary.json`` and CSV tables of what it shows. Plotting and templating are the ``report`` extra.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from miner.commands.audit import audit
from miner.commands.score import strongest_tier
from miner.core.config import TIERS, load_config
from miner.core.errors import MinerError
from miner.core.output import FixtureSet, dumps, open_output
from miner.stages.write import write_atomic


@dataclass(frozen=True)
class Written:
    page: Path
    summary: Path
    tables: list[Path]


def _pct(x: dict[str, float] | None) -> str:
    return "-" if not x else f"{x['value'] * 100:.0f}% [{x['low'] * 100:.0f}-{x['high'] * 100:.0f}%]"


def _num(x: dict[str, float] | None) -> str:
    return "-" if not x else f"{x['value']:.2f} [{x['low']:.2f}-{x['high']:.2f}]"


def report(out: Path, to: Path, scores: Sequence[Path] = (), calibrations: Sequence[Path] = ()) -> Written:
    """Write the page for the fixture set at ``out`` to ``to``, with summary.json and CSVs beside it;
    ``scores`` are ``miner score --json`` outputs, ``calibrations`` ``miner calibrate --json`` ones."""
    try:
        import jinja2
        import matplotlib
    except ImportError:
        raise MinerError('miner report needs the report extra: pip install "miner[report]"') from None
    matplotlib.use("Agg")
    fixtures = open_output(out)
    answers = list(fixtures.answers())
    reports = [_json(path, "--scores", "miner score --json") for path in scores]
    calibrated = [_json(path, "--calibration", "miner calibrate --json") for path in calibrations]
    tiers = Counter(tier for a in answers if (tier := strongest_tier(a)))
    by_kind_split = sorted(Counter((a.kind, a.split) for a in answers).items())
    manifest = fixtures.manifest
    fresh = [
        (name, day, f"{manifest.fresh.get(name, {}).get('dev', 0)} / {manifest.fresh.get(name, {}).get('heldout', 0)}")
        for name, day in sorted(manifest.cutoffs.items())
    ]
    dropped = [
        (r.name, stage, reason, n)
        for r in manifest.repositories
        for stage, reasons in r.dropped.items()
        for reason, n in sorted(reasons.items())
    ]
    audited = audit(out, load_config())
    findings = Counter(f.check for f in audited.findings)
    per_fixture = _per_fixture(answers, reports)
    summary = {
        "fixtures": len(answers),
        "audit": {"ok": audited.ok, "findings": dict(sorted(findings.items()))},
        "by_kind_split": {f"{k}/{s}": n for (k, s), n in by_kind_split},
        "tiers": dict(sorted(tiers.items())),
        "repositories": [r.model_dump(mode="json") for r in manifest.repositories],
        "cutoffs": manifest.cutoffs,
        "fresh": manifest.fresh,
        "scores": reports,
        "calibrations": calibrated,
    }
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters.update(pct=_pct, num=_num)
    from miner.commands.export import canary

    template = (resources.files("miner.commands") / "templates" / "report.html.j2").read_text(encoding="utf-8")
    page = env.from_string(template).render(
        name=out.name,
        manifest=manifest,
        total=len(answers),
        canary=canary(fixtures),
        repositories=manifest.repositories,
        by_kind_split=[(k, s, n) for (k, s), n in by_kind_split],
        tiers=sorted(tiers.items(), key=lambda t: TIERS.index(t[0])),
        fresh=fresh,
        dropped=dropped,
        plots=_plots(fixtures, answers, manifest.cutoffs),
        scores=reports,
        audit_ok=audited.ok,
        audit_findings=sorted(findings.items()),
        per_fixture=per_fixture,
        calibrations=calibrated,
        reviewers=sorted({name for r in reports for name in r["reviewers"]}),
    )
    to.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(to, page)
    summary_path = to.with_name("summary.json")
    write_atomic(summary_path, dumps(summary))
    tables = [
        _csv(
            to.with_name("fixtures.csv"),
            ["id", "repository", "kind", "split", "head_date", "tier"],
            [
                [
                    a.id,
                    a.repository,
                    a.kind,
                    a.split,
                    a.head_date,
                    strongest_tier(a) or "",
                ]
                for a in answers
            ],
        ),
        _csv(to.with_name("dropped.csv"), ["repository", "stage", "reason", "count"], [list(r) for r in dropped]),
    ]
    return Written(page=to, summary=summary_path, tables=tables)


def _per_fixture(answers: list[Any], reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row a fixture: what it is, and each reviewer's recall (bug) or false alarms (clean) on it."""
    rows = []
    for a in answers:
        row: dict[str, Any] = {"id": a.id, "repository": a.repository, "kind": a.kind, "split": a.split, "scores": {}}
        for r in reports:
            for name, reviewer in r["reviewers"].items():
                got = reviewer.get("per_fixture", {}).get(a.id)
                if got is not None:
                    value = got["recall"] if a.kind == "bug" else got["false_alarms"]
                    row["scores"][name] = "-" if value is None else (f"{value:.0%}" if a.kind == "bug" else f"{value:g}")
        rows.append(row)
    return rows


def _json(path: Path, flag: str, command: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MinerError(f"{flag} {path} is not the JSON of `{command}` ({exc})") from None


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    write_atomic(path, buffer.getvalue())
    return path


def _plots(fixtures: FixtureSet, answers: list[Any], cutoffs: dict[str, str]) -> dict[str, str]:
    import matplotlib.pyplot as plt

    def png(figure: Any) -> str:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
        plt.close(figure)
        return base64.b64encode(buffer.getvalue()).decode()

    quarter = lambda d: f"{d[:4]}-Q{(int(d[5:7]) - 1) // 3 + 1}"  # noqa: E731
    seen = sorted({quarter(a.head_date) for a in answers})
    quarters = _between(seen[0], seen[-1]) if seen else ["-"]
    figure, axis = plt.subplots(figsize=(9, 3))
    bottom = [0] * len(quarters)
    for kind in ("bug", "clean"):
        counts = Counter(quarter(a.head_date) for a in answers if a.kind == kind)
        heights = [counts.get(q, 0) for q in quarters]
        axis.bar(range(len(quarters)), heights, bottom=bottom, label=kind)
        bottom = [b + h for b, h in zip(bottom, heights)]
    for name, day in cutoffs.items():
        q = quarter(day)
        if q in quarters:
            axis.axvline(quarters.index(q), color="k", linestyle="--")
            axis.text(quarters.index(q), max(bottom or [1]), f" {name}", va="top")
    step = max(1, len(quarters) // 12)
    axis.set_xticks(range(0, len(quarters), step), quarters[::step], rotation=45, ha="right")
    axis.set_ylabel("fixtures")
    axis.legend()
    timeline = png(figure)

    sizes: dict[str, list[int]] = {"bug": [], "clean": []}
    for fixture in fixtures:
        sizes[fixture.kind].append(
            sum(1 for line in fixture.visible.diff.split("\n") if line[:1] in "+-" and not line.startswith(("+++", "---")))
        )
    figure, axis = plt.subplots(figsize=(9, 3))
    axis.hist([sizes["bug"] or [0], sizes["clean"] or [0]], bins=30, label=["bug", "clean"])
    axis.set_xlabel("changed lines in the visible diff")
    axis.legend()
    size_plot = png(figure)

    figure, axis = plt.subplots(figsize=(9, 3))
    axis.hist([a.observed_days or 0 for a in answers if a.kind == "clean"] or [0], bins=30)
    axis.set_xlabel("days a clean change was observed before the mined commit")
    observed = png(figure)
    return {"timeline": timeline, "sizes": size_plot, "observed": observed}


def _between(first: str, last: str) -> list[str]:
    """Every quarter from ``first`` to ``last`` (``2019-Q3``), so quiet quarters show as gaps."""
    year, q = int(first[:4]), int(first[-1])
    out = []
    while f"{year}-Q{q}" <= last:
        out.append(f"{year}-Q{q}")
        year, q = (year + 1, 1) if q == 4 else (year, q + 1)
    return out
