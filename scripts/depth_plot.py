#!/usr/bin/env python3
"""Depth curves as an SVG (scripts/bench_depth.sh writes the input): tokens/s against the KV
cache depth, prefill (pp) and decode (tg) side by side, one line per system and thread count
(median of the rounds, a bar for their range), the machine's description under the title.

usage: scripts/depth_plot.py RAW.jsonl MACHINE.txt OUT.svg
RAW.jsonl: one JSON object a line with system, n_prompt, n_gen, n_depth, threads or n_threads,
avg_ts (the lines of `qmm bench model -o jsonl` and `llama-bench -o jsonl`, tagged with system).
Python 3 standard library only.
"""
import json
import statistics
import sys
from html import escape

W = 980
LEGEND_W = 190  # px per legend entry
PANEL_W, PANEL_H, LEFT, GAP = 400, 300, 70, 90
TOP = 0  # set from the number of note lines
COLORS = {"qmm": ["#1f6feb", "#0b3d91"], "llama.cpp": ["#d9480f", "#862e00"], "ik_llama.cpp": ["#2f9e44", "#1b5e20"]}
DASHES = ["", "6,4", "2,3"]


def load(path):
    """(system, test, threads) -> {depth: [tokens/s of each round]}"""
    series = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
                test = "pp" if r["n_prompt"] > 0 else "tg"
                threads = r.get("threads", r.get("n_threads"))
                key = (r["system"], test, int(threads))
                series.setdefault(key, {}).setdefault(int(r["n_depth"]), []).append(float(r["avg_ts"]))
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"depth_plot.py: {path}:{n}: not a benchmark line ({e})")
    if not series:
        sys.exit(f"depth_plot.py: {path}: no results")
    return series


def nice_max(v):
    """A round upper bound for an axis whose largest value is v."""
    step = 10 ** max(0, len(str(int(v))) - 1)
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if v <= m * step:
            return m * step
    return 10 * step


def panel(out, x0, title, series, depths):
    ymax = nice_max(max(max(v) for s in series.values() for v in s.values()) * 1.05)
    dmax = max(depths) or 1
    sx = lambda d: x0 + d / dmax * PANEL_W
    sy = lambda v: TOP + PANEL_H - v / ymax * PANEL_H
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 14}" text-anchor="middle" font-weight="bold">{escape(title)}</text>')
    out.append(f'<rect x="{x0}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#888"/>')
    for i in range(6):
        v = ymax * i / 5
        y = sy(v)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + PANEL_W}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>')
    for d in depths:
        out.append(f'<text x="{sx(d):.1f}" y="{TOP + PANEL_H + 16}" text-anchor="middle" font-size="11">{d}</text>')
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP + PANEL_H + 36}" text-anchor="middle" font-size="12">depth (positions already in the KV cache)</text>')
    out.append(f'<text x="{x0 - 48}" y="{TOP + PANEL_H / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 {x0 - 48} {TOP + PANEL_H / 2})">tokens/s</text>')
    for (system, threads), points in sorted(series.items()):
        color = COLORS.get(system, ["#444", "#000"])[0]
        ts = sorted({t for (_, t) in series})
        dash = DASHES[ts.index(threads) % len(DASHES)]
        xs = sorted(points)
        path = " ".join(f"{'M' if i == 0 else 'L'}{sx(d):.1f},{sy(statistics.median(points[d])):.1f}" for i, d in enumerate(xs))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        for d in xs:
            lo, hi, med = min(points[d]), max(points[d]), statistics.median(points[d])
            out.append(f'<line x1="{sx(d):.1f}" y1="{sy(lo):.1f}" x2="{sx(d):.1f}" y2="{sy(hi):.1f}" stroke="{color}"/>')
            out.append(f'<circle cx="{sx(d):.1f}" cy="{sy(med):.1f}" r="3" fill="{color}"><title>{escape(system)} {threads} threads, depth {d}: {med:.1f} tok/s (rounds {lo:.1f}-{hi:.1f})</title></circle>')


def title(series):
    """qmm and the other systems of the results, in the words of the heading."""
    others = sorted({s for (s, _, _) in series} - {"qmm"})
    return "qmm and " + " and ".join(others) if others else "qmm"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[3])
    raw, machine, svg = sys.argv[1:]
    series = load(raw)
    with open(machine, encoding="utf-8") as f:
        notes = [l.strip() for l in f if l.strip()]
    global TOP
    notes = notes[:6]
    TOP = 70 + 15 * len(notes)
    # The legend: one entry per (system, thread count), 190 px each, in as many rows as the width needs.
    ts = sorted({th for (_, _, th) in series})
    entries = [(system, th) for system in sorted({s for (s, _, _) in series}) for th in ts]
    per_row = (W - 20) // LEGEND_W
    rows = (len(entries) + per_row - 1) // per_row
    H = TOP + PANEL_H + 80 + 20 * (rows - 1)
    depths = sorted({d for s in series.values() for d in s})
    tests = {"pp": "prefill", "tg": "decode"}
    n_pp = {t for (s, t, _) in series}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="13">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="20" y="24" font-size="16" font-weight="bold">Tokens/s against KV cache depth: {escape(title(series))} built for this CPU</text>']
    for i, line in enumerate(notes):
        out.append(f'<text x="20" y="{44 + 15 * i}" font-size="11" fill="#444">{escape(line)}</text>')
    for i, test in enumerate(t for t in ("pp", "tg") if t in n_pp):
        sub = {(s, th): v for (s, t, th), v in series.items() if t == test}
        panel(out, LEFT + i * (PANEL_W + GAP), tests[test], sub, depths)
    # legend
    for i, (system, th) in enumerate(entries):
        x = 20 + (i % per_row) * LEGEND_W
        y = H - 22 - 20 * (rows - 1) + 20 * (i // per_row)
        color = COLORS.get(system, ["#444"])[0]
        dash = DASHES[ts.index(th) % len(DASHES)]
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 28}" y2="{y}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{x + 34}" y="{y + 4}" font-size="12">{escape(system)}, {th} thread{"s" if th != 1 else ""}</text>')
    out.append("</svg>")
    with open(svg, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
