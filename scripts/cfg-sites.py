#!/usr/bin/env python3
"""Counts the `feature = "..."` conditions in src/ (in #[cfg], #![cfg], #[cfg_attr] and cfg!)
per capability: inside the capability's own folder (src/<feature>/) and outside it. Issue #40's
measure is at most BOUND sites outside a capability's folder; this prints the table, and with
--check fails when a capability listed in HELD is over the bound (a capability is listed there
once it reaches it, so that it cannot slip back). Comments are not counted.

Usage: cfg-sites.py [--check] [ROOT]     (ROOT defaults to the repository holding this script)
"""
import os
import re
import sys

BOUND = 3
# Capabilities that reached the bound: the lint layer fails if one goes over it again.
HELD = ["pacing", "throttle", "hedge", "coalesce", "share", "outbox", "stale", "failover", "resume", "sse"]

CONDITION = re.compile(r'\bfeature\s*=\s*"([A-Za-z0-9_-]+)"')
CFG = re.compile(r"#!?\[\s*cfg(?:_attr)?\s*\(|\bcfg!\s*\(")


def capabilities(root):
    """The Cargo features that name a capability: every feature but `default` and `full`."""
    names, inside = [], False
    with open(os.path.join(root, "Cargo.toml"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line.startswith("["):
                inside = line == "[features]"
                continue
            m = re.match(r"([A-Za-z0-9_-]+)\s*=", line)
            if inside and m and m.group(1) not in ("default", "full"):
                names.append(m.group(1))
    return names


def strip_comments(text):
    """The code of a Rust file without its comments (line, doc and block); strings kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def conditions(code):
    """Every feature named inside a cfg condition of `code`, in order."""
    found = []
    for m in CFG.finditer(code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            j += 1
        found += CONDITION.findall(code[m.end() : j])
    return found


def count(root):
    caps = capabilities(root)
    table = {c: {"in": 0, "out": 0, "files": set()} for c in caps}
    src = os.path.join(root, "src")
    for folder, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                code = strip_comments(f.read())
            for feature in conditions(code):
                if feature not in table:
                    continue
                row = table[feature]
                if rel.startswith(feature + "/"):
                    row["in"] += 1
                else:
                    row["out"] += 1
                    row["files"].add(rel)
    return table


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = count(root)
    print(f"{'capability':<12} {'inside':>6} {'outside':>7} {'files':>5}  (bound: {BOUND} outside src/<capability>/)")
    for cap, row in table.items():
        mark = "ok" if row["out"] <= BOUND else "over"
        print(f"{cap:<12} {row['in']:>6} {row['out']:>7} {len(row['files']):>5}  {mark}")
    total = sum(r["out"] for r in table.values())
    print(f"{'total':<12} {sum(r['in'] for r in table.values()):>6} {total:>7}")
    slipped = [c for c in HELD if c in table and table[c]["out"] > BOUND]
    for cap in slipped:
        files = ", ".join(sorted(table[cap]["files"]))
        print(f"error: {cap} has {table[cap]['out']} cfg sites outside src/{cap}/ (bound {BOUND}): {files}")
    return 1 if check and slipped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
