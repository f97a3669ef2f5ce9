"""The tool commands that touch neither a site nor a content directory: ``schema`` (the content format's JSON Schema
and the settings reference) and ``emulator`` (the sandbox as a server). Registered on the group in
:mod:`cmssync.cli`."""

from __future__ import annotations

import click


@click.command()
@click.option(
    "--kind",
    type=click.Choice(["page", "stack", "file_sidecar", "users", "groups", "settings", "plan", "events", "status"]),
    help="Only the schema of one kind of file (for editors that do not follow #/$defs/… references); plan, events, "
    "status: the machine-readable outputs (plan --format json, a line of apply --format json, status --format json).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "markdown"]),
    default="json",
    show_default=True,
    help="markdown: the settings reference, every setting with its variables (docs/settings.md; --kind settings).",
)
def schema(kind: str | None, output_format: str) -> None:
    """Print the JSON Schema of the content format (for editors and the YAML language server), or of an output."""
    import json

    from cmssync.content.schema import content_schema, schema_for
    from cmssync.render.schemas import SCHEMA_KINDS, output_schema

    if output_format == "markdown":
        if kind != "settings":
            raise click.UsageError("--format markdown renders the settings reference: add --kind settings")
        from cmssync.content.settings_reference import settings_reference

        click.echo(settings_reference(), nl=False)
        return
    if kind is None:
        document = content_schema()
    elif kind in SCHEMA_KINDS:
        document = output_schema(kind)  # type: ignore[arg-type]
    else:
        document = schema_for(kind)
    click.echo(json.dumps(document, indent=2, sort_keys=True))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--db", type=click.Path(dir_okay=False), help="SQLite file; survives restarts (default: temporary).")
@click.option("--seed", default="default", show_default=True, help="default, empty, or a seed file PATH.")
@click.option("--generate", metavar="pages=N,blocks=N,files=N,users=N", help="Generate a large site.")
@click.option("--dialect", type=click.Choice(["concrete", "documented"]), default="concrete", show_default=True)
@click.option("--latency-ms", type=int, default=0, show_default=True, help="Latency added to every request.")
@click.option(
    "--workers", type=click.IntRange(min=0), default=0, show_default=True, help="Capacity model: N workers (0: off)."
)
@click.option(
    "--service-ms", type=click.IntRange(min=0), default=0, show_default=True, help="Capacity model: ms per request."
)
@click.option("--fault", "faults", multiple=True, metavar="RULE", help="e.g. 500:0.1, 429:0.05:retry-after=1.")
@click.option("--client-id", default="sandbox", show_default=True)
@click.option("--client-secret", default="sandbox-secret", show_default=True)
@click.option("--admin-password", default="sandbox-admin", show_default=True)
def emulator(
    host: str,
    port: int,
    db: str | None,
    seed: str,
    generate: str | None,
    dialect: str,
    latency_ms: int,
    workers: int,
    service_ms: int,
    faults: tuple[str, ...],
    client_id: str,
    client_secret: str,
    admin_password: str,
) -> None:
    """Run the sandbox: a faithful emulator of the Concrete CMS REST API 1.0 on loopback."""
    from cmssync.emulator.server import run_emulator
    from cmssync.emulator.settings import Settings

    settings = Settings(
        db=db,
        seed=seed,
        generate=generate,
        dialect=dialect,
        latency_ms=latency_ms,
        workers=workers,
        service_ms=service_ms,
        faults=list(faults),
        client_id=client_id,
        client_secret=client_secret,
        admin_password=admin_password,
    )
    run_emulator(settings, host=host, port=port)
