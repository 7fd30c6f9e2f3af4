"""Checks that docs/running.md documents exactly the POLYC_ environment variables the executables read.

usage: env_vars.py SRCROOT [DOC]   (DOC defaults to SRCROOT/docs/running.md)
       env_vars.py SRCROOT --list  (prints every variable read, with its target and where)

A variable is *read* where a C/C++ source calls a function with the string literal "POLYC_NAME" as its
first argument: std::getenv("POLYC_NAME"), or a runtime helper that takes the variable's name
(environmentValue, switchValue, integerFromEnvironment, ...). Macro names (POLYC_HELD_TERMS, ...) are never
a call's whole first argument, so they do not count. Scanned: runtime/ (what every executable links),
kernels-generated/ (the emitted code) and compiler/codegen/ (where the emitted getenv(\"...\") comes from).
A file under a cuda/, opencl/ or cpu/ folder belongs to that target; a variable read by more than one
target's code, or by code of none, belongs to all targets.

The doc documents NAME for target T with a table row whose first cell is `NAME`, under a heading naming
the target ("All targets", "CPU", "CUDA", "OpenCL"). Prints one line per problem and exits 1:
  missing: a variable read by the code has no row in the doc, or its row is under another target;
  unknown: the doc names (anywhere) a POLYC_ variable that no code reads.
Prints "ok: N variables documented" and exits 0 otherwise.
"""
import os
import re
import sys

SCANNED = ("runtime", "kernels-generated", os.path.join("compiler", "codegen"))
EXTENSIONS = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")
# name("POLYC_X", ...) with plain or escaped quotes (compiler/codegen writes getenv(\"POLYC_X\")).
CALL = re.compile(r'\b[A-Za-z_]\w*\s*\(\s*(\\?")(POLYC_[A-Z0-9_]+)\1\s*[,)]')
TARGETS = ("cpu", "cuda", "opencl")
TITLES = {"all": "All targets", "cpu": "CPU", "cuda": "CUDA", "opencl": "OpenCL"}


def target_of(path):
    parts = path.split(os.sep)
    found = [t for t in TARGETS if t in parts]
    return found[0] if len(found) == 1 else "all"


def read_variables(root):
    """{name: (target, [path:line, ...])} for every variable the scanned sources read."""
    reads = {}
    for top in SCANNED:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            sys.exit(f"error: {base} is not a folder")
        for folder, _, files in os.walk(base):
            for file in sorted(files):
                if not file.endswith(EXTENSIONS):
                    continue
                path = os.path.join(folder, file)
                relative = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    for number, line in enumerate(handle, 1):
                        if line.lstrip().startswith("//"):
                            continue  # a commented-out read reads nothing
                        for match in CALL.finditer(line):
                            reads.setdefault(match.group(2), []).append((target_of(relative),
                                                                         f"{relative}:{number}"))
    result = {}
    for name, places in reads.items():
        targets = {t for t, _ in places}
        result[name] = (targets.pop() if len(targets) == 1 else "all", [p for _, p in places])
    return result


def heading_target(text):
    lowered = text.lower()
    if "all targets" in lowered:
        return "all"
    for target in ("opencl", "cuda", "cpu"):
        if target in lowered:
            return target
    return None


def documented_variables(doc):
    """({name: [(target, line)]} of table rows, {name: [line, ...]} of every mention)."""
    rows, mentions = {}, {}
    section = None
    with open(doc, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if re.match(r"#{1,6} ", line):
                section = heading_target(line)
            row = re.match(r"\|\s*`(POLYC_[A-Z0-9_]+)`\s*\|", line)
            if row:
                rows.setdefault(row.group(1), []).append((section, number))
            for name in re.findall(r"\bPOLYC_[A-Z0-9_]*[A-Z0-9]\b", line):
                mentions.setdefault(name, []).append(number)
    return rows, mentions


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root = argv[1]
    reads = read_variables(root)
    if not reads:
        sys.exit(f"error: found no POLYC_ environment variable read under {root}: is the scan broken?")
    if len(argv) > 2 and argv[2] == "--list":
        for name in sorted(reads):
            target, places = reads[name]
            print(f"{name} {TITLES[target]} {' '.join(places)}")
        return 0
    doc = argv[2] if len(argv) > 2 else os.path.join(root, "docs", "running.md")
    rows, mentions = documented_variables(doc)
    problems = []
    for name in sorted(reads):
        target, places = reads[name]
        sections = [section for section, _ in rows.get(name, [])]
        if target not in sections:
            where = (f"its row is under {', '.join(TITLES.get(s, 'no target') for s in sections)}"
                     if sections else "no table row")
            problems.append(f"missing: {name} (read by {TITLES[target]} code at {places[0]}; {where}; "
                            f"add a row to the {TITLES[target]} table of {doc})")
    for name in sorted(mentions):
        if name not in reads:
            lines = ", ".join(str(n) for n in mentions[name])
            problems.append(f"unknown: {name} ({doc} line {lines}; no code reads it)")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"ok: {len(reads)} variables documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
