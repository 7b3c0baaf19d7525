#!/usr/bin/env python3
"""Writes the measured benchmark table of results/README.md from one
Google Benchmark JSON file (between the BENCH-TABLE markers), with ratios
computed from rows of that same run, and optionally the trace-replay
benchmarks from a second file of the same scripts/bench run.
Figures are copied, never typed.

  bench-table.py ENGINE.json results/README.md [TRACE.json [BIG.json]]

BIG.json holds rows run in a process of their own (the 1e7-job end-to-end
row, whose peak RSS must not include the other rows'); they are appended
to the engine table, marked as such."""
import json
import sys

BEGIN, END = "<!-- BENCH-TABLE:BEGIN -->", "<!-- BENCH-TABLE:END -->"


def human(sec):
    for limit, div, unit in ((60, 1, "s"), (3600, 60, "m"), (86400, 3600, "h")):
        if sec < limit:
            return f"{sec / div:.1f}{unit}"
    return f"{sec / 86400:.1f}d"


def fmt(x):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.2f}"


def trace_lines(src):
    """The trace-replay benchmarks (bench/trace_benchmark.cc) of one run."""
    data = json.load(open(src))
    rows = {b["name"]: b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"}
    lines = ["", f"Trace replay, run `{src}` (git {data['context'].get('git_sha', '?')}):", "",
             "| benchmark | wall time | jobs/s (all policies) |", "|---|---|---|"]
    for name, b in rows.items():
        if b.get("error_occurred"):
            lines.append(f"| {name} | error: {b.get('error_message', '')} | |")
            continue
        rate = b.get("jobs_per_s", b.get("rows_per_s", 0))
        lines.append(f"| {name} | {b['real_time']:.1f} {b.get('time_unit', 'ns')} | {fmt(rate)} |")
    full = rows.get("BM_PhillyCompareStandard/threads:2/checks:1/iterations:1/real_time")
    if full and not full.get("error_occurred"):
        secs = full["real_time"] / (1000.0 if full.get("time_unit") == "ms" else 1.0)
        lines += ["", f"- the full Philly replay under all {int(full.get('policies', 0))} standard policies "
                      f"(2 threads, invariant checks on) takes **{secs:.2f} s** wall (target: under 5 s)"]
    return lines


def main(src, readme, trace_src=None, *big_srcs):
    data = json.load(open(src))
    ctx = data["context"]
    rows = {b["name"]: b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"}
    for big_src in big_srcs:
        for b in json.load(open(big_src))["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                rows[b["name"]] = dict(b, name=b["name"] + " (own process)")
    # Benchmarks run with repetitions report aggregates only: the median
    # stands for the benchmark (named as without repetitions).
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            rows[b["run_name"]] = dict(b, name=b["run_name"] + " (median of " + str(b.get("repetitions", "?")) + ")")
    lines = [BEGIN, "",
             f"Run `{src}`: {ctx.get('date', '?')}, git {ctx.get('git_sha', '?')}, "
             f"{ctx.get('num_cpus', '?')} CPUs ({ctx.get('cpu_model', '?')}); quotasim built Release "
             f"(the packaged Google Benchmark library reports build type {ctx.get('library_build_type', '?')}).", "",
             "Peak RSS is the process high-water mark after each benchmark, so it only grows down the table: "
             "bytes/job is meaningful for the first row of each size only"
             + (f"; rows marked (own process) ran alone, from {', '.join('`' + b + '`' for b in big_srcs)}." if big_srcs else "."), "",
             "| benchmark | wall time | jobs/s | events/s | peak RSS | bytes/job |",
             "|---|---|---|---|---|---|"]
    for name, b in rows.items():
        if b.get("error_occurred"):
            lines.append(f"| {b.get('name', name)} | error: {b.get('error_message', '')} | | | | |")
            continue
        t = b["real_time"]
        unit = b.get("time_unit", "ns")
        shown = f"{t:.3g}" if t < 100 else f"{t:.1f}"
        lines.append(f"| {b.get('name', name)} | {shown} {unit} | {fmt(b.get('jobs_per_s', 0))} | {fmt(b.get('events_per_s', 0))} | "
                     f"{fmt(b.get('peak_rss_bytes', 0))}B | {fmt(b.get('bytes_per_job', 0))} |")

    # The regime each end-to-end row ran in (profile 0: steady, gen's
    # default; 1: stress), beside its speed.
    regime = [(n, b) for n, b in rows.items() if n.startswith("BM_EndToEnd/profile:") and not b.get("error_occurred")]
    if regime:
        lines += ["", "The regime of the end-to-end rows (from the checked run's summary; backlog = jobs waiting):", "",
                  "| benchmark | backlog peak | backlog mean over arrivals | backlog at last arrival | utilisation | wait p50 | wait p95 | wait p99 | rejected requests |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for n, b in regime:
            lines.append(f"| {b.get('name', n)} | {fmt(b.get('backlog_peak', 0))} | {fmt(b.get('backlog_mean', 0))} | "
                         f"{fmt(b.get('backlog_end', 0))} | {100 * b.get('utilisation', 0):.0f}% | {human(b.get('wait_p50_s', 0))} | "
                         f"{human(b.get('wait_p95_s', 0))} | {human(b.get('wait_p99_s', 0))} | {int(b.get('rejected', 0))} |")

    def quotient(num, den):  # real_time of num / den, when both ran cleanly
        if all(n in rows and not rows[n].get("error_occurred") for n in (num, den)):
            return rows[num]["real_time"] / rows[den]["real_time"]
        return None

    def line(value, text):
        if value is not None:
            lines.append(text.format(value))

    lines += ["", "Ratios within this run:"]
    for jobs, label in ((1000, "1e3"), (10000, "1e4"), (100000, "1e5")):
        line(quotient(f"BM_ReferenceEngine/jobs:{jobs}/iterations:1", f"BM_FastEngine/jobs:{jobs}"),
             f"- fast engine vs reference, {label} jobs (load 0.5): **{{:.2f}}x**")
    line(quotient("BM_Sweep8/threads:1/repeats:5/real_time", "BM_Sweep8/threads:2/repeats:5/real_time"),
         "- sweep of 8 variants, 2 threads vs 1 (medians of 5): **{:.2f}x**")
    line(quotient("BM_DispatchPass/queued_per_share:10000", "BM_DispatchPass/queued_per_share:10"),
         "- one scheduling pass with 1,000x longer queues (10,000 vs 10 jobs per share): **{:.2f}x** the time")
    passes = rows.get("BM_PassesInRun/jobs:1000000/iterations:1/real_time")
    if passes is not None and not passes.get("error_occurred"):
        lines.append(f"- the scheduling passes of the 1e6-job steady run (BM_PassesInRun): "
                     f"**{passes['ns_per_pass']:.0f} ns** per pass over {fmt(passes['passes'])} passes, "
                     f"{passes['ns_per_round']:.0f} ns per round that ran ({fmt(passes['rounds'])} rounds), "
                     f"each figure including the {passes['clock_pair_ns']:.0f} ns steady_clock pair taken around every pass"
                     + (f"; without it (the pair's cost in a loop taken off once per pass, an estimate) "
                        f"**{passes['ns_per_pass_net']:.0f} ns** per pass and **{passes['ns_per_round_net']:.0f} ns** per round"
                        if "ns_per_round_net" in passes else ""))
    line(quotient("BM_VictimSelection/dispatched:100000", "BM_VictimSelection/dispatched:1000"),
         "- one in-share victim choice among 100x more dispatched jobs (1e5 vs 1e3): **{:.2f}x** the time")
    base = "BM_WithoutEventLog/jobs:100000/iterations:3/real_time"
    for name, how in (("BM_WithEventLog/jobs:100000/iterations:3/real_time", "formatted and written on the engine thread"),
                      ("BM_WithAsyncEventLog/jobs:100000/iterations:3/real_time", "formatted and written on a second thread")):
        line(quotient(base, name),
             f"- simulation with the JSON Lines log {how} runs at **{{:.2f}}** of the speed without it (1e5 jobs)")
    if trace_src:
        lines += trace_lines(trace_src)
    lines += ["", END]
    text = open(readme).read() if __import__("os").path.exists(readme) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + "\n".join(lines) + text[text.index(END) + len(END):]
    else:
        text += "\n## Engine benchmarks (scripts/bench)\n\n" + "\n".join(lines) + "\n"
    open(readme, "w").write(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None, *sys.argv[4:])
