"""Run miner's promptfoo export with promptfoo itself, against a provider that always answers "[]".

    npm install --prefix /tmp/pf promptfoo
    python scripts/promptfoo_check.py fixtures_out --promptfoo /tmp/pf/node_modules/.bin/promptfoo

The silent answer must pass every clean fixture and score 0 on every bug fixture: that shows the
export loads, the prompt renders, and the shipped assertion scores with miner's matching. Prints the
counts; exits 1 when they are not as they must be.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import miner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--promptfoo", default="promptfoo", help="the promptfoo command (from npm)")
    args = parser.parse_args()
    kinds = {a.id: a.kind for a in miner.open_output(args.out).answers()}
    with tempfile.TemporaryDirectory(prefix="miner-promptfoo-") as tmp:
        where = Path(tmp) / "export"
        miner.export(args.out, "promptfoo", where, miner.Selection(with_answers=True))
        (where / "silent.py").write_text("def call_api(prompt, options, context):\n    return {'output': '[]'}\n")
        config = (where / "promptfooconfig.yaml").read_text().replace("- id: echo", "- id: file://silent.py")
        (where / "promptfooconfig.yaml").write_text(config)
        env = {
            **os.environ,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_PYTHON": sys.executable,
        }
        subprocess.run(
            [args.promptfoo, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "-o", "results.json"],
            cwd=where,
            env=env,
            capture_output=True,
            check=False,
            timeout=1800,
        )
        results = json.loads((where / "results.json").read_text())["results"]["results"]
    wrong = []
    for result in results:
        fid = result["testCase"]["metadata"]["fixture_id"]
        expected = (True, 1.0) if kinds[fid] == "clean" else (False, 0.0)
        if (result["success"], float(result["score"])) != expected:
            wrong.append(fid)
    clean = sum(k == "clean" for k in kinds.values())
    print(
        f"promptfoo ran {len(results)} tests ({clean} clean, {len(kinds) - clean} bug): "
        f"{len(results) - len(wrong)} scored as they must, {len(wrong)} not {wrong[:5]}"
    )
    return 1 if wrong or len(results) != len(kinds) else 0


if __name__ == "__main__":
    sys.exit(main())
