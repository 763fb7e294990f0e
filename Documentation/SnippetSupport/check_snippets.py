#!/usr/bin/env python3
"""Compiles (and where asked, runs) every ```swift block of README.md and the DocC articles.

Why: documentation snippets drift silently when the API changes. This script turns each
Markdown file's Swift blocks into a module of a generated package that depends on Covenant by
path, builds it, runs the blocks that show results and compares their output.

Every ```swift block is compiled. An HTML comment on the line before the fence says how
(GitHub and DocC both hide HTML comments, and the fence stays plain `swift`, so both still
highlight it):

  (none)                        statements; compiled inside `func …() throws` (imports hoisted)
  <!-- snippet: async -->       the same inside an `async throws` function
  <!-- snippet: top -->         file-scope code (types, extensions, functions, test classes)
  <!-- snippet: run -->         statements, compiled and run inside a coroutine on a global
                                queue; each `// prints: TEXT` is one expected line of stdout
  <!-- snippet: manifest -->    a whole Package.swift; checked with `swift package dump-package`,
                                and one that depends on Covenant by path is resolved against a
                                copy of this checkout in a folder not named `Covenant`
  <!-- snippet: peer -->        another library's code (a migration guide's "before" side): not
                                compiled
  <!-- snippet: compat -->      needs overloads still on another branch: built (and run) apart;
                                a failure prints a note but does not fail the check (remove the
                                word once it works)
Words combine: `<!-- snippet: run compat -->`.

Fences of other languages (sh, objc, text, none) are not Swift and are not compiled.

Declarations a document's blocks use but do not show (a `User` type, an `api` object, …) live
in Documentation/SnippetSupport/Preambles/<MarkdownFileStem>.swift, compiled into that
document's module together with Preambles/Common.swift.

Usage: check_snippets.py [--symbol-graph-dir DIR] [--list]
  Builds in .build-docs/ (the generated package in .build-docs/snippet-package, the scratch
  path in .build-docs/scratch). With --symbol-graph-dir, the same build emits the symbol graphs
  of every module (Covenant and CovenantTesting included) into DIR, so docs.sh needs one build.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUPPORT = os.path.join(ROOT, "Documentation", "SnippetSupport")
WORK = os.path.join(ROOT, ".build-docs")
PACKAGE = os.path.join(WORK, "snippet-package")
SCRATCH = os.path.join(WORK, "scratch")
COVENANT = ROOT

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
KNOWN = {"async", "top", "run", "manifest", "peer", "compat"}
PRINTS = re.compile(r"//\s*prints:\s?(.*)$")


class Block:
    def __init__(self, doc, line, attrs, code):
        self.doc, self.line, self.attrs, self.code = doc, line, attrs, code

    @property
    def where(self):
        return f"{os.path.relpath(self.doc, ROOT)}:{self.line}"

    @property
    def name(self):
        return f"snippet_line{self.line}"


def markdown_files():
    files = [os.path.join(ROOT, "README.md")]
    for base, dirs, names in os.walk(os.path.join(ROOT, "Sources")):
        if base.endswith(".docc") or ".docc" + os.sep in base:
            files += [os.path.join(base, n) for n in sorted(names) if n.endswith(".md")]
    doc_dir = os.path.join(ROOT, "Documentation")
    files += [os.path.join(doc_dir, n) for n in sorted(os.listdir(doc_dir)) if n.endswith(".md")]
    return files


def blocks_of(path):
    """Fenced blocks of a Markdown file: (language, attributes, first line number, code)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i, marker = [], 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                found = MARKER.match(lines[i])
                marker = found.group(1) if found else None
            i += 1
            continue
        indent, fence, lang, rest = m.group(1), m.group(2), m.group(3), m.group(4)
        start, body, i = i + 1, [], i + 1
        while i < len(lines):
            close = re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[i])
            if close:
                break
            text = lines[i]
            body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            i += 1
        else:
            sys.exit(f"{path}:{start}: unterminated code fence")
        i += 1
        if rest.strip():
            sys.exit(f"{path}:{start}: put snippet attributes in <!-- snippet: … --> before the fence, "
                     f"not in the info string (DocC would not highlight `{lang} {rest}`)")
        out.append((lang, (marker or "").split(), start, "\n".join(body)))
        marker = None
    return out


def module_name(doc):
    stem = os.path.splitext(os.path.basename(doc))[0]
    if os.path.basename(doc) == "README.md":
        stem = os.path.basename(os.path.dirname(doc)) + "Readme"
    return "Snippets_" + re.sub(r"\W", "", stem)


def preamble_names(doc):
    stem = os.path.splitext(os.path.basename(doc))[0]
    if os.path.basename(doc) == "README.md":
        stem = "README" if os.path.dirname(doc) == ROOT else os.path.basename(os.path.dirname(doc)) + "README"
    return ["Common.swift", stem + ".swift"]


def split_imports(code):
    imports, rest = [], []
    for line in code.split("\n"):
        (imports if re.match(r"^\s*import\s+\w", line) else rest).append(line)
    return [i.strip() for i in imports], "\n".join(rest)


def swift_source(block):
    imports, body = split_imports(block.code)
    header = ["// Generated from " + block.where + " by check_snippets.py; edit the Markdown.",
              "import Covenant", "import CovenantTesting", "import Dispatch", "import Foundation"]
    header += ["#if canImport(FoundationNetworking)", "import FoundationNetworking", "#endif"]
    header += [i for i in imports if i not in header]
    attrs = set(block.attrs)
    line_directive = f'#sourceLocation(file: "{block.doc}", line: {block.line + 1})'
    if "top" in attrs:
        return "\n".join(header + [line_directive, body, "#sourceLocation()", ""])
    effects = "async throws" if "async" in attrs else "throws"
    return "\n".join(header + [
        f"public func {block.name}() {effects} {{",
        line_directive, body, "#sourceLocation()", "}", ""])


def expected_output(block):
    return [m.group(1).rstrip() for m in (PRINTS.search(l) for l in block.code.split("\n")) if m]


def runner_target(name, modules, runs, deps):
    """An executable that runs the `run` blocks of `modules`, one per invocation."""
    runner = os.path.join(PACKAGE, "Sources", name)
    os.makedirs(runner)
    with open(os.path.join(SUPPORT, "RunnerMain.swift")) as f:
        main = f.read()
    imports = "\n".join(f"import {m}" for m in sorted(modules))
    cases = "\n".join(f'  case "{m}.{b.name}": return {{ try {m}.{b.name}() }}' for m, b in runs)
    main = main.replace("// IMPORTS", imports).replace("// CASES", cases)
    with open(os.path.join(runner, "main.swift"), "w") as f:
        f.write(main)
    return ('.executableTarget(name: "%s", dependencies: [%s], path: "Sources/%s", '
            'swiftSettings: [.swiftLanguageMode(.v6)])'
            % (name, ", ".join([deps] + [f'"{m}"' for m in sorted(modules)]), name))


def write_package(modules, compat_modules, runs, compat_runs):
    if os.path.isdir(PACKAGE):
        shutil.rmtree(PACKAGE)
    os.makedirs(PACKAGE)
    identity = os.path.basename(COVENANT).lower()
    deps = '.product(name: "Covenant", package: "%s"), .product(name: "CovenantTesting", package: "%s")' % (identity, identity)
    targets = []
    for name, (doc, blocks) in sorted({**modules, **compat_modules}.items()):
        src = os.path.join(PACKAGE, "Sources", name)
        os.makedirs(src)
        for pre in preamble_names(doc):
            path = os.path.join(SUPPORT, "Preambles", pre)
            if os.path.exists(path):
                shutil.copy(path, os.path.join(src, "Preamble_" + pre))
        for b in blocks:
            with open(os.path.join(src, f"Line{b.line}.swift"), "w") as f:
                f.write(swift_source(b))
        targets.append(f'.target(name: "{name}", dependencies: [{deps}], path: "Sources/{name}", '
                       f'swiftSettings: [.swiftLanguageMode(.v6)])')
    targets.append(runner_target("SnippetRunner", modules, runs, deps))
    targets.append(runner_target("CompatSnippetRunner", compat_modules, compat_runs, deps))
    manifest = f'''// swift-tools-version:6.0
// Generated by Documentation/SnippetSupport/check_snippets.py.
import PackageDescription

let package = Package(
  name: "CovenantDocSnippets",
  platforms: [.macOS(.v15)],
  dependencies: [.package(path: "{COVENANT}")],
  targets: [
    {(","+chr(10)+"    ").join(targets)}
  ]
)
'''
    with open(os.path.join(PACKAGE, "Package.swift"), "w") as f:
        f.write(manifest)


def swift_build(extra, log):
    cmd = ["swift", "build", "--package-path", PACKAGE, "--scratch-path", SCRATCH] + extra
    with open(log, "w") as f:
        return subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)


def check_manifest(block):
    with tempfile.TemporaryDirectory() as tmp:
        app = os.path.join(tmp, "app")
        os.makedirs(app)
        code = block.code + "\n"
        with open(os.path.join(app, "Package.swift"), "w") as f:
            f.write(code)
        r = subprocess.run(["swift", "package", "--package-path", app, "dump-package"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{block.where}: manifest does not parse:\n{r.stdout}{r.stderr}")
            return False
        return resolves_covenant_by_path(block, tmp, app, code)


def resolves_covenant_by_path(block, tmp, app, code):
    """A manifest that depends on Covenant by path must work whatever the checkout's folder is
    called (with `path:` alone, SwiftPM names the package after the folder, and
    `.product(…, package: "Covenant")` is not found): resolve it against a copy of this checkout
    in `covenant-checkout/`, with empty sources for its own targets."""
    paths = re.findall(r'\.package\([^)]*\bpath:\s*"([^"]+)"', code)
    if not paths:
        return True
    checkout = os.path.join(tmp, "covenant-checkout")
    os.makedirs(checkout)
    shutil.copy(os.path.join(COVENANT, "Package.swift"), checkout)
    for part in ("Sources", "Tests"):
        shutil.copytree(os.path.join(COVENANT, part), os.path.join(checkout, part), symlinks=True)
    for path in paths:
        code = code.replace(f'path: "{path}"', 'path: "../covenant-checkout"')
    with open(os.path.join(app, "Package.swift"), "w") as f:
        f.write(code)
    for kind, name in re.findall(r'\.(target|testTarget|executableTarget)\(\s*name:\s*"(\w+)"', code):
        folder = os.path.join(app, "Tests" if kind == "testTarget" else "Sources", name)
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, name + ".swift"), "w").close()
    r = subprocess.run(["swift", "package", "--package-path", app, "describe"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{block.where}: manifest does not resolve with Covenant checked out in a folder "
              f"of another name:\n{r.stdout}{r.stderr}")
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbol-graph-dir")
    ap.add_argument("--list", action="store_true", help="only list the blocks and their kinds")
    ap.add_argument("--covenant", help="build the snippets against the Covenant package at this path "
                    "(default: this checkout), e.g. to try them against another branch's worktree")
    ap.add_argument("--only", help="only the Markdown files whose path contains this text (while editing)")
    args = ap.parse_args()
    global COVENANT, SCRATCH
    if args.covenant:
        COVENANT = os.path.abspath(args.covenant)
        SCRATCH = os.path.join(WORK, "scratch-" + re.sub(r"\W", "_", os.path.basename(COVENANT)))

    modules, compat_modules, runs, compat_runs, manifests = {}, {}, [], [], []
    counts = {"compiled": 0, "run": 0, "manifest": 0, "peer": 0, "compat": 0, "other-language": 0}
    for doc in markdown_files():
        if args.only and args.only not in os.path.relpath(doc, ROOT):
            continue
        for lang, attrs, line, code in blocks_of(doc):
            if lang != "swift":
                counts["other-language"] += 1
                continue
            unknown = set(attrs) - KNOWN
            if unknown:
                sys.exit(f"{os.path.relpath(doc, ROOT)}:{line}: unknown snippet attribute(s) {sorted(unknown)}")
            block = Block(doc, line, attrs, code)
            if args.list:
                print(f"{block.where}: {' '.join(attrs) or 'statements'}")
            if "peer" in attrs:
                counts["peer"] += 1
            elif "manifest" in attrs:
                manifests.append(block)
            elif "compat" in attrs:
                compat_modules.setdefault(module_name(doc) + "_compat", (doc, []))[1].append(block)
                counts["compat"] += 1
                if "run" in attrs:
                    compat_runs.append((module_name(doc) + "_compat", block))
            else:
                modules.setdefault(module_name(doc), (doc, []))[1].append(block)
                counts["compiled"] += 1
                if "run" in attrs:
                    runs.append((module_name(doc), block))
    if args.list:
        print(counts)
        return 0

    ok = all(check_manifest(b) for b in manifests)
    counts["manifest"] = len(manifests)
    write_package(modules, compat_modules, runs, compat_runs)
    os.makedirs(WORK, exist_ok=True)
    # Every build below uses the same flags: a build with other flags in the same scratch path
    # would recompile Covenant (and the next one again).
    flags = []
    if args.symbol_graph_dir:
        os.makedirs(args.symbol_graph_dir, exist_ok=True)
        flags += ["-Xswiftc", "-emit-symbol-graph", "-Xswiftc", "-emit-symbol-graph-dir",
                  "-Xswiftc", os.path.abspath(args.symbol_graph_dir),
                  # Pages for the extended types (DispatchQueue.promises, XCTestCase.wait, …).
                  "-Xswiftc", "-emit-extension-block-symbols"]
    log = os.path.join(WORK, "snippets-build.log")
    if swift_build(["--product", "SnippetRunner"] + flags, log) != 0:
        print(open(log).read())
        print("documentation snippets do not compile (see the errors above; the file:line points into the Markdown)")
        return 1
    bin_dir = subprocess.run(["swift", "build", "--package-path", PACKAGE, "--scratch-path", SCRATCH,
                              "--show-bin-path"], capture_output=True, text=True).stdout.strip()
    compat_failures, compat_ok = 0, False
    # Unused values are fine in snippets; any other warning (Sendable checking above all) means
    # the documentation shows code that a Swift 6 client cannot write cleanly.
    md_warning = re.compile(r"^(\S+\.md):\d+:\d+: warning: (?!.*\[#no-usage\])")
    warnings = sorted({l.rstrip() for l in open(log) if md_warning.match(l)})
    for w in warnings:
        print(w)
    if warnings:
        print(f"{len(warnings)} compiler warnings in documentation snippets (Swift 6 mode)")
        ok = False
    for name in sorted(compat_modules):
        clog = os.path.join(WORK, f"{name}.log")
        if swift_build(["--target", name] + flags, clog) == 0:
            print(f"note: {name} builds")
        else:
            compat_failures += 1
            errors = sorted({l for l in open(clog) if re.match(r"^/\S+:\d+:\d+: error:", l)})
            print(f"note: {name} ({len(compat_modules[name][1])} blocks) does not build yet on this branch "
                  f"({len(errors)} errors; expected until the compat overloads are merged):")
            for e in errors[:20]:
                print("   ", e.rstrip())
    if compat_runs and compat_failures == 0 and swift_build(["--product", "CompatSnippetRunner"] + flags, os.path.join(WORK, "compat-runner.log")) == 0:
        compat_ok = run_blocks(os.path.join(bin_dir, "CompatSnippetRunner"), compat_runs)
        print("note: the `compat` blocks' output " + ("matches" if compat_ok else "differs (expected until the compat overloads are merged)"))
    elif compat_modules:
        print("note: the `compat` blocks were not run")
    if compat_modules and compat_failures == 0 and (not compat_runs or compat_ok):
        print("note: every `compat` block builds and runs as documented: remove `compat` from them")

    ok = run_blocks(os.path.join(bin_dir, "SnippetRunner"), runs) and ok
    counts["run"] = len(runs)
    print("documentation snippets: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0 if ok else 1


def run_blocks(runner, runs):
    """Runs each block in its own process and compares its stdout with its `// prints:` lines."""
    ok = True
    for module, block in runs:
        try:
            r = subprocess.run([runner, f"{module}.{block.name}"], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, SWIFT_BACKTRACE="enable=no"))
        except subprocess.TimeoutExpired:
            print(f"{block.where}: the snippet did not finish within 60 s")
            ok = False
            continue
        got = [l.rstrip() for l in r.stdout.rstrip("\n").split("\n")] if r.stdout.strip() else []
        want = expected_output(block)
        if r.returncode != 0 or got != want:
            ok = False
            print(f"{block.where}: snippet output differs (exit {r.returncode})\n  expected: {want}\n  got:      {got}")
            if r.stderr.strip():
                print("  stderr: " + "\n          ".join(r.stderr.strip().split("\n")[:8]))
    return ok


if __name__ == "__main__":
    sys.exit(main())
