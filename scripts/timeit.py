#!/usr/bin/env python3
"""Time a command as a whole process, as the bench scripts do: one warm-up run, then RUNS runs;
print the median and range of wall time and the median CPU time (user + sys of the command and
its children, from getrusage). Standard output is thrown away; a run that exits with a code not
in --ok stops the bench with its stderr.

Usage: scripts/timeit.py [--runs N] [--ok 0,1] [--before 'SHELL COMMAND'] -- COMMAND [ARG ...]
       --before runs (in a shell) ahead of every run, untimed: e.g. to remove an output file.
Prints one line: "median WALL s (min MIN, max MAX)  cpu CPU s" and, with --json, that as JSON.
"""
import argparse, json, resource, statistics, subprocess, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=5)
parser.add_argument("--ok", default="0")
parser.add_argument("--before")
parser.add_argument("--json", action="store_true")
parser.add_argument("command", nargs=argparse.REMAINDER)
args = parser.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
ok = {int(code) for code in args.ok.split(",")}

walls, cpus = [], []
for run in range(args.runs + 1):
    if args.before:
        subprocess.run(args.before, shell=True, check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        sys.exit(f"error: {' '.join(command)} exited {done.returncode}:\n{done.stderr.decode()}")
    if run == 0:
        continue  # the warm-up
    walls.append(wall)
    cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
result = {"wall": statistics.median(walls), "min": min(walls), "max": max(walls),
          "cpu": statistics.median(cpus)}
if args.json:
    print(json.dumps(result))
else:
    print(f"median {result['wall']:.3f} s (min {result['min']:.3f}, max {result['max']:.3f})  "
          f"cpu {result['cpu']:.3f} s")
