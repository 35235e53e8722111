"""The README as a front door and the docs site behind it (ADR 0066): the README stays short and
keeps its two-command quick start, its links and the site's nav lead to pages that exist, no page
names a machine's path, and the site's hook shows a link to a repository file as its path.
`mkdocs build --strict` itself runs in .ci/run, with the `docs` extra."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import yaml

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")


def _hook() -> ModuleType:
    path = REPO / "docs/hooks/repository_links.py"
    spec = importlib.util.spec_from_file_location("repository_links", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[Path]:
    return sorted(p for p in (REPO / "docs").rglob("*.md") if "decisions" not in p.parts)


def test_the_readme_is_a_front_door_with_the_marked_test_command() -> None:
    assert len(README.splitlines()) <= 300
    quick = README.split("## Quick start\n", 1)[1].split("\n### ", 1)[0]
    fences = re.findall(r"^```\n(.*?)\n```", quick, re.S | re.M)
    assert len(fences) == 2
    assert "pip install -q ." in fences[0] and "ssw demo" in fences[0]
    assert README.count("<!-- test-command -->\n```\n") == 1
    assert "-m pytest" in fences[1]


def test_every_link_of_the_readme_and_the_pages_leads_to_a_file() -> None:
    for source in [REPO / "README.md", *_pages()]:
        text = re.sub(r"^```.*?^```", "", source.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in LINK.findall(text):
            if "://" in target:
                continue
            assert (source.parent / target).exists(), f"{source.relative_to(REPO)}: {target}"


def test_the_nav_lists_every_page_and_the_readme_links_each() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = {next(iter(entry.values())) for entry in config["nav"]}
    pages = {p.relative_to(REPO / "docs").as_posix() for p in _pages()}
    assert in_nav == pages | {"decisions/README.md"}
    linked = {t.removeprefix("docs/") for t in LINK.findall(README) if t.startswith("docs/")}
    assert pages - {"index.md", "runs/README.md"} <= linked


def test_no_page_names_a_machine_path() -> None:
    machine = re.compile(r"/(?:home|Users|root|work|tmp)/[\w.-]+|[A-Z]:\\\\")
    for page in [REPO / "README.md", REPO / "mkdocs.yml", *_pages()]:
        found = machine.findall(page.read_text(encoding="utf-8"))
        assert found == [], f"{page.relative_to(REPO)}: {found}"


def test_the_hook_shows_a_repository_file_as_its_path_and_leaves_pages_and_code() -> None:
    rewrite = _hook().rewrite
    text = (
        "[evidence](../claims/evidence/C-001.json), [`src/x.py`](../src/x.py), "
        "[Gates](gates.md#pre-flight), [web](https://example.com/a), `[c](../src/c.py)`\n\n"
        "```\n[fenced](../src/f.py)\n```\n"
    )
    assert rewrite(text, "claims.md", None) == (
        "evidence (`claims/evidence/C-001.json`), `src/x.py`, "
        "[Gates](gates.md#pre-flight), [web](https://example.com/a), `[c](../src/c.py)`\n\n"
        "```\n[fenced](../src/f.py)\n```\n"
    )
    deep = rewrite("[record](../../bench/runs/x/)", "decisions/0001.md", "https://git.example/s")
    assert deep == "[record](https://git.example/s/blob/HEAD/bench/runs/x)"
    assert rewrite("[up](../../README.md)", "index.md", None) == "[up](../../README.md)"
