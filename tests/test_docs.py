"""The documentation by audience: a short README for students and instructors, the rest in docs/."""
import re

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_is_at_most_10_kb():
    assert len(README.encode()) <= 10 * 1024, len(README.encode())


def test_every_page_the_readme_links_exists_and_every_page_is_linked():
    linked = set(re.findall(r"\]\((docs/[^)]+\.md)\)", README))
    on_disk = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert linked == on_disk, (sorted(linked - on_disk), sorted(on_disk - linked))


def test_every_make_target_the_readme_names_has_a_rule():
    makefile = (ROOT / "Makefile").read_text()
    rules = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    named = set(re.findall(r"`make ([a-z][a-z-]*)", README))
    assert named and named <= rules, sorted(named - rules)
