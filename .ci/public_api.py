#!/usr/bin/env python3
"""Prints a crate's public API, one line per item, from rustdoc's JSON output.

    python3 .ci/public_api.py target/doc/outbox_relay.json

Every item reachable from the crate root (public modules, re-exports of the crate's own items)
is printed with its path and its signature: functions and methods with their arguments and
return type, struct fields, enum variants, trait items, constants' types, the traits each type
implements (not the auto and blanket ones). A re-export of another crate (`pub use sqlx;`) is one
line. A type of the crate is named by the shortest public path to it (the path a user writes), a
foreign type by its defining path. The lines are sorted, so that a diff of two outputs names exactly the items that changed.

    python3 .ci/public_api.py --announced OLD.txt NEW.txt CHANGELOG.md

checks that every item whose line differs between two such outputs is named in the newest version
section of CHANGELOG.md (see `announced`). Used by .ci/public-api.sh.
"""

import json
import sys


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    paths = doc["paths"]
    lines = set()

    def item(i):
        return index.get(str(i))

    # Where a user names each of the crate's items: the shortest public path the walk below
    # reaches it by (`outbox_relay::Publisher`, not its private module's
    # `outbox_relay::publisher::Publisher`). Filled by a first walk; other crates' items keep
    # their defining path from rustdoc.
    public = {}

    def canonical(i, written):
        if str(i) in public:
            return public[str(i)]
        p = paths.get(str(i))
        return "::".join(p["path"]) if p else written

    def args_of(a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            ab = a["angle_bracketed"]
            parts = []
            for g in ab["args"]:
                if "type" in g:
                    parts.append(ty(g["type"]))
                elif "lifetime" in g:
                    parts.append(g["lifetime"])
                elif "const" in g:
                    parts.append(json.dumps(g["const"], sort_keys=True))
                else:
                    parts.append("_")
            for c in ab.get("constraints", []):
                b = c["binding"]
                if "equality" in b:
                    eq = b["equality"]
                    parts.append(f"{c['name']} = {ty(eq['type']) if 'type' in eq else eq}")
                else:
                    parts.append(f"{c['name']}: {bounds(b['constraint'])}")
            return f"<{', '.join(parts)}>" if parts else ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            out = f"({', '.join(ty(t) for t in p['inputs'])})"
            return out + (f" -> {ty(p['output'])}" if p.get("output") else "")
        return ""

    def path_of(p):
        return canonical(p["id"], p["path"]) + args_of(p.get("args"))

    def bounds(bs):
        out = []
        for b in bs:
            if "trait_bound" in b:
                tb = b["trait_bound"]
                mod = {"maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier"), "")
                out.append(mod + path_of(tb["trait"]))
            elif "outlives" in b:
                out.append(b["outlives"])
            else:
                out.append("use<..>")
        return " + ".join(out)

    def ty(t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return t
        (k, v), = t.items()
        if k == "resolved_path":
            return path_of(v)
        if k in ("generic", "primitive"):
            return v
        if k == "borrowed_ref":
            lt = f"{v['lifetime']} " if v.get("lifetime") else ""
            return f"&{lt}{'mut ' if v['is_mutable'] else ''}{ty(v['type'])}"
        if k == "raw_pointer":
            return f"*{'mut' if v['is_mutable'] else 'const'} {ty(v['type'])}"
        if k == "tuple":
            return f"({', '.join(ty(x) for x in v)})"
        if k == "slice":
            return f"[{ty(v)}]"
        if k == "array":
            return f"[{ty(v['type'])}; {v['len']}]"
        if k == "impl_trait":
            return f"impl {bounds(v)}"
        if k == "dyn_trait":
            traits = " + ".join(path_of(x["trait"]) for x in v["traits"])
            return f"dyn {traits}" + (f" + {v['lifetime']}" if v.get("lifetime") else "")
        if k == "qualified_path":
            tr = f" as {path_of(v['trait'])}" if v.get("trait") else ""
            return f"<{ty(v['self_type'])}{tr}>::{v['name']}{args_of(v.get('args'))}"
        if k == "function_pointer":
            return "fn" + sig(v["sig"])
        return json.dumps(t, sort_keys=True)

    def generics(g):
        params = []
        for p in g["params"]:
            (k, v), = p["kind"].items()
            if k == "type":
                if v.get("is_synthetic"):
                    continue
                b = bounds(v["bounds"])
                params.append(p["name"] + (f": {b}" if b else ""))
            elif k == "lifetime":
                params.append(p["name"])
            else:
                params.append(f"const {p['name']}: {ty(v['type'])}")
        where = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                where.append(f"{ty(bp['type'])}: {bounds(bp['bounds'])}")
            else:
                where.append(json.dumps(w, sort_keys=True))
        return (f"<{', '.join(params)}>" if params else ""), (
            f" where {', '.join(where)}" if where else ""
        )

    def sig(s):
        ins = ", ".join(f"{n}: {ty(t)}" for n, t in s["inputs"])
        out = f" -> {ty(s['output'])}" if s.get("output") else ""
        return f"({ins}){out}"

    def function(name, f):
        h = f["header"]
        quals = "".join(
            q for q, on in [("const ", h["is_const"]), ("async ", h["is_async"]),
                            ("unsafe ", h["is_unsafe"])] if on
        )
        gp, wh = generics(f["generics"])
        return f"{quals}fn {name}{gp}{sig(f['sig'])}{wh}"

    def emit(line):
        lines.add(line)

    def impls(prefix, impl_ids):
        for i in impl_ids:
            it = item(i)
            if not it:
                continue
            im = it["inner"]["impl"]
            if im.get("is_synthetic") or im.get("blanket_impl"):
                continue
            gp, wh = generics(im["generics"])
            neg = "!" if im.get("is_negative") else ""
            if im.get("trait"):
                # The type by the path it is reached at (its defining module may be private).
                target = im["for"]
                rp = target.get("resolved_path") if isinstance(target, dict) else None
                shown = prefix + args_of(rp.get("args")) if rp else ty(target)
                emit(f"impl{gp} {neg}{path_of(im['trait'])} for {shown}{wh}")
                continue
            for m in im["items"]:
                mi = item(m)
                if mi and mi["visibility"] == "public":
                    member(f"{prefix}::", mi)

    def member(prefix, it):
        (k, v), = it["inner"].items()
        name = it["name"]
        if k == "function":
            emit(function(prefix + name, v))
        elif k == "assoc_type":
            b = bounds(v.get("bounds", []))
            emit(f"type {prefix}{name}" + (f": {b}" if b else "")
                 + (f" = {ty(v['type'])}" if v.get("type") else ""))
        elif k == "assoc_const":
            emit(f"const {prefix}{name}: {ty(v['type'])}"
                 + (f" = {v['value']}" if v.get("value") else ""))
        else:
            emit(f"{k} {prefix}{name}")

    seen = set()

    def visit(i, prefix, name=None):
        it = item(i)
        if it is None:
            return
        name = name or it["name"] or it["inner"].get("use", {}).get("name")
        here = f"{prefix}::{name}" if prefix else name
        key = (i, here)
        if key in seen:
            return
        seen.add(key)
        best = public.get(str(i))
        if best is None or (best.count("::"), best) > (here.count("::"), here):
            public[str(i)] = here
        (k, v), = it["inner"].items()
        if k == "module":
            if prefix:
                emit(f"mod {here}")
            for c in v["items"]:
                ci = item(c)
                if ci and ci["visibility"] == "public":
                    visit(c, here)
        elif k == "use":
            target = item(v["id"]) if v.get("id") is not None else None
            if target is None:
                emit(f"pub use {here} = {v['source']}")
            elif v.get("is_glob"):
                for c in target["inner"]["module"]["items"]:
                    ci = item(c)
                    if ci and ci["visibility"] == "public":
                        visit(c, prefix)
            else:
                visit(v["id"], prefix, v["name"])
        elif k == "function":
            emit(function(here, v))
        elif k == "struct":
            gp, wh = generics(v["generics"])
            kind = v["kind"]
            if kind == "unit":
                emit(f"struct {here}{gp}{wh};")
            elif "tuple" in kind:
                fields = ", ".join(
                    ty(item(f)["inner"]["struct_field"]) if f is not None and item(f) else "_"
                    for f in kind["tuple"]
                )
                emit(f"struct {here}{gp}({fields}){wh}")
            else:
                emit(f"struct {here}{gp}{wh}"
                     + (" (private fields)" if kind["plain"]["has_stripped_fields"] else ""))
                for f in kind["plain"]["fields"]:
                    fi = item(f)
                    emit(f"field {here}.{fi['name']}: {ty(fi['inner']['struct_field'])}")
            impls(here, v["impls"])
        elif k == "enum":
            gp, wh = generics(v["generics"])
            emit(f"enum {here}{gp}{wh}")
            for var in v["variants"]:
                vi = item(var)
                vk = vi["inner"]["variant"]["kind"]
                if vk == "plain":
                    emit(f"variant {here}::{vi['name']}")
                elif "tuple" in vk:
                    fields = ", ".join(
                        ty(item(f)["inner"]["struct_field"]) if f is not None else "_"
                        for f in vk["tuple"]
                    )
                    emit(f"variant {here}::{vi['name']}({fields})")
                else:
                    for f in vk["struct"]["fields"]:
                        fi = item(f)
                        emit(f"variant {here}::{vi['name']} {{ {fi['name']}: "
                             f"{ty(fi['inner']['struct_field'])} }}")
            impls(here, v["impls"])
        elif k == "trait":
            gp, wh = generics(v["generics"])
            sup = bounds(v.get("bounds", []))
            emit(f"trait {here}{gp}" + (f": {sup}" if sup else "") + wh)
            for m in v["items"]:
                member(f"{here}::", item(m))
        elif k == "constant":
            emit(f"const {here}: {ty(v['type'])}")
        elif k == "static":
            emit(f"static {here}: {ty(v['type'])}")
        elif k == "type_alias":
            emit(f"type {here} = {ty(v['type'])}")
        else:
            emit(f"{k} {here}")

    # Paths start at the crate's name (`outbox_relay::…`): a line names its item unambiguously.
    visit(doc["root"], "")
    seen.clear()
    lines.clear()
    visit(doc["root"], "")
    for line in sorted(lines):
        print(line)


def item_path(line):
    """The path of the item a line declares (`outbox_relay::db::Backlog::rows`; an `impl Trait
    for Type` line: `Type`'s)."""
    decl = line.split(" for ", 1)[1] if line.startswith("impl") else line
    decl = decl.replace(" = ", " ")
    for word in decl.split():
        if "::" in word:
            for stop in "(<;{":
                word = word.split(stop, 1)[0]
            return word.rstrip(":").replace(".", "::")
    return None


def announced_by(path):
    """The names any of which announces a change of the item at `path` in CHANGELOG.md, each
    written at the start of a code span (after an optional `crate::`): the path without the
    crate's name, any of its leading parts (the module or type it is in: `db` announces every
    item of `db`), and its last two segments (`Settings::new`)."""
    segments = [s for s in path.split("::") if s]
    crate, rest = segments[0], segments[1:] or segments
    names = {"::".join(rest[:k]) for k in range(1, len(rest) + 1)}
    names.add("::".join(rest[-2:]))
    return crate, sorted(names)


def announced(old_path, new_path, changelog_path):
    """Every item whose line differs between OLD and NEW is announced (see `announced_by`) in the
    newest version section of the CHANGELOG (from its first `## ` heading to the next)."""
    import re

    old = set(open(old_path).read().splitlines())
    new = set(open(new_path).read().splitlines())
    text = open(changelog_path).read()
    sections = text.split("\n## ")
    newest = sections[1] if len(sections) > 1 else text
    missing = []
    for line in sorted(old ^ new):
        path = item_path(line)
        if path is None:
            continue
        crate, names = announced_by(path)
        if not any(
            re.search(r"`(?:" + re.escape(crate) + r"::)?" + re.escape(n) + r"(?![A-Za-z0-9_])",
                      newest)
            for n in names
        ):
            missing.append(f"{'-' if line in old else '+'} {line}   [any of: {', '.join(names)}]")
    if missing:
        print(f"public-api: {new_path}: changed items that CHANGELOG.md's newest section does "
              "not announce (name one of the names in brackets in a code span):", file=sys.stderr)
        for m in missing:
            print("  " + m, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "--announced":
        announced(*sys.argv[2:5])
    else:
        main(sys.argv[1])
