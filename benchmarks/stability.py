#!/usr/bin/env python3
"""Stability of ilgen's findings across recorded runs: how much does the order a run took matter?

    stability.py [--runs R] [--chaos-seed S] [--filter SUBSTR] [--apps] [-j N] [--work DIR]
                 [--json FILE]

For every benchmarks/scenarios/*.c (with --apps also benchmarks/apps/*.c, built at -O2 with their
LIBS), built once with `ilgen cc`: records R runs plain and R runs perturbed (`--chaos`, seeds
S..S+R-1), one `ilgen run --timeout` each (so that a run that hangs or is killed, as the header's
ENDS says, does not end the series as `ilgen run --runs` would), runs `ilgen detect --all-sites` on
each run alone and on the R runs together (`ilgen detect DIR...`), and prints per program and
finding: in how many of the R single-run detects it was found, and whether the detect of all R
runs found it, plain and perturbed. A finding the header's EXPECT lines do not name is marked
false. Then one line per mode: programs whose every expected error some single run found, the
union found, and the programs whose verdict changed between single runs. --json FILE also
writes the per-program results (every single run's findings and the union's, per mode) for
`evaluate.py table1 --stability FILE`; the layout is described in evaluate.py.

Exit 0 when it printed its tables, 2 on a harness or input error (bad header, build failure,
unusable trace). Reuses evaluate.py's header parser, runner and report reading; standard library
only. It records and replays many times: run it on a quiet machine, and use --filter to try it.
"""

import argparse
import concurrent.futures
import json
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import evaluate as ev

MODES = ("plain", "chaos")


@dataclass
class Stability:
    """One program's findings: per mode, one set per single-run detect and the union's set."""
    hdr: ev.Header
    single: dict = field(default_factory=dict)  # mode -> [set of errors], one per run
    union: dict = field(default_factory=dict)  # mode -> set of errors
    error: str = ""


def detect(ilgen, dirs, wdir, name, base):
    """`ilgen detect --all-sites --format json DIRS...` -> the set of confirmed errors."""
    out, err = wdir / f"{name}.json", wdir / f"{name}.stderr"
    d = ev.run([ilgen, "detect", "--all-sites", "--format", "json", "--replay-timeout",
                str(ev.REPLAY_TIMEOUT)] + [str(x) for x in dirs], cwd=wdir, env=ev.clean_env(),
               timeout=ev.DETECT_TIMEOUT * len(dirs), stdout=out, stderr=err)
    if d.rc not in (0, 66):
        raise ev.InputError(f"ilgen detect {' '.join(map(str, dirs))} exited {d.rc}\n"
                            f"{ev.tail(err)}")
    try:
        return ev.findings_to_errors(json.loads(out.read_text()), base)
    except ValueError as e:
        raise ev.InputError(f"{out}: ilgen detect's JSON report does not parse: {e}")


def record(ilgen, exe, hdr, wdir, mode, args):
    """R runs of EXE into WDIR/MODE/run-<i> (those that left a trace); gives their directories."""
    out = wdir / mode
    for i in range(args.runs):
        ev.ilgen_run(ilgen, hdr, exe, out / f"run-{i}", wdir, f"{mode}-{i}",
                     chaos=args.chaos_seed + i if mode == "chaos" else None)
    dirs = [out / f"run-{i}" for i in range(args.runs)]
    dirs = [d for d in dirs if (d / "meta.json").is_file()]
    if not dirs:
        raise ev.InputError(f"{hdr.path}: no run left a trace in {out}\n"
                            f"{ev.tail(wdir / f'{mode}-0.stderr')}")
    return dirs


def program(hdr, app, args):
    res = Stability(hdr)
    wdir = Path(args.work) / "stability" / hdr.name
    if wdir.exists():
        shutil.rmtree(wdir)
    wdir.mkdir(parents=True)
    ilgen = ev.ilgen_bin(args)
    exe = wdir / hdr.name
    opt = "-O2" if app else "-O0"
    try:
        ev.build([ilgen, "cc", "-g", opt, str(hdr.path), "-o", str(exe), "-lpthread"] + hdr.libs,
                 wdir / "build.log", str(hdr.path))
        for mode in MODES:
            dirs = record(ilgen, exe, hdr, wdir, mode, args)
            base = hdr.path.name
            res.single[mode] = [detect(ilgen, [d], wdir, f"{mode}-{i}", base)
                                for i, d in enumerate(dirs)]
            res.union[mode] = detect(ilgen, dirs, wdir, f"{mode}-all", base)
    except ev.InputError as e:
        res.error = str(e)
    return res


def table(results):
    """The per-finding Markdown table and one summary line per mode."""
    lines = ["| program | finding | " + " | ".join(
        f"{m}: found in k/R single runs | {m}: union" for m in MODES) + " |",
        "|---|---|" + "---|---|" * len(MODES)]
    summary = {m: {"all_single": 0, "union": 0, "changed": 0} for m in MODES}
    for r in results:
        found = set().union(*(s for m in MODES for s in r.single[m]), *r.union.values())
        for err in sorted(r.hdr.expect | found, key=ev.fmt_err):
            what = ev.fmt_err(err) + ("" if err in r.hdr.expect else " (false)")
            cells = []
            for m in MODES:
                runs = r.single[m]
                k = sum(err in s for s in runs)
                cells.append(f"{k}/{len(runs)} | {'yes' if err in r.union[m] else 'no'}")
            lines.append(f"| {r.hdr.name} | {what} | " + " | ".join(cells) + " |")
        for m in MODES:
            verdicts = {frozenset(s) for s in r.single[m]}
            summary[m]["all_single"] += ev.runs_finding_all(r.hdr.expect, r.single[m]) > 0
            summary[m]["union"] += r.hdr.expect <= r.union[m]
            summary[m]["changed"] += len(verdicts) > 1
    n = len(results)
    for m in MODES:
        s = summary[m]
        lines.append(f"{m}: {s['all_single']}/{n} programs fully found by some single run, "
                     f"{s['union']}/{n} by the union of the runs; {s['changed']} program(s) "
                     f"changed verdict between single runs")
    return "\n".join(lines)


def write_json(path, results, failed, args, cmdline):
    """The per-program results in the layout `evaluate.load_stability` reads."""
    def errs(s):
        return [ev.err_to_json(e) for e in sorted(s, key=ev.fmt_err)]

    programs = [{"name": r.hdr.name, "file": str(r.hdr.path), "expect": errs(r.hdr.expect),
                 "modes": {m: {"single": [errs(s) for s in r.single[m]], "union": errs(r.union[m])}
                           for m in MODES}}
                for r in results]
    data = {"format": ev.STABILITY_FORMAT[0], "version": ev.STABILITY_FORMAT[1],
            "runs": args.runs, "chaos_seed": args.chaos_seed, "machine": ev.machine_line(),
            "command": shlex.join(["python3", "benchmarks/stability.py"] + cmdline),
            "programs": programs, "failed": [r.error for r in failed]}
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="recorded runs per mode (R)")
    ap.add_argument("--chaos-seed", type=int, default=1, help="first seed of the perturbed runs")
    ap.add_argument("--filter", default="", help="only files whose name contains SUBSTR")
    ap.add_argument("--apps", action="store_true", help="the applications too")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="programs at a time")
    ap.add_argument("--work", default=str(ev.DEFAULT_WORK), help="scratch directory")
    ap.add_argument("--ilgen", default=str(ev.REPO / "target" / "release" / "ilgen"))
    ap.add_argument("--json", metavar="FILE",
                    help="also write the per-program results there (for evaluate.py table1)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.chaos_seed < 1:
        print("stability: --runs and --chaos-seed must be at least 1", file=sys.stderr)
        return 2
    if args.json and not Path(args.json).resolve().parent.is_dir():
        print(f"stability: --json {args.json}: no such directory", file=sys.stderr)
        return 2
    try:
        ev.ilgen_bin(args)
        headers, errors = ev.load_headers(ev.SCEN_DIR, args.filter)
        programs = [(h, False) for h in headers]
        if args.apps:
            headers, more = ev.load_headers(ev.APPS_DIR, args.filter, app=True)
            programs += [(h, True) for h in headers]
            errors += more
    except ev.InputError as e:
        print(f"stability: {e}", file=sys.stderr)
        return 2
    for e in errors:
        print(f"stability: {e}", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        results = list(ex.map(lambda p: program(p[0], p[1], args), programs))
    failed = [r for r in results if r.error]
    for r in failed:
        print(f"stability: {r.error}", file=sys.stderr)
    ok = [r for r in results if not r.error]
    print(table(ok))
    if args.json:
        try:
            write_json(args.json, ok, failed, args, sys.argv[1:] if argv is None else argv)
        except OSError as e:
            print(f"stability: cannot write {args.json}: {e.strerror}", file=sys.stderr)
            return 2
    return 2 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
