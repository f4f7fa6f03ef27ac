#!/usr/bin/env python3
"""Finds import cycles between the source files of the workspace's crates.

Takes the workspace root (default: the current directory) and `--skip a,b` (crate folders left
out); reads every `<crate>/src/**/*.rs`, taking one file as one module. An edge A -> B is a
`use crate::`, `use super::`, `use self::` or `use <child module>::` path, or a `crate::`/`super::`
path in code, of file A that names module B or an item of it (a path names the longest module
prefix that is a file). A path in code is followed through the name it starts with: a name a
`use` brought in (`use crate::replay;` then `replay::gate::get()` names `replay/gate.rs`), a child
module (`mod gate;` then `gate::get()`), or `crate`/`super`/`self`. A `use` inside an inline
module (`mod tests { ... }`) also serves the modules nested in it, and a name of an enclosing
scope serves an inner one (a `use super::*` test module sees its file's imports). A `mod`
declaration alone is no edge: it only places the child file. Not followed: the names a glob
(`use crate::a::*`) brings in, except those of the file's own scopes.
Gives exit status 0 and one summary line when there is no cycle, else 1 and each cycle on its own
line as `crate: a.rs -> b.rs -> a.rs`. Standard library only.
"""

import argparse
import re
import sys
from pathlib import Path

COMMENT = re.compile(r"//.*$")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
# Strings (which may run over lines) and char literals, in one pass: a `'"'` opens no string.
STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\\n])\'', re.S)
USE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
MOD_DECL = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*([;{])")
CODE_PATH = re.compile(r"(?<![\w:$])([A-Za-z_]\w*(?:::[A-Za-z_]\w*)+)")


def strip(text):
    """Source without comments and string contents, so that only code paths are seen."""
    text = BLOCK_COMMENT.sub(" ", text)
    text = STRING.sub(lambda m: m.group(0)[0] * 2, text)
    return "\n".join(COMMENT.sub("", line) for line in text.splitlines())


def module_path(src, file):
    """Module path of `file` under `src`: lib.rs/main.rs are [], a/b.rs and a/b/mod.rs [a, b]."""
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts in (["lib"], ["main"]):
        return []
    if parts[-1] == "mod":
        parts.pop()
    return parts


def expand(tree):
    """`a::{b, c::{d}}` -> [[a, b], [a, c, d]]; `self` inside braces names the prefix itself."""
    tree = tree.strip()
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = [p for p in tree[:i].split("::") if p.strip()]
                inner = tree[i + 1 : tree.rindex("}")]
                out = []
                for part in split_top(inner):
                    for sub in expand(part):
                        out.append(prefix + ([] if sub == ["self"] else sub))
                return out
            depth += 1
    path = [p.strip() for p in tree.split("::") if p.strip()]
    if path:
        path[-1] = path[-1].split(" as ")[0].strip()
    return [path] if path else []


def use_names(tree):
    """`a::{b, c as d, e::*}` -> [(b, [a, b]), (d, [a, c])]: each name a `use` brings in, with
    the path it stands for; `self` in braces brings in the prefix's last name."""
    out = []
    for path, raw in zip(expand(tree), raw_leaves(tree)):
        if not path or path[-1] == "*":
            continue
        alias = raw.split(" as ")
        name = alias[1].strip() if len(alias) > 1 else path[-1]
        if name != "_":
            out.append((name, path))
    return out


def raw_leaves(tree):
    """The last segment of each leaf of a `use` tree as written (with any ` as name`), in the
    order `expand` gives the leaves."""
    tree = tree.strip()
    if "{" in tree:
        inner = tree[tree.index("{") + 1 : tree.rindex("}")]
        out = []
        for part in split_top(inner):
            out += raw_leaves(part)
        return out
    return [tree.split("::")[-1].strip()]


def split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def scopes(code, base):
    """Where inline `mod x {` blocks start and end, as (offset, module path from there on), and
    the child modules each module declares."""
    events = []
    stack = []
    depth = 0
    mods = {}
    decls = {m.start(): m for m in MOD_DECL.finditer(code)}
    for i, ch in enumerate(code):
        if i in decls:
            m = decls[i]
            name, kind = m.group(1), m.group(2)
            mods.setdefault(tuple(base + [s for s, _ in stack]), set()).add(name)
            if kind == "{":
                stack.append((name, depth + 1))
                events.append((m.end(), base + [s for s, _ in stack]))
        if ch == "{":
            depth += 1
        elif ch == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
                events.append((i, base + [s for s, _ in stack]))
            depth -= 1
    return events, mods


def scope_at(events, base, offset):
    current = base
    for at, path in events:
        if at > offset:
            break
        current = path
    return current


def resolve(path, here, children, names=None):
    """Absolute module path `path` names when written in module `here` (None: not this crate);
    `names` maps each scope to the names its `use`s brought in, as absolute paths."""
    if not path:
        return None
    head = path[0]
    if head == "crate":
        return path[1:]
    if head in ("super", "self"):
        cur = list(here)
        while path and path[0] in ("super", "self"):
            if path[0] == "super":
                if not cur:
                    return None
                cur.pop()
            path = path[1:]
        return cur + path
    for n in range(len(here), -1, -1):
        scope = tuple(here[:n])
        if names and head in names.get(scope, {}):
            return names[scope][head] + path[1:]
        if head in children.get(scope, set()):
            return list(scope) + path
    return None


def target_file(path, files):
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in files:
            return files[tuple(path[:n])]
    return None


def crate_graph(src):
    files = {}
    for f in sorted(src.rglob("*.rs")):
        key = tuple(module_path(src, f))
        # lib.rs, not main.rs, is what `crate::` names in a crate that has both.
        if key not in files or f.name == "lib.rs":
            files[key] = f
    graph = {}
    for key, f in sorted(files.items()):
        code = strip(f.read_text())
        base = list(key)
        events, children = scopes(code, base)
        targets = set()
        paths = []
        names = {}
        uses = [(m, scope_at(events, base, m.start())) for m in USE.finditer(code)]
        # Twice: a `use` may start with a name another `use` of the file brings in.
        for _ in range(2):
            for m, here in uses:
                for name, p in use_names(m.group(1)):
                    resolved = resolve(p, here, children, names)
                    if resolved is not None:
                        names.setdefault(tuple(here), {})[name] = resolved
        for m, here in uses:
            paths += [(p, here) for p in expand(m.group(1))]
        # Paths in code, with the `use` items blanked out (their leaves are not paths from here).
        rest = USE.sub(lambda m: " " * len(m.group(0)), code)
        for m in CODE_PATH.finditer(rest):
            paths.append((m.group(1).split("::"), scope_at(events, base, m.start())))
        for p, here in paths:
            resolved = resolve(p, here, children, names)
            if resolved is None:
                continue
            t = target_file(resolved, files)
            if t is not None and t != f:
                targets.add(t)
        graph[f] = targets
    return graph


def cycles(graph):
    """Per strongly connected component of more than one file (Tarjan): one cycle and its files."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append((cycle_in(graph, set(comp)), set(comp)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycle_in(graph, comp):
    """A shortest cycle through the smallest file of a component, by breadth-first search."""
    start = min(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & comp):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start, start]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=".", type=Path)
    ap.add_argument("--skip", default="", help="comma-separated crate folders to leave out")
    args = ap.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    crates = sorted(p.parent for p in args.root.glob("*/src") if p.is_dir())
    if not crates:
        print(f"import_cycles: no <crate>/src folder under {args.root}", file=sys.stderr)
        return 2
    found = 0
    checked = 0
    for crate in crates:
        if crate.name in skip:
            continue
        src = crate / "src"
        graph = crate_graph(src)
        checked += len(graph)
        for cyc, comp in cycles(graph):
            found += 1
            names = " -> ".join(str(p.relative_to(src)) for p in cyc)
            rest = sorted(str(p.relative_to(src)) for p in comp - set(cyc))
            also = f" (same loop also holds {', '.join(rest)})" if rest else ""
            print(f"{crate.name}: {names}{also}")
    if found:
        print(
            f"import_cycles: {found} cycle(s); move the shared items into a lower module",
            file=sys.stderr,
        )
        return 1
    skipped = f" (skipped: {', '.join(sorted(skip))})" if skip else ""
    kept = len([c for c in crates if c.name not in skip])
    print(f"import_cycles: no cycle among {checked} files of {kept} crates{skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
