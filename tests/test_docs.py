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


def test_no_page_narrates_the_kits_past_versions():
    """Each page says what is true now and how to check it again; git keeps the history ("stop 12", ...)."""
    pages = {"README.md": README, **{f"docs/{p.name}": p.read_text() for p in (ROOT / "docs").glob("*.md")}}
    told = {name: found for name, text in pages.items() if (found := re.findall(r".{0,30}\bstop [0-9].{0,30}", text, re.I))}
    assert told == {}, told


def test_the_scaling_page_fits_in_a_few_screens():
    assert len((ROOT / "docs" / "scaling.md").read_bytes()) < 8 * 1024


def test_the_scaling_pages_headline_is_what_the_bench_computes_from_its_table():
    from bench.__main__ import Side, headline

    page = (ROOT / "docs" / "scaling.md").read_text()
    rows = {int(cells[0]): [float(c) for c in cells[1:5]] for line in page.splitlines()
            if (cells := [c.strip() for c in line.strip("| ").split("|")])[0].isdigit()}
    both = [(n, Side(kit * n, kit_job * n, 0, 0), Side(stock * n, stock_job * n, 0, 0))
            for n, (kit, kit_job, stock, stock_job) in sorted(rows.items())[-2:]]
    printed = page.split("```\n", 2)[1].splitlines()
    notebook = float(printed[-1].removeprefix("one notebook: ").removesuffix(" s"))
    assert headline(both, notebook) == printed
