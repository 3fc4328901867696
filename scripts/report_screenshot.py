"""Open a `miner report` page in headless Chromium, take a screenshot, and check what it loaded.

    python scripts/report_screenshot.py report/index.html shot.png [--width 1200 --height 1600]

Chromium comes from the system packages (`apt-get install chromium`). The page must load no image that
fails and ask nothing of the network: Chromium runs with every proxy pointed nowhere, so a request
would fail and be listed in its log; the script exits 1 if any `http` request or broken image shows.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("page", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=1600)
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        print("error: no Chromium found; install it (apt-get install chromium)", file=sys.stderr)
        return 2
    page = args.page.resolve()
    html = page.read_text(encoding="utf-8")
    external = re.findall(r'(?:src|href)="((?:https?:)?//[^"]+)"', html)
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--proxy-server=127.0.0.1:9",
            f"--screenshot={args.png.resolve()}",
            f"--window-size={args.width},{args.height}",
            "--enable-logging=stderr",
            "--v=0",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    failed = [line for line in proc.stderr.splitlines() if "net::ERR" in line or "Failed to load resource" in line]
    print(
        f"screenshot: {args.png} ({args.png.stat().st_size if args.png.exists() else 0} bytes); "
        f"{len(external)} external references, {len(failed)} failed loads"
    )
    for line in external + failed:
        print("  " + line)
    return 1 if external or failed or not args.png.exists() else 0


if __name__ == "__main__":
    sys.exit(main())
