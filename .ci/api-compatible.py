#!/usr/bin/env python3
"""Sorts out the findings of `swift-api-digester -diagnose-sdk` that calls still compile with.

The digester matches functions by name, so one that gained a parameter with a default value is
reported as removed (or renamed to the new name), although every call of the old form still
compiles. For each such finding this looks up the old declaration in the baseline and the
declarations of the same base name in the same type of the module as it is now (a `-dump-sdk` of
it), and calls the finding compatible when one of them takes the old parameters, with the same
labels and types in the same order, plus only parameters that have a default value, returns the
same type, and is not static where the old one was not (or the reverse), async where the old one
was not, or throwing where the old one was not.

Usage: api-compatible.py BASELINE.json CURRENT.json < findings
Prints the findings that stay breaks on standard output, and the compatible ones, marked so, on
standard error.
"""
import json
import os
import re
import shutil
import subprocess
import sys

DEMANGLE = os.path.join(os.path.dirname(os.path.realpath(shutil.which("swift"))), "swift-demangle")

FINDING = re.compile(r"^(?:\S+:\d+:\d+: )?(?:func|constructor) ([\w.]+)\(([^()]*)\) has been (?:removed|renamed to .*)$")


def members(root):
    """Every function and initializer, keyed by (the names of its enclosing types, its base name)."""
    found = {}

    def walk(node, parents):
        for child in node.get("children", []):
            if not isinstance(child, dict):
                continue
            if child.get("kind") in ("Function", "Constructor"):
                found.setdefault((parents, child["name"]), []).append(child)
            elif child.get("kind") == "TypeDecl":
                walk(child, parents + (child["name"],))

    walk(root["ABIRoot"], ())
    return found


def labels(printed_name):
    inside = printed_name[printed_name.index("(") + 1 : printed_name.rindex(")")]
    return [label for label in inside.split(":") if label]


def parameters(node):
    """(label, type, has a default) of each parameter; children[0] is the result."""
    types = node.get("children", [])[1:]
    return [
        (label, kind.get("printedName"), bool(kind.get("hasDefaultArg")))
        for label, kind in zip(labels(node["printedName"]), types)
    ]


def effects(node):
    """Whether the declaration is async and whether it throws, from its demangled name."""
    demangled = subprocess.run([DEMANGLE, node["mangledName"]], capture_output=True, text=True, check=True).stdout
    text = demangled.split("--->", 1)[-1]
    start = text.find("(")
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            tail = text[index + 1 :].split("->", 1)[0]
            return ("async" in tail, "throws" in tail)
    return (False, False)


def compatible(old, new):
    if old["children"][0].get("printedName") != new["children"][0].get("printedName"):
        return False
    if bool(old.get("static")) != bool(new.get("static")) or old.get("genericSig") != new.get("genericSig"):
        return False
    (old_async, old_throws), (new_async, new_throws) = effects(old), effects(new)
    if (new_async and not old_async) or (new_throws and not old_throws):
        return False
    remaining = parameters(old)
    for label, kind, has_default in parameters(new):
        if remaining and remaining[0][:2] == (label, kind):
            remaining.pop(0)
        elif not has_default:
            return False
    return not remaining


def main():
    with open(sys.argv[1]) as file:
        before = members(json.load(file))
    with open(sys.argv[2]) as file:
        now = members(json.load(file))
    for line in sys.stdin.read().splitlines():
        match = FINDING.match(line.strip())
        if match:
            *parents, name = match.group(1).split(".")
            printed = f"{name}({match.group(2)})"
            old = [node for node in before.get((tuple(parents), name), []) if node["printedName"] == printed]
            candidates = now.get((tuple(parents), name), [])
            if old and any(compatible(old[0], new) for new in candidates):
                print(f"{line} (compatible: calls of the old form still compile)", file=sys.stderr)
                continue
        print(line)


main()
