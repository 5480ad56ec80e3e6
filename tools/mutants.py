#!/usr/bin/env python3
"""Mutation run: apply each one-line bug of tools/mutants.tsv to a scratch copy of the
committed tree, rebuild, run the test programs, and report which test caught it.

    tools/mutants.py [--list FILE] [--only ID,ID] [--tests NAME,NAME] [--out FILE] [--jobs N]

A mutation replaces every occurrence of its `old` text in its file by `new` (`\\n` is a
newline). A mutation whose `old` text is absent is reported as `stale` (the code moved on: the
list needs updating), never as caught. The scratch copy keeps one build directory, so each
mutation rebuilds only the mutated file and relinks; test programs run fastest first and stop
at the first failure, each under a time limit (a hang counts as caught: the suite does not
pass). The result table is markdown, written to --out (default build/mutants.md) and stdout.
--tests builds and runs only the named test programs: a `caught` stands, a `SURVIVED` then means
only that those programs miss the mutation (the table says which programs ran).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 600  # seconds per test program: a mutant that hangs a test is caught


def read_list(path):
    rows = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                sys.exit(f"{path}: bad line (want 5 tab-separated fields): {line!r}")
            mid, file, old, new, what = parts
            rows.append((mid, file, old.replace("\\n", "\n"), new.replace("\\n", "\n"), what))
    return rows


def run(cmd, cwd, timeout=None, env=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, env=env, text=True)


def scratch_copy():
    work = tempfile.mkdtemp(prefix="moreau-mutants-")
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", work], input=archive, check=True)
    return work


def test_programs(work):
    names = sorted(f[:-2] for f in os.listdir(os.path.join(work, "tests"))
                   if f.startswith("test_") and f.endswith(".c"))
    return [os.path.join(work, "build", "tests", n) for n in names]


def run_tests(work, programs, env):
    """the first failing program's name, or None when every program passes"""
    for prog in programs:
        try:
            r = run([prog], work, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return os.path.basename(prog) + " (time limit)"
        if r.returncode != 0:
            return os.path.basename(prog)
    return None


def order_by_speed(work, programs, env):
    """run the clean suite once: it must pass; return the programs fastest first"""
    times = []
    for prog in programs:
        t0 = time.monotonic()
        try:
            r = run([prog], work, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            sys.exit(f"the unmutated {os.path.basename(prog)} exceeds the {TIMEOUT} s limit "
                     "(a loaded machine?): rerun, or leave it out with --tests")
        if r.returncode != 0:
            sys.exit(f"the unmutated suite fails in {os.path.basename(prog)}:\n{r.stdout[-3000:]}")
        times.append((time.monotonic() - t0, prog))
    return [p for _, p in sorted(times)]


def build(work, jobs, programs):
    """the library, the command and the given test programs"""
    return run(["make", f"-j{jobs}", "all"] + [os.path.relpath(p, work) for p in programs], work)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=os.path.join(ROOT, "tools", "mutants.tsv"))
    ap.add_argument("--only", default="")
    ap.add_argument("--tests", default="", help="only these test programs (comma-separated)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutants.md"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--shared", default=os.path.abspath(os.path.join(ROOT, "..", "shared")))
    args = ap.parse_args()
    rows = read_list(args.list)
    if args.only:
        keep = set(args.only.split(","))
        rows = [r for r in rows if r[0] in keep]
    work = scratch_copy()
    env = dict(os.environ, MOREAU_SHARED=args.shared,
               MOREAU_BIN=os.path.join(work, "build", "moreau"))
    try:
        programs = test_programs(work)
        if args.tests:
            keep = set(args.tests.split(","))
            unknown = keep - {os.path.basename(p) for p in programs}
            if unknown:
                sys.exit("no such test program: " + ", ".join(sorted(unknown)))
            programs = [p for p in programs if os.path.basename(p) in keep]
        r = build(work, args.jobs, programs)
        if r.returncode != 0:
            sys.exit("the unmutated tree does not build:\n" + r.stdout[-3000:])
        programs = order_by_speed(work, programs, env)
        results = []
        for mid, file, old, new, what in rows:
            path = os.path.join(work, file)
            src = open(path).read() if os.path.exists(path) else ""
            if old not in src:
                verdict, by = "stale", "-"
            else:
                open(path, "w").write(src.replace(old, new))
                r = build(work, args.jobs, programs)
                if r.returncode != 0:
                    verdict, by = "caught", "build"
                else:
                    failed = run_tests(work, programs, env)
                    verdict, by = ("caught", failed) if failed else ("SURVIVED", "-")
                open(path, "w").write(src)
            results.append((mid, file, what, verdict, by))
            print(f"{mid:28s} {verdict:9s} {by}", flush=True)
        build(work, args.jobs, programs)  # leave the scratch tree clean for a rerun
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = ["| mutation | file | the bug | verdict | caught by |", "|---|---|---|---|---|"]
    lines += [f"| {m} | {f} | {w} | {v} | {b} |" for m, f, w, v, b in results]
    caught = sum(1 for r in results if r[3] == "caught")
    stale = sum(1 for r in results if r[3] == "stale")
    lines.append("")
    lines.append(f"{caught} of {len(results) - stale} mutations caught"
                 + (f", {stale} stale" if stale else "")
                 + (f" (test programs: {args.tests})" if args.tests else " (every test program)"))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if caught == len(results) - stale else 1


if __name__ == "__main__":
    sys.exit(main())
