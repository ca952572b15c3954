"""The README is a front page for the first hour; the rest lives in docs/ behind a table of
contents, and no link between them leads nowhere (issue 38, item 6)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def sections(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", FENCE.sub("", text), re.MULTILINE)


def anchors(path: Path) -> set[str]:
    """The fragment ids a Markdown renderer gives the page's headings: lower case, punctuation
    dropped, spaces as hyphens, a repeated heading numbered from 1."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text()), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_the_readme_holds_the_first_hour_only() -> None:
    text = README.read_text()
    assert len(text.splitlines()) < 300
    assert sections(text) == [
        "Two commands",
        "Quick start",
        "Benchmarks",
        "Deploying",
        "Other languages",
        "Where to read next",
    ]
    assert "make run" in text
    assert "make test" in text
    assert "MEMORY_ADDRESS" in text.split("## Benchmarks")[0]  # the quick start says it
    benchmarks = text.split("## Benchmarks")[1].split("## ")[0]
    assert len(re.findall(r"^\| figure \|", benchmarks, re.MULTILINE)) == 1  # one table


def test_every_page_is_in_the_table_of_contents() -> None:
    listed = set(LINK.findall((DOCS / "README.md").read_text()))
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert sorted(pages - {link.split("#")[0] for link in listed}) == []


def test_every_link_between_the_pages_leads_somewhere() -> None:
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in LINK.findall(FENCE.sub("", page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue  # another site
            file, _, fragment = target.partition("#")
            resolved = (page.parent / file).resolve() if file else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_evidence_rules_keep_their_heading() -> None:
    """Where the evidence rules are found (and a grounding section will be added beside them)."""
    assert "evidence-rules" in anchors(DOCS / "behaviour.md")
