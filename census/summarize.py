#!/usr/bin/env python3
"""Summarizes a scripts/census results folder as Markdown: one section per probe run, with each
check's status and, per replayed trace, its verdict and effect counts (expected by the model,
observed by the observer). Usage: python3 census/summarize.py RESULTS_DIR > summary.md

The tables are meant to be pasted into CENSUS.md as they are, so a re-run updates the census by
regenerating them."""

import json
import os
import sys


def cell(text, limit=160):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_trace(trace, check_id):
    # "mcp-once-retry-after-timeout__stdio__plain" -> "plain"
    return trace.rsplit("__", 1)[-1] if trace.startswith(check_id) else trace


def section(out, name):
    meta_path = os.path.join(out, name + ".meta.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    lines = [f"### {name}", ""]
    if meta:
        moved = None
        if meta.get("observer_before") is not None and meta.get("observer_after") is not None:
            moved = meta["observer_after"] - meta["observer_before"]
        lines.append(
            f"{meta['package']}, tool `{meta['tool']}`, {meta['transport']}: exit {meta['exit_code']} "
            f"in {meta['seconds']} s; the observer moved by {moved if moved is None else int(moved)} over the "
            f"whole probe ({meta.get('observer_before')} -> {meta.get('observer_after')})."
        )
        lines.append("")
    try:
        result = json.load(open(os.path.join(out, name + ".json")))
    except (OSError, ValueError) as e:
        lines += [f"No JSON result ({e}); see {name}.stderr.", ""]
        return lines
    lines += [
        "| check | status | trace (server behaviour) | verdict | expected | observed | reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for check in result.get("checks", []):
        replays = check.get("details", {}).get("replays") or [None]
        for i, r in enumerate(replays):
            head = [check["id"], check["status"]] if i == 0 else ["", ""]
            if r is None:
                tail = ["-", "-", "-", "-", cell(check.get("errorMessage") or "")]
            else:
                tail = [
                    short_trace(r.get("trace", ""), check["id"]),
                    r.get("verdict"),
                    r.get("expected_effects"),
                    r.get("observed_effects"),
                    cell(r.get("reason") or ""),
                ]
            lines.append("| " + " | ".join(str(x) for x in head + tail) + " |")
    lines.append("")
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py RESULTS_DIR")
    out = sys.argv[1]
    names = sorted(f[: -len(".meta.json")] for f in os.listdir(out) if f.endswith(".meta.json"))
    lines = ["## Census results", "", "| run | " + " | ".join(["checks"]) + " |", "|---|---|"]
    for name in names:
        try:
            checks = json.load(open(os.path.join(out, name + ".json"))).get("checks", [])
            brief = ", ".join(f"{c['id'].removeprefix('mcp-once-')}: {c['status']}" for c in checks)
        except (OSError, ValueError):
            brief = "no result"
        lines.append(f"| {name} | {brief} |")
    lines.append("")
    for name in names:
        lines += section(out, name)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
