import argparse
import json
import sys
from typing import TextIO

from export.formats import export

FORMATS = ["csv", "json", "tsv"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="export")
    parser.add_argument("--format", choices=FORMATS, default="csv")
    return parser


def main(argv: list[str], stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    args = build_parser().parse_args(argv)
    records = json.loads(stdin.read())
    stdout.write(export(records, args.format))
    return 0
