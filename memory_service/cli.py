"""memoryctl: the memory service for people. "What does the assistant remember about X, and
where did it come from?" in one command: `memoryctl about "meetings"`.

This module is the console entry point (`memoryctl`, `python -m memory_service.cli`): the
parser, the command table and `main`. The commands and the connection are in
`memory_service/memoryctl/`, the review walk in `memory_service/review_cli.py`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import grpc

from memory_service import review_cli
from memory_service.memoryctl import archives, memories
from memory_service.memoryctl.archives import FORMATS
from memory_service.memoryctl.client import Cli
from memory_service.memoryctl.connection import (
    DEFAULT_ADDRESS,
    Refused,
    connect,
    explain,
    find_credentials,
)


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="memoryctl", description=__doc__.split("\n\n")[0])
    main.add_argument("--json", action="store_true", help="print the API's JSON instead of tables")
    commands = main.add_subparsers(dest="command", required=True)
    about = commands.add_parser("about", help="what is remembered about X, and where it came from")
    about.add_argument("text")
    about.add_argument(
        "--limit", type=int, default=10, help="memories recall adds by meaning (1-50)"
    )
    listing = commands.add_parser("list", help="memories you can see")
    listing.add_argument("--key", default="")
    listing.add_argument("--text", default="")
    for name in ("show", "history"):
        command = commands.add_parser(name, help="a memory's full history with provenance")
        command.add_argument("name", help="memories/{id}")
    correct = commands.add_parser("correct", help="write a new revision")
    correct.add_argument("name")
    correct.add_argument("value")
    correct.add_argument("--evidence", required=True, help="conversations/{c}/messages/{m}")
    correct.add_argument("--effective", default="", help="ISO date-time it takes effect")
    confirm = commands.add_parser("confirm", help="confirm a candidate revision")
    confirm.add_argument("revision", help="memories/{id}/revisions/{n}")
    delete = commands.add_parser("delete", help="delete a memory and print the receipt")
    delete.add_argument("name")
    context = commands.add_parser("context", help="the context a new call would get")
    context.add_argument("--conversation", default="")
    context.add_argument("--customer", action="append", default=[])
    context.add_argument("--query", default="")
    export = commands.add_parser(
        "export", help="export (JSON Lines for a restore, or CSV for people)"
    )
    export.add_argument(
        "--parent", default="users/" + os.environ.get("MEMORY_USER", "mara"), help="or tenant"
    )
    export.add_argument("--include-deleted", action="store_true")
    export.add_argument("--since", default="", help="ISO date-time: an incremental export")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("--output", default="-")
    imported = commands.add_parser(
        "import", help="import an archive for review, or restore an export (--format export)"
    )
    imported.add_argument("file")
    imported.add_argument("--format", choices=sorted(FORMATS), required=True)
    imported.add_argument(
        "--merge", action="store_true", help="restore into a tenant with data (restorer role)"
    )
    review_cli.add_parser(commands)
    return main


COMMANDS: dict[str, Any] = {
    "about": memories.cmd_about, "list": memories.cmd_list, "show": memories.cmd_history,
    "history": memories.cmd_history, "correct": memories.cmd_correct,
    "confirm": memories.cmd_confirm, "delete": memories.cmd_delete,
    "context": memories.cmd_context, "export": archives.cmd_export,
    "import": archives.cmd_import, "review": review_cli.cmd_review,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    address = os.environ.get("MEMORY_ADDRESS", DEFAULT_ADDRESS)
    try:
        channel = connect(address)
        credentials = find_credentials()
        cli = Cli(channel, address, credentials.token, args.json)
        COMMANDS[args.command](cli, args)
    except Refused as error:
        print(f"memoryctl: {error}", file=sys.stderr)
        return 1
    except grpc.RpcError as error:
        print(f"memoryctl: {explain(error, address, credentials)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
