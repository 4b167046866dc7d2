#!/usr/bin/env python3
"""doxygen_filter.py FILE: prints FILE as Doxygen should read it (docs/Doxyfile's
FILTER_PATTERNS).

pyhost's public headers document each declaration with a plain C comment right above
it ("documented where declared"), not with Doxygen markup.  This filter turns those
comments into Doxygen comments on the fly, so the headers stay plain C and the
reference cannot drift from them:
  - the file's opening comment becomes its @file text;
  - a comment right above a declaration documents it; when one comment covers several
    declarations in a row (no blank line between), they form a member group that
    shares it (DISTRIBUTE_GROUP_DOC);
  - a comment after code on the same line documents that member (/**< */), and
    `int a, b; /* text */` documents each of a and b;
  - the X-macro PYHOST_STATUS_MAP rows become the documented values of
    enum pyhost_status;
  - a comment followed by a blank line is a free-standing note and stays plain, as do
    the section banners;
  - <word> in comment text is text, not an HTML tag.
Line numbers are kept, so Doxygen's warnings point at the real header lines."""
import re
import sys


def status_rows(text):
    m = re.search(r"#define PYHOST_STATUS_MAP\(X\)(.*?)\n\n", text, re.S)
    return re.findall(r'X\((\w+),\s*(\d+),\s*"([^"]*)"\)', m.group(1)) if m else []


def escape_tags(comment):
    parts = comment.split("`")
    for n, part in enumerate(parts):
        if n % 2:
            parts[n] = part.replace("<", "&lt;").replace(">", "&gt;")
        else:
            parts[n] = re.sub(r"<(/?[A-Za-z][\w. -]*)>", r"\\<\1\\>", part)
    return "`".join(parts)


def is_decl_start(s):
    return s.startswith(("PYHOST_API", "#define", "typedef"))


def covered(lines, j):
    """The last line of the declarations right after the comment ending at line j, and
    how many declarations there are."""
    n = len(lines)
    k, decls, last_end = j + 1, 0, None
    while k < n:
        s = lines[k].strip()
        if not s or s.startswith("/*") or (
                s.startswith("#") and not s.startswith(("#if", "#endif", "#define"))):
            break
        if is_decl_start(s):
            decls += 1
        if s.endswith(";") or (s.startswith("#define") and not s.endswith("\\")):
            last_end = k
        k += 1
    return last_end, decls


def code_line(line, rows):
    """One line of code, with a trailing comment turned into member documentation."""
    indent = line[: len(line) - len(line.lstrip())]
    if rows and "PYHOST_STATUS_MAP(PYHOST_STATUS_ENUM_)" in line:
        return indent + " ".join("PYHOST_%s = %s, /**< %s */" % r for r in rows)
    if re.match(r"\s*#(define|undef) PYHOST_STATUS_ENUM_", line):
        return ""
    m = re.match(r"^(\s*)([A-Za-z_][\w\s]*?[\s*]+)(\w+(?:\s*,\s*\w+)+)\s*;\s*/\*(.*)\*/\s*$", line)
    if m:
        names = [x.strip() for x in m.group(3).split(",")]
        return m.group(1) + " ".join("%s%s; /**<%s*/" % (m.group(2), x, m.group(4)) for x in names)
    m = re.match(r"^(\s*\S.*?)/\*(?!\*)(.*)$", line)
    if m and not m.group(1).strip().startswith("*"):
        return m.group(1) + "/**<" + m.group(2)
    return line


def filter_text(text):
    rows = status_rows(text)
    lines = text.split("\n")
    n = len(lines)
    out = [None] * n
    close_group = set()   # lines whose output starts by closing a member group
    seen_code = False
    i = 0
    while i < n:
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("/*") and not stripped.startswith("/**"):
            j = i
            while "*/" not in lines[j]:
                j += 1
            for k in range(i, j + 1):
                out[k] = lines[k]
            body = stripped[2:]
            if not seen_code:  # the file's opening comment
                seen_code = True
                m = re.match(r"\s*(\S+\.h):\s*(.*)", body)
                out[i] = indent + ("/** @file %s %s" % m.groups() if m else "/**" + body)
            elif not stripped.startswith("/* =====") and j + 1 < n and lines[j + 1].strip():
                out[i] = indent + "/**" + body
                last_end, decls = covered(lines, j)
                if decls >= 2 and last_end is not None:
                    out[i] = indent + "/**@{*/ " + out[i].lstrip()
                    if last_end + 1 < n:
                        close_group.add(last_end + 1)
                    else:
                        out.append("/**@}*/")
            i = j + 1
            continue
        if stripped:
            seen_code = True
        out[i] = code_line(line, rows)
        i += 1
    for k in close_group:
        out[k] = "/**@}*/ " + out[k]
    text = "\n".join(out)
    return re.sub(r"/\*\*.*?\*/", lambda c: escape_tags(c.group(0)), text, flags=re.S)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_text(f.read()))
