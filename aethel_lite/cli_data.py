"""``aethel data``: download or verify the public evaluation data.

Reached through :data:`aethel_lite.cli.COMMANDS`, so only ``aethel data`` imports the downloader.
"""

from __future__ import annotations

import argparse
import json

from .data import download

__all__ = ["cmd_data"]


def cmd_data(args: argparse.Namespace) -> int:
    """``aethel data download|verify``: fetch the data into ``--dest``, or check what is there (exit 1
    when a file is missing or differs)."""
    if args.action == "download":
        download.download_data(args.dest, progress=not args.quiet)
    else:
        report = download.verify_data(args.dest)
        print(json.dumps(report, indent=2, sort_keys=True))
        if any(v != "ok" for v in report.values()):
            return 1
    return 0
