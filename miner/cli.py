"""The command line: parse, load config, call the library, print.

Errors that are the user's to fix (``MinerError``) become one line on stderr and exit 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from miner.build import build, summary_table
from miner.config import TIERS, load_config
from miner.errors import MinerError
from miner.explain import explain

F = TypeVar("F", bound=Callable[..., Any])
CONTEXT = {"help_option_names": ["-h", "--help"]}


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MinerError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted: nothing was written to the output directory", err=True)
            ctx.exit(130)


def config_option(func: F) -> F:
    return click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
                        help="YAML file overriding miner's defaults (see README, Configuration).")(func)


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(package_name="miner")
def main() -> None:
    """Mine git history into bug and clean fixtures for evaluating AI code reviewers."""


@main.command("build", context_settings=CONTEXT)
@click.argument("repos", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path), default=Path("fixtures_out"), show_default=True,
              help="Output directory; must be new or empty unless --force.")
@click.option("--rev", default="HEAD", show_default=True, help="Revision to mine in every repository.")
@click.option("--force", is_flag=True, help="Replace an existing miner output at --out.")
@click.option("--min-tier", type=click.Choice(TIERS), default=None,
              help="Weakest evidence tier kept (default from config: blame).")
@click.option("--description", type=click.Choice(["original", "title", "none"]), default=None,
              help="What the reviewer sees of the commit message (default: original, sanitized).")
@click.option("--seed", type=int, default=None, help="Seed for the clean sample.")
@click.option("--blame-only", is_flag=True,
              help="Ignore trailers and reverts; label by blame alone (to score blame against them).")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@config_option
def build_cmd(repos: tuple[Path, ...], out: Path, rev: str, force: bool, min_tier: str | None,
              description: str | None, seed: int | None, blame_only: bool, as_json: bool, quiet: bool,
              config_path: Path | None) -> None:
    """Mine REPOS into a fixture set at --out.

    Example:

        miner build path/to/repo --out fixtures_out
    """
    config = load_config(config_path)
    overrides: dict[str, dict[str, Any]] = {}
    if min_tier or blame_only:
        overrides["labels"] = {**({"min_tier": min_tier} if min_tier else {}),
                               **({"blame_only": True} if blame_only else {})}
    if description:
        overrides["strip"] = {"description": description}
    config = config.with_overrides(**overrides)
    if seed is not None:
        config = config.model_copy(update={"seed": seed})
    log = (lambda _msg: None) if quiet else (lambda msg: click.echo(msg, err=True))
    result = build(list(repos), out, config, rev=rev, force=force, progress=not quiet and sys.stderr.isatty(),
                   log=log)
    if as_json:
        click.echo(json.dumps({"out": str(result.out), "fixtures": result.fixtures,
                               "repositories": [r.to_json() for r in result.reports]}, indent=2, sort_keys=True))
    else:
        click.echo(summary_table(result), err=True)


@main.command("explain", context_settings=CONTEXT)
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.argument("fixture_id")
def explain_cmd(out: Path, fixture_id: str) -> None:
    """Show how the label of FIXTURE_ID in the build output OUT was made.

    Example:

        miner explain fixtures_out fx-4y7vckxlnpitlj5v
    """
    click.echo(explain(out, fixture_id))


if __name__ == "__main__":
    main()
