"""Markdown helpers for the docs build."""

from mdtools.anchors import anchor, unique_anchors
from mdtools.headings import Heading, parse_headings

__all__ = ["Heading", "anchor", "parse_headings", "unique_anchors"]
