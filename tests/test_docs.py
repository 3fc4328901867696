"""The documentation stays true: the README's tour runs as written, every link in the README, the CHANGELOG and
docs/ resolves, every key of defaults.yaml and every command and option of the command line is documented, and the
README stays short."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import yaml

from miner.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]

LINK = re.compile(r"(?<!\\)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and indented code lines: links and headings live only there."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            out.append(line)
    return "\n".join(out)


def slug(heading: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in re.finditer(r"^#{1,6} (.+)$", prose(page.read_text(encoding="utf-8")), re.M):
        base = slug(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")  # a repeated heading gets -1, -2, ... as on GitHub
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not checked (no network in tests)
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{page.relative_to(root)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{page.relative_to(root)}: {target} (no heading makes #{anchor})")
    return broken


def test_the_slugs_are_githubs() -> None:
    assert slug("Rebuilding, resuming and `--since`") == "rebuilding-resuming-and---since"
    assert slug("0.10.4 (2026-12-02): the figures to keep") == "0104-2026-12-02-the-figures-to-keep"
    assert slug("`paths`: what kind of file a path is") == "paths-what-kind-of-file-a-path-is"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](there.md#a-heading) [b](there.md#nowhere) [c](gone.md) [d](https://x.invalid/y)\n")
    assert broken_links(page, tmp_path) == [
        "page.md: there.md#nowhere (no heading makes #nowhere)",
        "page.md: gone.md (no such file)",
    ]


def test_every_link_in_the_readme_and_docs_resolves() -> None:
    assert len(PAGES) > 10, "the docs pages were not found"
    broken = [b for page in PAGES for b in broken_links(page)]
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move detail to a page in docs/ (docs/README.md lists them)"


def key_paths(data: dict, prefix: str = "") -> list[str]:
    """Every key of a nested mapping as a dotted path; a mapping's keys below it too (split.cutoffs is a value)."""
    out = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        out.append(path)
        if isinstance(value, dict) and value:
            out += key_paths(value, path + ".")
    return out


def test_every_key_of_the_defaults_is_documented_and_no_other() -> None:
    defaults = yaml.safe_load((ROOT / "miner" / "core" / "defaults.yaml").read_text(encoding="utf-8"))
    keys = set(key_paths(defaults))
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    # A section is documented by its heading (## `labels`: ...), each key by a row of its table.
    rows = set(re.findall(r"^(?:\| |## )`([\w.]+)`", page, re.M))
    assert not keys - rows, f"keys of defaults.yaml with no row in docs/configuration.md: {sorted(keys - rows)}"
    assert not rows - keys, f"docs/configuration.md documents keys defaults.yaml does not have: {sorted(rows - keys)}"


def commands(group: click.Group, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in sorted(group.commands.items()):
        out.append(((*words, name), command))
        if isinstance(command, click.Group):
            out += commands(command, (*words, name))
    return out


def test_every_command_and_option_is_in_the_commands_reference() -> None:
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    missing = []
    for words, command in commands(main):
        heading = f"## `miner {' '.join(words)}`"
        if heading not in page:
            missing.append(heading)
            continue
        section = page.split(heading, 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            for opt in getattr(param, "opts", []) if isinstance(param, click.Option) else []:
                if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", section):
                    missing.append(f"miner {' '.join(words)} {opt}")
    assert not missing, f"not in docs/commands.md (run python scripts/commands_doc.py): {missing}"


def tour_commands() -> str:
    """The shell commands of the README's tour, as written between its markers."""
    text = README.read_text(encoding="utf-8")
    tour = text.split("<!-- tour:begin -->", 1)[1].split("<!-- tour:end -->", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", tour, re.M | re.S)
    return "".join(blocks)


def test_the_readme_tour_covers_the_five_steps() -> None:
    script = tour_commands()
    for step in ("make_sample_repos.py", "miner build", "--judge", "miner review", "miner score", "miner report"):
        assert step in script, f"the README's tour no longer runs {step}"


def test_the_readme_tour_runs_as_written(tmp_path: Path) -> None:
    # The tour is run from a checkout: give it the checkout's scripts, and this interpreter's miner and python.
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", tour_commands()], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tour = tmp_path / "tour"
    default = json.loads((tour / "fixtures" / "manifest.json").read_text())
    judged = json.loads((tour / "judged" / "manifest.json").read_text())
    kinds = [f["kind"] for f in default["fixtures"]]
    assert "bug" in kinds and "clean" in kinds
    # The toy judge refuses some candidates and keeps others, so the judged road shows in the tour.
    assert 0 < len(judged["fixtures"]) < len(default["fixtures"])
    assert "judge" in judged["repositories"][0]["dropped"]
    for name in ("silent", "every-line"):
        runs = (tour / "judged" / "runs" / f"{name}.jsonl").read_text().splitlines()
        assert len(runs) == len(judged["fixtures"])
    assert "recall per bug fixture" in done.stdout
    assert json.loads((tour / "scores.json").read_text())
    assert (tour / "report" / "index.html").stat().st_size > 0
