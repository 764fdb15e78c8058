"""What the nightly writes (docs/nightly.md, "Files"): the summary on stdout, nightly.json,
nightly.md (one page), nightly.svg (ratio per benchmark with its interval), one line per night in
the history (JSON lines) and trend.svg, each benchmark's ratio over the nights of the history that
share this night's baseline revision and set.

    python3 bench/nightly_report.py --trend runs/nightly/history.jsonl -o trend.svg
draws the trend of any history file (its last night's baseline revision and set).
"""

import json
import math
import os
import sys
import tempfile
from xml.sax.saxutils import escape

COLOURS = {"slower": "#c0392b", "faster": "#1e8449", "same": "#2c3e50", "noisy": "#d68910"}
WORDS = {"slower": "slower", "faster": "faster", "same": "same", "noisy": "unclear"}


def _atomic(path, text, mode="w"):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-" + os.path.basename(path))
    with os.fdopen(fd, mode) as f:
        f.write(text)
    os.replace(tmp, path)


def fmt_ratio(d):
    return f"{d['ratio']:.3f} [{d['low']:.3f}, {d['high']:.3f}]"


def moved_together(speed):
    """(direction, lo, hi) when every benchmark (at least two) is significantly on one side of 1."""
    if len(speed) < 2:
        return None
    if all(d["low"] > 1.0 for d in speed):
        direction = "slower"
    elif all(d["high"] < 1.0 for d in speed):
        direction = "faster"
    else:
        return None
    return direction, min(d["ratio"] for d in speed), max(d["ratio"] for d in speed)


def machine_spread(speed):
    """How much each build's own times moved during the session (largest / smallest sample of one
    build): (the median over the benchmarks, the largest, the benchmark with the largest)."""
    spreads = sorted((max(d["base_spread"], d["head_spread"]), d["name"]) for d in speed)
    if not spreads:
        return None
    return spreads[len(spreads) // 2][0], spreads[-1][0], spreads[-1][1]


def pairs_words(r):
    counts = [d["pairs"] for d in r["speed"]] or [r["settings"]["pairs"]]
    lo, hi = min(counts), max(counts)
    return f"{lo} interleaved pairs each" if lo == hi else f"{lo}-{hi} interleaved pairs each"


def interval_words(r):
    """'95% simultaneous intervals (each 99.4%, Bonferroni over 9)'."""
    s, speed = r["settings"], r["speed"]
    if not speed:
        return f"{s['confidence'] * 100:g}% intervals"
    k = speed[0]["tests"]
    if k == 1:
        return f"{s['confidence'] * 100:g}% interval"
    return (f"{s['confidence'] * 100:g}% simultaneous intervals: each {speed[0]['interval_confidence'] * 100:.2f}%, "
            f"Bonferroni over {k} benchmarks")


def summary_lines(r):
    s = r["settings"]
    a = r["answers"]
    out = []
    fr, bn = a["fronts"], a["benchmarks"]
    out.append(f"nightly: fronts {fr['identical']}/{fr['compared']} identical; "
               f"benchmark answers {bn['identical']}/{bn['compared']} identical")
    for diff in a["differences"][:10]:
        out.append(f"nightly:   DIFFERS: {diff}")
    if len(a["differences"]) > 10:
        out.append(f"nightly:   ... and {len(a['differences']) - 10} more (nightly.md)")
    speed = r["speed"]
    out.append(f"nightly: speed: time HEAD/baseline [{interval_words(r)}], {pairs_words(r)}; "
               f"slower = at least {1 + s['threshold']:.2f} with the interval above 1; slowest first:")
    width = max([len(d["name"]) for d in speed] + [10])
    for d in speed:
        out.append(f"nightly:   {d['name']:<{width}}  {fmt_ratio(d)}  {WORDS[d['verdict']]:<7} "
                   f"({d['measure']} time; HEAD slower in {d['pairs_slower']}/{d['pairs']} pairs)")
    together = moved_together(speed)
    if together:
        direction, lo, hi = together
        out.append(f"nightly: every benchmark moved together ({direction}, {lo:.3f} to {hi:.3f}): the two builds ran "
                   f"interleaved, so machine load cancels in these ratios; the common cause is in the programs "
                   f"(build flags, a routine they all share), not the machine")
    spread = machine_spread(speed)
    if spread:
        out.append(f"nightly: machine: during the session a build's own times varied {spread[0]:.2f}x for the "
                   f"median benchmark, up to {spread[1]:.2f}x ({spread[2]}); the pairing keeps that out of the ratios")
    for n in r["notes"]:
        out.append(f"nightly: note: {n}")
    slower = [d for d in speed if d["verdict"] == "slower"]
    if r["status"] == 1:
        out.append(f"nightly: ANSWERS DIFFER ({len(a['differences'])} differences)"
                   + (f"; also {len(slower)} benchmark(s) slower" if slower else ""))
    elif r["status"] == 3:
        out.append(f"nightly: SPEED REGRESSION: {len(slower)} benchmark(s) slower: "
                   + ", ".join(f"{d['name']} {d['ratio']:.3f}" for d in slower))
    else:
        out.append("nightly: PASS: answers identical, no benchmark significantly slower beyond the threshold")
    return out


def svg(r):
    """Forest plot: one row per benchmark, the ratio as a dot, its interval as a bar, on a log axis."""
    speed = r["speed"]
    s = r["settings"]
    # DejaVu Sans at 12 px: about 7 px a character.
    row, top, right, plot_w = 24, 64, 150, 460
    left = 24 + 7 * max([len(d["name"]) for d in speed] + [20])
    height = top + row * max(len(speed), 1) + 56
    width = left + plot_w + right
    t = s["threshold"]
    lo = min([d["low"] for d in speed] + [1 / (1 + t) / 1.02, 0.9])
    hi = max([d["high"] for d in speed] + [(1 + t) * 1.02, 1.1])
    lo, hi = math.log(lo), math.log(hi)

    def x(v):
        return left + (math.log(v) - lo) / (hi - lo) * plot_w

    head, base = r["head"], r["baseline"]
    e = []
    e.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">')
    e.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    title = (f"time HEAD / baseline per benchmark: {r['verdict']}")
    e.append(f'<text x="12" y="22" font-size="15" font-weight="bold">{escape(title)}</text>')
    sub = (f"HEAD {(head['revision'] or '?')[:10]} vs baseline {(base['revision'] or '?')[:10]} · "
           f"{pairs_words(r)} · {interval_words(r)} · dashed: threshold")
    e.append(f'<text x="12" y="42" fill="#555">{escape(sub)}</text>')
    y0, y1 = top - 6, top + row * len(speed)
    # Grid: ticks at round ratios within the range.
    candidates = [v for v in (0.25, 0.33, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2.0, 2.5,
                              3.0, 4.0) if lo <= math.log(v) <= hi]
    ticks = [1.0]
    for v in sorted(candidates, key=lambda v: abs(math.log(v))):  # nearest 1 first; keep them 40 px apart
        if all(abs(x(v) - x(u)) >= 40 for u in ticks):
            ticks.append(v)
    for v in ticks:
        e.append(f'<line x1="{x(v):.1f}" y1="{y0}" x2="{x(v):.1f}" y2="{y1}" stroke="#e5e5e5"/>')
        e.append(f'<text x="{x(v):.1f}" y="{y1 + 16}" text-anchor="middle" fill="#555">{v:g}</text>')
    for v, dash in ((1 + t, "4,3"), (1 / (1 + t), "4,3")):
        e.append(f'<line x1="{x(v):.1f}" y1="{y0}" x2="{x(v):.1f}" y2="{y1}" stroke="#999" stroke-dasharray="{dash}"/>')
    e.append(f'<line x1="{x(1.0):.1f}" y1="{y0}" x2="{x(1.0):.1f}" y2="{y1}" stroke="#333"/>')
    e.append(f'<text x="{left + plot_w / 2:.0f}" y="{y1 + 34}" text-anchor="middle" fill="#333">'
             f'ratio of times (log scale): &lt; 1 HEAD faster, &gt; 1 HEAD slower</text>')
    for i, d in enumerate(speed):
        y = top + row * i + row / 2
        c = COLOURS[d["verdict"]]
        if i % 2:
            e.append(f'<rect x="0" y="{top + row * i}" width="{width}" height="{row}" fill="#f7f7f7" fill-opacity="0.6"/>')
        e.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{escape(d["name"])}</text>')
        e.append(f'<line x1="{x(d["low"]):.1f}" y1="{y:.1f}" x2="{x(d["high"]):.1f}" y2="{y:.1f}" '
                 f'stroke="{c}" stroke-width="3"/>')
        for v in (d["low"], d["high"]):
            e.append(f'<line x1="{x(v):.1f}" y1="{y - 5:.1f}" x2="{x(v):.1f}" y2="{y + 5:.1f}" stroke="{c}" stroke-width="2"/>')
        e.append(f'<circle cx="{x(d["ratio"]):.1f}" cy="{y:.1f}" r="4.5" fill="{c}"/>')
        e.append(f'<text x="{left + plot_w + 10}" y="{y + 4:.1f}" fill="{c}">{d["ratio"]:.3f} '
                 f'{WORDS[d["verdict"]]}</text>')
    if not speed:
        e.append(f'<text x="{left}" y="{top + 14}" fill="#555">no benchmark compared</text>')
    e.append("</svg>")
    return "\n".join(e) + "\n"


def markdown(r):
    s, a = r["settings"], r["answers"]
    head, base = r["head"], r["baseline"]
    L = []
    L.append(f"# Nightly: {r['verdict']} (exit status {r['status']})")
    L.append("")
    L.append(f"HEAD **{escape_md(head['description'])}** against baseline **{escape_md(base['description'])}**, "
             f"{r['started']}, {r['set']} set, {pairs_words(r)} "
             f"(min time {s['min_time_s']:g} s a run), {interval_words(r)}, threshold "
             f"+{s['threshold'] * 100:g}%. Machine: {r['machine']['nproc']} cores, load "
             f"{r['machine']['loadavg_start'][0]:.1f} at the start and {r['machine']['loadavg_end'][0]:.1f} at the end. "
             f"Took {r['seconds']['total']:.0f} s (builds {r['seconds']['build']:.0f}, fronts "
             f"{r['seconds']['fronts']:.0f}, benchmarks {r['seconds']['benchmarks']:.0f}).")
    L.append("")
    L.append("## Answers")
    L.append("")
    L.append(f"Fronts **{a['fronts']['identical']}/{a['fronts']['compared']} identical**, benchmark answers "
             f"**{a['benchmarks']['identical']}/{a['benchmarks']['compared']} identical** (reference: "
             f"{escape_md(a['reference'])}).")
    if a["differences"]:
        L.append("")
        for diff in a["differences"][:30]:
            L.append(f"- {escape_md(diff)}")
        if len(a["differences"]) > 30:
            L.append(f"- ... {len(a['differences']) - 30} more in nightly.json")
    L.append("")
    L.append("## Speed")
    L.append("")
    L.append("![time HEAD / baseline per benchmark](nightly.svg)")
    L.append("")
    L.append("| benchmark | HEAD / baseline | interval | HEAD slower in | verdict | time | baseline median |")
    L.append("|---|---:|---:|---:|---|---|---:|")
    for d in r["speed"]:
        L.append(f"| `{d['name']}` | {d['ratio']:.3f} | {d['low']:.3f} - {d['high']:.3f} | "
                 f"{d['pairs_slower']}/{d['pairs']} | {WORDS[d['verdict']]} | {d['measure']} | "
                 f"{human_time(d['base_median'])} |")
    L.append("")
    together = moved_together(r["speed"])
    if together:
        L.append(f"Every benchmark moved together ({together[0]}, {together[1]:.3f} to {together[2]:.3f}). The "
                 f"builds ran interleaved, so machine load cancels in the ratios: look for a cause common to the "
                 f"programs (build flags, a routine they all share).")
        L.append("")
    spread = machine_spread(r["speed"])
    if spread:
        L.append(f"During the session a build's own times varied {spread[0]:.2f}x for the median benchmark, up "
                 f"to {spread[1]:.2f}x (`{spread[2]}`): that is the machine, which the pairing keeps out of the "
                 f"ratios.")
        L.append("")
    if r["notes"]:
        L.append("## Notes")
        L.append("")
        for n in r["notes"]:
            L.append(f"- {escape_md(n)}")
        L.append("")
    L.append("Ratios are of times (> 1: HEAD slower), the median over the pairs, with the sign test's interval. "
             "*slower*: ratio at least 1 + threshold and the interval above 1 (exit 3 when the answers are "
             "identical); *faster*: the mirror image; *same*: the interval within the threshold; *unclear*: "
             "neither (too noisy to tell, or significant but below the threshold). See docs/nightly.md.")
    return "\n".join(L) + "\n"


def escape_md(text):
    return str(text).replace("|", "\\|")


def human_time(seconds):
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= f:
            return f"{seconds / f:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def history_line(r):
    return {
        "started": r["started"], "status": r["status"], "verdict": r["verdict"], "set": r["set"],
        "head": r["head"]["revision"], "baseline": r["baseline"]["revision"],
        "pairs": r["settings"]["pairs"], "threshold": r["settings"]["threshold"],
        "confidence": r["settings"]["confidence"],
        "fronts": [r["answers"]["fronts"]["identical"], r["answers"]["fronts"]["compared"]],
        "benchmark_answers": [r["answers"]["benchmarks"]["identical"], r["answers"]["benchmarks"]["compared"]],
        "speed": {d["name"]: {"ratio": round(d["ratio"], 5), "low": round(d["low"], 5), "high": round(d["high"], 5),
                              "verdict": d["verdict"], "base_median_s": d["base_median"]} for d in r["speed"]},
        "seconds": r["seconds"],
    }


PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]


def read_history(path):
    nights = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                nights.append(json.loads(line))
            except ValueError as e:
                raise ValueError(f"{path}:{number}: not a JSON line ({e})")
    return nights


def trend_svg(nights):
    """Each benchmark's ratio over the nights with the last night's baseline revision and set (log
    axis); None with fewer than two such nights."""
    if not nights:
        return None
    last = nights[-1]
    same = [n for n in nights if n.get("baseline") == last.get("baseline") and n.get("set") == last.get("set")]
    if len(same) < 2:
        return None
    names = sorted({k for n in same for k in n.get("speed", {})})
    values = [d[k] for n in same for d in [n["speed"]] for k in d]
    lo = math.log(min([v["ratio"] for v in values] + [0.9]))
    hi = math.log(max([v["ratio"] for v in values] + [1.1]))
    left, top, plot_w, plot_h = 60, 50, 640, 300
    legend_w = 24 + 7 * max(len(k) for k in names)
    width, height = left + plot_w + 30 + legend_w, top + plot_h + 60 + max(0, 18 * len(names) - plot_h)

    def x(i):
        return left + (plot_w * i / (len(same) - 1))

    def y(v):
        return top + plot_h - (math.log(v) - lo) / (hi - lo) * plot_h

    e = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="12" y="22" font-size="15" font-weight="bold">time HEAD / baseline over {len(same)} nights</text>',
         f'<text x="12" y="40" fill="#555">baseline {escape(str(last.get("baseline"))[:12])}, {escape(last.get("set", "?"))} '
         f'set; hollow: not significant or within the threshold; filled: slower or faster</text>']
    for v in (0.5, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.25, 1.5, 2.0):
        if lo <= math.log(v) <= hi:
            e.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" '
                     f'stroke="{"#333" if v == 1.0 else "#e5e5e5"}"/>')
            e.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" fill="#555">{v:g}</text>')
    step = max(1, len(same) // 8)
    for i, n in enumerate(same):
        if i % step == 0 or i == len(same) - 1:
            e.append(f'<text x="{x(i):.1f}" y="{top + plot_h + 18}" text-anchor="middle" fill="#555">'
                     f'{escape(n.get("started", "?")[:10])}</text>')
    for j, name in enumerate(names):
        c = PALETTE[j % len(PALETTE)]
        pts = [(i, n["speed"][name]) for i, n in enumerate(same) if name in n.get("speed", {})]
        if len(pts) > 1:
            e.append('<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>'.format(
                c, " ".join(f"{x(i):.1f},{y(v['ratio']):.1f}" for i, v in pts)))
        for i, v in pts:
            filled = v.get("verdict") in ("slower", "faster")
            e.append(f'<circle cx="{x(i):.1f}" cy="{y(v["ratio"]):.1f}" r="3.5" stroke="{c}" '
                     f'fill="{c if filled else "white"}"/>')
        ly = top + 18 * j
        e.append(f'<line x1="{left + plot_w + 30}" y1="{ly}" x2="{left + plot_w + 46}" y2="{ly}" stroke="{c}" stroke-width="3"/>')
        e.append(f'<text x="{left + plot_w + 52}" y="{ly + 4}">{escape(name)}</text>')
    e.append("</svg>")
    return "\n".join(e) + "\n"


def write_all(r, out_dir, history):
    os.makedirs(out_dir, exist_ok=True)
    _atomic(os.path.join(out_dir, "nightly.json"), json.dumps(r, indent=1, sort_keys=True) + "\n")
    _atomic(os.path.join(out_dir, "nightly.md"), markdown(r))
    _atomic(os.path.join(out_dir, "nightly.svg"), svg(r))
    if history:
        os.makedirs(os.path.dirname(os.path.abspath(history)), exist_ok=True)
        # One line, appended in one write: concurrent nightlies do not interleave their lines.
        line = json.dumps(history_line(r), sort_keys=True) + "\n"
        fd = os.open(history, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        trend = trend_svg(read_history(history))
        if trend:
            _atomic(os.path.join(out_dir, "trend.svg"), trend)


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description="Draws the trend of a nightly history (JSON lines) as SVG.")
    p.add_argument("--trend", required=True, metavar="HISTORY", help="history.jsonl of bench/nightly.sh")
    p.add_argument("-o", "--output", required=True, help="SVG to write")
    a = p.parse_args(argv)
    try:
        text = trend_svg(read_history(a.trend))
    except (OSError, ValueError) as e:
        print(f"nightly_report: {e}", file=sys.stderr)
        return 2
    if text is None:
        print(f"nightly_report: {a.trend}: fewer than two nights with the last night's baseline and set",
              file=sys.stderr)
        return 2
    _atomic(a.output, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
