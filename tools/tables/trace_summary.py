#!/usr/bin/env python3
"""Where one training iteration's time goes, from `diffloco train --trace-iteration N`.

    python3 tools/tables/trace_summary.py RUN/trace_iteration_N.json [--top 30]

The trace (Chrome trace format, written by LibTorch's profiler) holds every torch operation and
autograd node of the iteration, nested. Per thread this prints the top-level events (those not
inside another event of the same thread) grouped by name: total time, count, mean. The simulator's
forward step and other code outside torch operations appear as the gap between the thread's span
and its top-level total. A few events are far longer than their kind's median when the thread was
descheduled (two cores shared by the simulator's pool and the critic's thread): the `max` column
shows them.
"""
import argparse
import collections
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=30, help="rows per thread (default 30)")
    args = ap.parse_args()
    try:
        with open(args.trace) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{args.trace}: not a readable trace ({e})")
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    threads = collections.defaultdict(list)
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and "dur" in e and "ts" in e:
            threads[e.get("tid")].append(e)
    if not threads:
        sys.exit(f"{args.trace}: no complete events")
    for tid, es in sorted(threads.items(), key=lambda kv: -len(kv[1])):
        es.sort(key=lambda e: (e["ts"], -e["dur"]))
        top, end = [], float("-inf")
        for e in es:
            if e["ts"] >= end:  # not inside the previous top-level event
                top.append(e)
                end = e["ts"] + e["dur"]
        span = max(e["ts"] + e["dur"] for e in es) - min(e["ts"] for e in es)
        total = sum(e["dur"] for e in top)
        print(f"thread {tid}: span {span / 1e3:.1f} ms, top-level events {len(top)} "
              f"({len(es)} in all) taking {total / 1e3:.1f} ms; outside them {(span - total) / 1e3:.1f} ms")
        durations = collections.defaultdict(list)
        for e in top:
            durations[e["name"]].append(e["dur"])
        rows = sorted(durations.items(), key=lambda kv: -sum(kv[1]))[: args.top]
        print(f"  {'total ms':>9} {'count':>6} {'median us':>10} {'max us':>9}  name")
        for name, d in rows:
            print(f"  {sum(d) / 1e3:9.2f} {len(d):6d} {statistics.median(d):10.1f} {max(d):9.0f}  {name}")


if __name__ == "__main__":
    main()
