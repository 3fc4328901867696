"""``miner split refresh``: rotate the held-out set after it has been exposed.

Retired fixtures (and the rest of their families) move from held-out to dev; the ledger
records the date, the reason and every fixture moved. The output is rewritten in a copy
and swapped into place, so a failure leaves the old output as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

from miner.errors import MinerError
from miner.explain import load_output
from miner.ledger import LEDGER, Ledger, refresh
from miner.write import MANIFEST, dumps, write_atomic


def _read_ids(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MinerError(f"cannot read --retire file {path}: {exc.strerror}; give a file of fixture ids, one a line") from exc
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def refresh_output(out: Path, *, reason: str, date: dt.date, retire_before: dt.datetime | None = None,
                   retire_file: Path | None = None) -> list[str]:
    """Retire held-out fixtures of the output at ``out``; return the ids moved to dev."""
    manifest = load_output(out)
    try:
        ledger = Ledger.model_validate_json((out / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MinerError(f"{out / LEDGER} is missing or damaged; rebuild the output with `miner build --force`") from exc
    answers: dict[str, dict[str, Any]] = {}
    for entry in manifest["fixtures"]:
        answers[entry["id"]] = json.loads((out / entry["answer"]).read_text(encoding="utf-8"))
    retire: set[str] = set()
    if retire_file is not None:
        ids = _read_ids(retire_file)
        unknown = sorted(ids - set(answers))
        if unknown:
            raise MinerError(f"--retire names fixtures not in {out}: {', '.join(unknown[:3])}; check the file")
        retire |= ids
    if retire_before is not None:
        cutoff = retire_before.strftime("%Y-%m-%dT%H:%M:%SZ")
        retire |= {fid for fid, a in answers.items() if a["split"] == "heldout" and a["head_date"] < cutoff}
    new = refresh(ledger, retire, date, reason)
    moved = list(new.refreshes[-1].retired)
    staging = out.parent / f".miner-refresh-{out.name}"
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(out, staging)
    try:
        for fid in moved:
            answer = dict(answers[fid], split="dev")
            write_atomic(staging / "answers" / f"{fid}.json", dumps(answer))
        for entry in manifest["fixtures"]:
            if entry["id"] in moved:
                entry["split"] = "dev"
        fresh: dict[str, dict[str, int]] = {name: {} for name in manifest.get("fresh", {})}
        for entry in manifest["fixtures"]:
            answer = answers[entry["id"]]
            for name, is_fresh in answer.get("fresh", {}).items():
                if name in fresh and is_fresh:
                    fresh[name][entry["split"]] = fresh[name].get(entry["split"], 0) + 1
        manifest["fresh"] = {k: dict(sorted(v.items())) for k, v in fresh.items()}
        write_atomic(staging / MANIFEST, dumps(manifest))
        write_atomic(staging / LEDGER, dumps(new.model_dump(mode="json")))
        old = out.parent / f".miner-old-{out.name}"
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return moved
