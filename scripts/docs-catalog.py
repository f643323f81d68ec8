#!/usr/bin/env python3
"""Assembles the DocC catalog of the Convey module from Docs/, for scripts/docs.

Usage: scripts/docs-catalog.py DOCS_FOLDER CATALOG_FOLDER

The pages stay where GitHub readers read them (Docs/*.md, linking each other as `page.md`); the
catalog gets a copy of each, line for line, so DocC's diagnostics point at the same lines:
- a link to another page, `[text](page.md)` or `[text](page.md#heading)`, and one within the page,
  `[text](#heading)`, becomes a DocC link (`doc:page`, `doc:page#Heading`), so a link to a page or
  heading that does not exist is a warning too;
- Docs/README.md, the index, becomes the module's root page: its first paragraph is the abstract
  and its list of pages the Topics section. A page missing from the index is an error, as is a
  link to a heading that does not exist.
Symbol links (``ConveyServer``, ``DownloadingTask/download()``) are left to DocC, which checks
them against the module's symbol graph.
Exits 1, printing `file:line: error: ...`, on what it finds wrong itself.
"""

import os
import re
import sys

PAGE_LINK = re.compile(r"\]\((?P<page>[A-Za-z0-9_-]+)\.md(?:#(?P<anchor>[^)\s]+))?\)")
LOCAL_LINK = re.compile(r"\]\(#(?P<anchor>[^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
URL_FRAGMENT_ALLOWED = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!$&'()*+,-./:;=?@_~")


def github_slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"`", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def docc_fragment(heading):
    """The anchor DocC gives a heading: words joined by dashes, characters a URL fragment cannot hold removed."""
    text = "-".join(heading.replace("`", "").split())
    return "".join(character for character in text if character in URL_FRAGMENT_ALLOWED)


def headings(path):
    """GitHub anchor -> DocC anchor for every heading below the title, outside code blocks."""
    found, in_code = {}, False
    with open(path, encoding="utf-8") as file:
        for line in file:
            if FENCE.match(line):
                in_code = not in_code
                continue
            match = None if in_code else HEADING.match(line)
            if match and len(match.group(1)) > 1:
                found.setdefault(github_slug(match.group(2)), docc_fragment(match.group(2)))
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    docs, catalog = sys.argv[1:]
    pages = sorted(name[:-3] for name in os.listdir(docs) if name.endswith(".md") and name != "README.md")
    anchors = {page: headings(os.path.join(docs, page + ".md")) for page in pages}
    errors = []

    def rewrite(line, page, path, number):
        def page_link(match):
            target, anchor = match.group("page"), match.group("anchor")
            if target not in anchors:
                errors.append(f"{path}:{number}: error: {target}.md is not a page in {docs}/")
                return match.group(0)
            if anchor is None:
                return f"](doc:{target})"
            if anchor not in anchors[target]:
                errors.append(f"{path}:{number}: error: {target}.md has no heading with the anchor #{anchor}")
                return match.group(0)
            return f"](doc:{target}#{anchors[target][anchor]})"

        def local_link(match):
            anchor = match.group("anchor")
            if page is None or anchor not in anchors[page]:
                errors.append(f"{path}:{number}: error: {path} has no heading with the anchor #{anchor}")
                return match.group(0)
            return f"](doc:{page}#{anchors[page][anchor]})"

        return LOCAL_LINK.sub(local_link, PAGE_LINK.sub(page_link, line))

    os.makedirs(catalog, exist_ok=True)
    for page in pages:
        source = os.path.join(docs, page + ".md")
        in_code = False
        with open(source, encoding="utf-8") as file, open(os.path.join(catalog, page + ".md"), "w", encoding="utf-8") as output:
            for number, line in enumerate(file, 1):
                if FENCE.match(line):
                    in_code = not in_code
                output.write(line if in_code else rewrite(line, page, source, number))

    # The index: title, abstract (its first paragraph), then the list of pages.
    index = os.path.join(docs, "README.md")
    with open(index, encoding="utf-8") as file:
        lines = file.read().splitlines()
    abstract, listed = [], []
    for number, line in enumerate(lines[1:], 2):
        link = PAGE_LINK.search(line)
        if line.startswith("- ") and link:
            listed.append(link.group("page"))
            rewrite(line, None, index, number)
        elif line.strip() and not listed:
            abstract.append(line.strip())
    for page in pages:
        if page not in listed:
            errors.append(f"{index}:1: error: {page}.md is not listed in the index")
    with open(os.path.join(catalog, "Convey.md"), "w", encoding="utf-8") as output:
        output.write("# ``Convey``\n\n" + " ".join(abstract or ["Talk to HTTP servers."]) + "\n\n## Topics\n\n### Guides\n\n")
        output.write("".join(f"- <doc:{page}>\n" for page in listed if page in anchors))
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
