#!/usr/bin/env python3
"""Mutation run: apply each one-line bug of tools/mutants.tsv to a scratch copy of the
committed tree, rebuild, run the test programs, and report which test caught it.

    tools/mutants.py [--list FILE] [--only ID,ID] [--tests NAME,NAME] [--out FILE] [--jobs N]
    tools/mutants.py --check [--list FILE]

A mutation replaces the one occurrence of its `old` text in its file by `new` (`\\n` is a
newline). Before anything is built, every row of the list is checked: its `old` text must occur
exactly once in its file (and differ from `new`, and its id be unique); otherwise the run stops
with exit status 2 and names each such row, its file and the count (0: the code moved on and the
row must follow it; 2 or more: the row must quote more context). --check does only that, on the
working tree, and exits. The scratch copy keeps one build directory, so each mutation rebuilds
only the mutated file and relinks; the test programs then run --jobs at a time, fastest first,
until one fails (the others are stopped), each under a time limit (a hang counts as caught: the
suite does not pass). A mutation that does not compile (-Werror: a variable it leaves unused)
is `NO BUILD`, with the compiler's error, and counts as not caught. The result table is markdown, written to --out (default build/mutants.md)
and stdout, with the run's wall time. --tests builds and runs only the named test programs: a
`caught` stands, a `SURVIVED` then means only that those programs miss the mutation (the table
says which programs ran).
"""
import argparse
import os
import re
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


def stale_rows(rows, root):
    """the rows that do not apply to the tree at root, one message each"""
    msgs, seen = [], set()
    for mid, file, old, new, _ in rows:
        if mid in seen:
            msgs.append(f"row {mid}: the id is used twice")
        seen.add(mid)
        path = os.path.join(root, file)
        if not os.path.exists(path):
            msgs.append(f"row {mid}: {file} does not exist")
            continue
        count = open(path).read().count(old)
        if count != 1:
            msgs.append(f"row {mid}: its text occurs {count} times in {file} (want exactly once): "
                        f"{old.splitlines()[0][:70]!r}")
        if old == new:
            msgs.append(f"row {mid}: old and new are the same text")
    return msgs


def check_rows(rows, root, where, listname):
    msgs = stale_rows(rows, root)
    if msgs:
        print(f"{listname}: {len(msgs)} row(s) do not apply to {where}:", file=sys.stderr)
        for m in msgs:
            print("  " + m, file=sys.stderr)
        sys.exit(2)


def run(cmd, cwd, timeout=None, env=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, env=env, text=True)


def scratch_copy():
    work = tempfile.mkdtemp(prefix="moreau-mutants-")
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", work], input=archive, check=True)
    return work


PYTHON_SUITE = "python"  # the Python tests (python/tests), one program as in make test


def shlib(work):
    """the shared library the Python package loads (the Makefile's SHLIB)"""
    text = open(os.path.join(work, "include", "moreau", "version.h")).read()
    version = re.search(r'#define MR_VERSION_STRING "([0-9.]*)"', text).group(1)
    return os.path.join(work, "build", "libmoreau.so." + version)


def test_programs(work):
    names = sorted(f[:-2] for f in os.listdir(os.path.join(work, "tests"))
                   if f.startswith("test_") and f.endswith(".c"))
    return [os.path.join(work, "build", "tests", n) for n in names] + [PYTHON_SUITE]


def name_of(prog):
    return os.path.basename(prog)


def argv_of(prog):
    if prog == PYTHON_SUITE:
        return ["/usr/bin/python3", "-m", "unittest", "discover", "-s", "python/tests", "-t",
                "python"]
    return [prog]


def targets_of(work, prog):
    return [os.path.relpath(shlib(work), work)] if prog == PYTHON_SUITE else \
        [os.path.relpath(prog, work)]


def run_tests(work, programs, env, jobs):
    """the first failing program's name, or None when every program passes: programs run jobs
    at a time in the given order; the first failure stops the others"""
    procs, failed, queue = {}, None, list(programs)
    try:
        while (queue or procs) and not failed:
            while queue and len(procs) < jobs:
                prog = queue.pop(0)
                procs[prog] = (subprocess.Popen(argv_of(prog), cwd=work, env=env,
                                                stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL,
                                                start_new_session=True), time.monotonic())
            time.sleep(0.05)
            for prog, (p, t0) in list(procs.items()):
                if p.poll() is not None:
                    del procs[prog]
                    if p.returncode != 0:
                        failed = name_of(prog)
                elif time.monotonic() - t0 > TIMEOUT:
                    failed = name_of(prog) + " (time limit)"
    finally:
        for p, _ in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, 9)
            p.wait()
    return failed


def order_by_speed(work, programs, env):
    """run the clean suite once: it must pass; return the programs fastest first"""
    times = []
    for prog in programs:
        t0 = time.monotonic()
        try:
            r = run(argv_of(prog), work, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            sys.exit(f"the unmutated {name_of(prog)} exceeds the {TIMEOUT} s limit "
                     "(a loaded machine?): rerun, or leave it out with --tests")
        if r.returncode != 0:
            sys.exit(f"the unmutated suite fails in {name_of(prog)}:\n{r.stdout[-3000:]}")
        times.append((time.monotonic() - t0, prog))
    return [p for _, p in sorted(times)]


def build(work, jobs, programs):
    """the library, the command and the given test programs"""
    return run(["make", f"-j{jobs}", "all"] + [t for p in programs for t in targets_of(work, p)],
               work)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=os.path.join(ROOT, "tools", "mutants.tsv"))
    ap.add_argument("--only", default="")
    ap.add_argument("--tests", default="", help="only these test programs (comma-separated)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutants.md"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--shared", default=os.path.abspath(os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--check", action="store_true",
                    help="only check that every row applies to the working tree")
    args = ap.parse_args()
    rows = read_list(args.list)
    if args.check:
        check_rows(rows, ROOT, "the working tree", args.list)
        print(f"{args.list}: all {len(rows)} rows apply (each text found exactly once)")
        return 0
    if args.only:
        keep = set(args.only.split(","))
        unknown = keep - {r[0] for r in rows}
        if unknown:
            sys.exit("no such mutation: " + ", ".join(sorted(unknown)))
        rows = [r for r in rows if r[0] in keep]
    start = time.monotonic()
    work = scratch_copy()
    env = dict(os.environ, MOREAU_SHARED=args.shared,
               MOREAU_BIN=os.path.join(work, "build", "moreau"), MOREAU_LIB=shlib(work))
    try:
        check_rows(read_list(args.list), work, "the committed tree (git archive HEAD)", args.list)
        programs = test_programs(work)
        if args.tests:
            keep = set(args.tests.split(","))
            unknown = keep - {name_of(p) for p in programs}
            if unknown:
                sys.exit("no such test program: " + ", ".join(sorted(unknown)))
            programs = [p for p in programs if name_of(p) in keep]
        r = build(work, args.jobs, programs)
        if r.returncode != 0:
            sys.exit("the unmutated tree does not build:\n" + r.stdout[-3000:])
        programs = order_by_speed(work, programs, env)
        results = []
        for mid, file, old, new, what in rows:
            t0 = time.monotonic()
            path = os.path.join(work, file)
            src = open(path).read()
            open(path, "w").write(src.replace(old, new, 1))
            r = build(work, args.jobs, programs)
            if r.returncode != 0:  # not a bug the tests could see: the row must change
                err = [ln for ln in r.stdout.splitlines() if "error" in ln]
                verdict, by = "NO BUILD", (err[0] if err else "the build fails")[:120]
            else:
                failed = run_tests(work, programs, env, args.jobs)
                verdict, by = ("caught", failed) if failed else ("SURVIVED", "-")
            open(path, "w").write(src)
            secs = time.monotonic() - t0
            results.append((mid, file, what, verdict, by, secs))
            print(f"{mid:28s} {verdict:9s} {by} ({secs:.0f} s)", flush=True)
        build(work, args.jobs, programs)  # leave the scratch tree clean for a rerun
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = ["| mutation | file | the bug | verdict | caught by | s |", "|---|---|---|---|---|---|"]
    lines += [f"| {m} | {f} | {w} | {v} | {b} | {t:.0f} |" for m, f, w, v, b, t in results]
    caught = sum(1 for r in results if r[3] == "caught")
    lines.append("")
    lines.append(f"{caught} of {len(results)} mutations caught"
                 + (f" (test programs: {args.tests})" if args.tests else " (every test program)")
                 + f"; wall time {time.monotonic() - start:.0f} s, {args.jobs} jobs")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
