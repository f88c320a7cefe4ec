#!/usr/bin/env python3
"""Fixes what swift-argument-parser's generate-manual leaves in a page that man --warnings (and lintian)
reject: the commands' discussions are copied in as they are written for --help, so a blank line between
paragraphs becomes an empty input line, and an indented block (an exit status table, an example) would be
refilled into one paragraph. Blank lines become .Pp; runs of indented lines become literal displays. And
generate-manual drops every non-ASCII character (an ellipsis, an arrow): generate-docs.sh hands it the help
with each one spelled @@U+XXXX@@, which becomes groff's \[uXXXX] here.

Usage: scripts/deb/tidy-mdoc.py PAGE   (rewrites PAGE in place)
"""
import re
import sys

path = sys.argv[1]
lines = open(path, encoding="utf-8").read().split("\n")
trailing_newline = lines and lines[-1] == ""
if trailing_newline:
    lines.pop()
out = []
literal = False
for line in lines:
    indented = line.startswith(" ") and line.strip() != ""
    if literal and not indented:
        out.append(".Ed")
        literal = False
    if indented:
        if not literal:
            out.append(".Bd -literal -offset indent")
            literal = True
        # generate-manual has escaped backslashes already.
        text = line
        out.append("\\&" + text if text.lstrip().startswith((".", "'")) else text)
    elif line.strip() == "":
        # Two blank lines in a row, or one right after a paragraph break, make one break.
        if out and out[-1] != ".Pp":
            out.append(".Pp")
    else:
        out.append(line)
if literal:
    out.append(".Ed")
# A break right before a list item or the end of a list is what mdoc warns about; drop it.
tidy = []
for index, line in enumerate(out):
    following = out[index + 1] if index + 1 < len(out) else ""
    if line == ".Pp" and (following.startswith((".It", ".El", ".Sh", ".Ss", ".Bd")) or following == ""):
        continue
    tidy.append(line)
tidy = [re.sub(r"@@U\+([0-9A-F]{4,6})@@", lambda m: "\\[u" + m.group(1) + "]", line) for line in tidy]
open(path, "w", encoding="utf-8").write("\n".join(tidy) + ("\n" if trailing_newline else ""))
