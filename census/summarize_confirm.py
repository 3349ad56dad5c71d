#!/usr/bin/env python3
"""Summarizes a `scripts/census --confirm` results folder as Markdown: per server and transport,
the counterexamples replayed on it and their verdicts, by property and by the server behaviour
of their cell (plain, honours-cancel), which behaviour its replays fit, and every replay not
confirmed with its reason. Usage:
  python3 census/summarize_confirm.py RESULTS_DIR
The results folder's own path is written as $RESULTS, so the text has no machine's paths."""

import collections
import json
import os
import sys

VERDICTS = ["confirmed", "ran", "not-reproduced", "diverged", "inconclusive", "interrupted"]


def cell(text, limit=200):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counts(results):
    c = collections.Counter(r["verdict"] for r in results)
    return [str(c.get(v, 0)) for v in VERDICTS]


def section(out, name):
    meta = json.load(open(os.path.join(out, name + ".meta.json")))
    lines = [f"### {name}", "", f"{meta['package']}, tool `{meta['tool']}`, {meta['transport']}: "
             f"exit {meta['exit_code']} in {meta['seconds']} s.", ""]
    try:
        result = json.load(open(os.path.join(out, name + ".json")))
    except (OSError, ValueError) as e:
        return lines + [f"No JSON result ({e}); see {name}.stderr.", ""]
    results = result.get("results", [])
    lines += ["| property | behaviour | replays | " + " | ".join(VERDICTS) + " |",
              "|---|---|---|" + "---|" * len(VERDICTS)]
    groups = collections.defaultdict(list)
    for r in results:
        groups[(r["property"], r.get("behaviour", "?"))].append(r)
    for (prop, behaviour), rs in sorted(groups.items()):
        lines.append(f"| {prop} | {behaviour} | {len(rs)} | " + " | ".join(counts(rs)) + " |")
    lines.append(f"| **all** | | **{len(results)}** | " + " | ".join(counts(results)) + " |")
    lines.append("")
    fits = result.get("behaviours", [])
    each = ", ".join(f"{f['server']} {f['confirmed']} of {f['replays']}" for f in fits)
    fitting = [f["server"] for f in fits if f["fits"]]
    lines += [f"Confirmed by behaviour: {each}; fits: {', '.join(fitting) or 'neither'}.", ""]
    others = [r for r in results if r["verdict"] not in ("confirmed", "ran")]
    if others:
        lines += ["| cell | property | verdict | reason |", "|---|---|---|---|"]
        for r in others:
            lines.append(f"| {r['cell']} | {r['property']} | {r['verdict']} | {cell(r['reason'])} |")
        lines.append("")
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summarize_confirm.py RESULTS_DIR")
    out = os.path.abspath(sys.argv[1])
    names = sorted(f[: -len(".meta.json")] for f in os.listdir(out) if f.endswith(".meta.json"))
    lines = ["## Census confirmation", "", "| run | replays | " + " | ".join(VERDICTS) + " | fits |",
             "|---|---|" + "---|" * len(VERDICTS) + "---|"]
    for name in names:
        try:
            result = json.load(open(os.path.join(out, name + ".json")))
        except (OSError, ValueError):
            lines.append(f"| {name} | no result |" + " |" * (len(VERDICTS) + 1))
            continue
        rs = result.get("results", [])
        fitting = [f["server"] for f in result.get("behaviours", []) if f["fits"]]
        lines.append(f"| {name} | {len(rs)} | " + " | ".join(counts(rs)) + f" | {', '.join(fitting) or 'neither'} |")
    lines.append("")
    for name in names:
        lines += section(out, name)
    print("\n".join(lines).replace(out, "$RESULTS"))


if __name__ == "__main__":
    main()
