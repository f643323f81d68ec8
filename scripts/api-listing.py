#!/usr/bin/env python3
"""Writes a module's public API as sorted text, one declaration per line, from its symbol graphs.

Usage: scripts/api-listing.py SYMBOL_GRAPH_DIR MODULE OUTPUT_DIR

Reads MODULE.symbols.json and MODULE@*.symbols.json (the module's extensions of other modules'
types) and writes OUTPUT_DIR/MODULE.txt (the API an app sees) and, when the module has any,
OUTPUT_DIR/MODULE-spi.txt (declarations under `@_spi`, which an app sees only with
`@_spi(...) import`). Members that the compiler synthesizes or inherits from protocol extensions
of other modules (`!=`, `Sequence.map`...) are left out: they follow from the conformances, which
are listed.

A line is `path  declaration`, for example
    DataCache.store(_:)  func store(_ response: CachedResponse) async
with ` [extension where ...]` after a member declared in a constrained extension, ` [default]` after
a protocol extension's implementation of a requirement, ` [extension]` after a protocol extension's
member that is not a requirement, and ` [deprecated: ...]` after a deprecated one.
"""

import glob
import json
import os
import re
import sys


# Conformances every type has, or that another listed one implies: noise in a diff.
IMPLIED_CONFORMANCES = {"SendableMetatype", "Copyable", "Escapable", "BitwiseCopyable"}


def declaration(symbol):
    text = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    return re.sub(r"\s+", " ", text).strip()


def constraint_text(constraints):
    parts = []
    for constraint in constraints:
        relation = {"conformance": ":", "superclass": ":", "sameType": "=="}.get(constraint["kind"], constraint["kind"])
        parts.append(f"{constraint['lhs']} {relation} {constraint['rhs']}")
    return ", ".join(parts)


def deprecation(symbol):
    for availability in symbol.get("availability", []):
        if availability.get("isUnconditionallyDeprecated") or (availability.get("domain") == "*" and "deprecated" in availability):
            detail = availability.get("message") or (f"renamed {availability['renamed']}" if "renamed" in availability else "")
            return f" [deprecated{': ' + detail if detail else ''}]"
    return ""


def listing(graph_paths, module):
    symbols, relationships = {}, []
    for path in graph_paths:
        with open(path) as file:
            graph = json.load(file)
        extended_module = None
        name = os.path.basename(path)[: -len(".symbols.json")]
        if "@" in name:
            extended_module = name.split("@", 1)[1]
        for symbol in graph["symbols"]:
            symbol["_extendedModule"] = extended_module
            symbols[symbol["identifier"]["precise"]] = symbol
        relationships += graph["relationships"]

    def is_listed(identifier):
        return "::SYNTHESIZED::" not in identifier and identifier in symbols

    conformances, defaults = {}, set()
    for relationship in relationships:
        if not is_listed(relationship["source"]):
            continue
        if relationship["kind"] == "conformsTo":
            target = symbols.get(relationship["target"])
            target_name = ".".join(target["pathComponents"]) if target else relationship.get("targetFallback", relationship["target"])
            target_name = target_name.removeprefix("Swift.").removeprefix("_Concurrency.")
            if target_name in IMPLIED_CONFORMANCES:
                continue
            constraints = relationship.get("swiftConstraints")
            if constraints:
                target_name += f" where {constraint_text(constraints)}"
            conformances.setdefault(relationship["source"], set()).add(target_name)
        elif relationship["kind"] == "defaultImplementationOf":
            defaults.add(relationship["source"])

    lines = {"api": [], "spi": []}
    for identifier, symbol in symbols.items():
        if not is_listed(identifier):
            continue
        path = ".".join(symbol["pathComponents"])
        if symbol["_extendedModule"]:
            path = f"{symbol['_extendedModule']}.{path}"
        line = f"{path}  {declaration(symbol)}"
        if identifier in conformances:
            line += " [conforms to " + ", ".join(sorted(conformances[identifier])) + "]"
        extension = symbol.get("swiftExtension", {})
        if extension.get("constraints") and not symbol["kind"]["identifier"].startswith("swift.enum.case"):
            line += f" [extension where {constraint_text(extension['constraints'])}]"
        if identifier in defaults:
            line += " [default]"
        elif extension.get("typeKind") == "swift.protocol" and not extension.get("constraints"):
            line += " [extension]"
        line += deprecation(symbol)
        lines["spi" if symbol.get("spi") else "api"].append(line)
    return {kind: sorted(set(found)) for kind, found in lines.items()}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    graph_dir, module, output_dir = sys.argv[1:]
    paths = [os.path.join(graph_dir, f"{module}.symbols.json")] + sorted(glob.glob(os.path.join(graph_dir, f"{module}@*.symbols.json")))
    if not os.path.exists(paths[0]):
        sys.exit(f"api-listing: no symbol graph for {module} in {graph_dir}")
    found = listing(paths, module)
    os.makedirs(output_dir, exist_ok=True)
    for kind, suffix in (("api", ""), ("spi", "-spi")):
        target = os.path.join(output_dir, f"{module}{suffix}.txt")
        if found[kind]:
            with open(target, "w") as file:
                file.write("\n".join(found[kind]) + "\n")


if __name__ == "__main__":
    main()
