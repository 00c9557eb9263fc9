#!/usr/bin/env python3
"""Scores tcpwhy on real captures made by other people and labelled by hand
(tests/real/labels.tsv): runs `tcpwhy diagnose --format json --quiet` on
every labelled capture found under ROOT, and prints the top-1 accuracy on
problem captures, the false-loud rate on healthy ones, both per source, the
confusion matrix, the loud findings on healthy captures and every miss.

    python3 lab/accuracy_real.py [--captures ROOT] [--tcpwhy PATH] [--write docs/accuracy-real.md]

The scoring rule (the same as crates/tcpwhy/tests/accuracy_on_real.rs) is
in tests/real/README.md. Exits 0 whatever the score; non-zero on errors,
among them tcpwhy failing on a capture (each failure is listed).
"""

import argparse
import collections
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
DEFAULT_TCPWHY = os.path.join(REPOSITORY, "target", "release", "tcpwhy")
DEFAULT_CAPTURES = os.path.join(REPOSITORY, "..", "shared", "captures")
LABELS = os.path.join(REPOSITORY, "tests", "real", "labels.tsv")
COLUMNS = ["capture", "source", "label", "loud", "frames", "evidence"]
LOUD = ("warning", "critical")
# Exit codes after which tcpwhy's findings are whole: read to the end, or up
# to a record the capture ends inside.
READ = (0, 3)
TIMEOUT_S = 600


class Label:
    """One row of labels.tsv."""

    def __init__(self, row):
        self.capture, self.source = row["capture"], row["source"]
        self.text, self.frames, self.evidence = row["label"], row["frames"], row["evidence"]
        self.kinds = self.text.split("|")
        self.healthy = self.text == "healthy"
        self.loud = row["loud"] == "yes"
        self.prefix = self.capture.split("/", 1)[0]


class Scored:
    """A labelled capture, tcpwhy's findings on it and the verdict."""

    def __init__(self, label, findings, failure=None):
        self.label, self.findings, self.failure = label, findings, failure
        self.top = findings[0] if findings else None
        self.loud = [f for f in findings if f["severity"] in LOUD]
        self.right = failure is None and is_right(label, findings)


def is_right(label, findings):
    """Problem: the top finding has one of the label's kinds and, when the
    label is loud, is a warning or critical. Healthy: no finding is a warning
    or critical."""
    if label.healthy:
        return not any(f["severity"] in LOUD for f in findings)
    if not findings:
        return False
    top = findings[0]
    return top["kind"] in label.kinds and (not label.loud or top["severity"] in LOUD)


def load_labels(path):
    with open(path, newline="") as table:
        reader = csv.DictReader(table, delimiter="\t", quoting=csv.QUOTE_NONE)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {COLUMNS}")
        labels = [Label(row) for row in reader]
    if not labels:
        raise ValueError(f"{path}: no labelled capture")
    return labels


def diagnose(tcpwhy, capture):
    """tcpwhy's findings on a capture, ranked as it printed them, and what
    went wrong if the output is not whole (else None)."""
    try:
        output = subprocess.run([tcpwhy, "diagnose", "--format", "json", "--quiet", capture],
                                capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [], f"no answer within {TIMEOUT_S} s"
    lines = []
    for line in output.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            break
    findings = [line for line in lines if line.get("type") == "finding"]
    stderr = output.stderr.strip().splitlines()
    said = f": {stderr[-1]}" if stderr else ""
    if output.returncode not in READ:
        return findings, f"exit {output.returncode}{said}"
    if not any(line.get("type") == "end" for line in lines):
        return findings, f"no end object (exit {output.returncode}){said}"
    return findings, None


def score(labels, root, tcpwhy):
    """Every label whose capture is under root, scored; and those missing."""
    present = [label for label in labels if os.path.isfile(os.path.join(root, label.capture))]
    missing = [label for label in labels if label not in present]

    def one(label):
        return Scored(label, *diagnose(tcpwhy, os.path.join(root, label.capture)))

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, present)), missing


# The report.

def percent(right, total):
    return f"{right}/{total} ({100 * right / total:.0f}%)" if total else "-"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def problems(scored):
    return [s for s in scored if not s.label.healthy]


def healthy(scored):
    return [s for s in scored if s.label.healthy]


def named(scored_problems):
    """Problem captures whose top finding has one of the label's kinds, at
    any severity."""
    return sum(s.top is not None and s.top["kind"] in s.label.kinds for s in scored_problems)


def summary(scored):
    sick, well = problems(scored), healthy(scored)
    false_loud = sum(bool(s.loud) for s in well)
    loud = [s for s in sick if s.label.loud]
    return (f"**Top-1 on problem captures: {percent(sum(s.right for s in sick), len(sick))}.** "
            f"The top finding has the label's kind, at any severity, on "
            f"{percent(named(sick), len(sick))}; on the {len(loud)} labelled loud, the top "
            f"finding is right (the kind, as a warning or critical) on "
            f"{percent(sum(s.right for s in loud), len(loud))}. "
            f"**False-loud rate on healthy captures: {percent(false_loud, len(well))}** "
            f"(a warning or critical finding on a capture labelled healthy).")


def per_source(scored):
    rows = []
    for prefix in sorted({s.label.prefix for s in scored}):
        mine = [s for s in scored if s.label.prefix == prefix]
        sick, well = problems(mine), healthy(mine)
        rows.append([f"`{prefix}/`", len(mine), percent(sum(s.right for s in sick), len(sick)),
                     percent(named(sick), len(sick)),
                     percent(sum(bool(s.loud) for s in well), len(well))])
    return table(["source", "captures", "problems: top-1", "problems: kind at any severity",
                  "healthy: false loud"], rows)


def per_label(scored):
    rows = []
    counts = collections.Counter(s.label.text for s in scored)
    for text, count in sorted(counts.items(), key=lambda item: (item[0] == "healthy", -item[1], item[0])):
        mine = [s for s in scored if s.label.text == text]
        loud = sum(s.label.loud for s in mine)
        rows.append([f"`{text}`", count, loud if text != "healthy" else "-",
                     percent(sum(s.right for s in mine), count)])
    return table(["label", "captures", "labelled loud", "right"], rows)


def column(scored_one):
    if scored_one.failure is not None:
        return "failed"
    return scored_one.top["kind"] if scored_one.top else "none"


def confusion(scored):
    counts = collections.Counter((s.label.text, column(s)) for s in scored)
    rows_order = sorted({s.label.text for s in scored},
                        key=lambda text: (text == "healthy", text))
    totals = collections.Counter(column(s) for s in scored)
    columns = sorted(totals, key=lambda kind: (-totals[kind], kind))
    rows = [[f"`{row}`", *(counts[(row, col)] or "" for col in columns)] for row in rows_order]
    return table(["label \\ top finding", *(f"`{col}`" for col in columns)], rows)


def top_confusions(scored, count=10):
    pairs = collections.Counter((s.label.text, column(s)) for s in scored
                                if not s.right and not s.label.healthy)
    pairs.update((s.label.text, column(s) + " (loud)") for s in healthy(scored) if s.loud)
    return "\n".join(f"- `{label}` read as `{col}`: {n}" for (label, col), n in
                     pairs.most_common(count)) or "- none"


def described(finding):
    return f"`{finding['kind']}` ({finding['severity']}): {cell(finding.get('title', ''))}"


def false_loud(scored):
    rows = [[f"`{s.label.capture}`", f"`{f['kind']}`", f["severity"], cell(f.get("title", ""))]
            for s in healthy(scored) for f in s.loud]
    if not rows:
        return "None."
    return table(["capture", "kind", "severity", "title"], rows)


def misses(scored):
    lines = []
    for s in problems(scored):
        if s.right:
            continue
        tops = "; ".join(described(f) for f in s.findings[:3]) or "no finding"
        loud = "loud" if s.label.loud else "quiet"
        lines.append(f"- **{s.label.capture}** (`{s.label.text}`, {loud}): {tops}")
    return "\n".join(lines) or "None."


def failures(scored):
    lines = [f"- **{s.label.capture}**: {cell(s.failure)}" for s in scored if s.failure is not None]
    return "\n".join(lines) or "None."


def tcpwhy_version(tcpwhy):
    return subprocess.run([tcpwhy, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


METHOD = """Every capture of `tests/real/labels.tsv` was made by someone else:
the book *Practical Packet Analysis*, tcpdump's, Zeek's and Arkime's test
traces, and nDPI's recordings of applications (`tests/real/README.md` names
the repositories and commits, what was left out and why). Each was labelled
by hand from tshark before tcpwhy was run on any of them: `healthy` when no
one waited needlessly, else the main cause a person waited for, as one of
tcpwhy's finding kinds (two joined by `|` when both are defensible), and
whether it was loud (a person noticeably waited) or cost little. tcpwhy then
diagnoses each capture alone. A problem capture is right when the top finding
(the first, the costliest) has one of the label's kinds and, when the label
is loud, is a warning or critical; a healthy capture is right when no finding
is a warning or critical, and each one that has one counts toward the
false-loud rate. The confusion matrix places each capture by its top
finding's kind alone (`none` without findings), so a diagonal entry can
still be a miss when that finding is only info; the misses list says why."""


def report(scored, missing, root, tcpwhy, command):
    sizes = [os.path.getsize(os.path.join(root, s.label.capture)) for s in scored]
    made = (f"{len(scored)} labelled captures ({len(problems(scored))} with a problem, "
            f"{len(healthy(scored))} healthy), {sum(sizes) / 1e6:.1f} MB "
            f"(largest {max(sizes, default=0) / 1e3:.0f} kB)")
    not_found = (f"{len(missing)} labelled rows were not found under the captures root."
                 if missing else "Every labelled row was found under the captures root.")
    sections = [
        "# tcpwhy's accuracy on real captures", "",
        f"Made on {time.strftime('%Y-%m-%d')} with {tcpwhy_version(tcpwhy)}, on {made}. "
        f"{not_found}", "",
        summary(scored), "",
        "The commands that made it, from the repository:", "",
        "```sh", "tests/fetch-captures.sh", "tests/real/fetch-captures.sh",
        "cargo build --release -p tcpwhy", command, "```", "",
        "## Method", "", METHOD, "",
        "## Per source", "", per_source(scored), "",
        "## Per label", "", per_label(scored), "",
        "## Confusion matrix", "",
        "Rows: the label. Columns: the top finding's kind, `none` without findings, "
        "`failed` when tcpwhy failed on the capture.", "",
        confusion(scored), "", "Most frequent confusions:", "", top_confusions(scored), "",
        "## Loud findings on healthy captures", "", false_loud(scored), "",
        "## Misses", "", "Problem captures not right, each with its top three findings.", "",
        misses(scored), "",
        "## tcpwhy failures", "", failures(scored), "",
    ]
    return "\n".join(sections)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captures", metavar="ROOT", default=DEFAULT_CAPTURES,
                        help="where the labelled captures are (default ../shared/captures)")
    parser.add_argument("--tcpwhy", default=DEFAULT_TCPWHY, help="the tcpwhy binary to score")
    parser.add_argument("--write", metavar="MARKDOWN", help="also write the report there")
    return parser.parse_args()


def main():
    args = parse_arguments()
    try:
        labels = load_labels(LABELS)
        scored, missing = score(labels, args.captures, args.tcpwhy)
        if not scored:
            raise RuntimeError(f"no labelled capture under {args.captures}")
        command = "python3 lab/accuracy_real.py " + " ".join(
            os.path.relpath(arg, REPOSITORY) if os.path.exists(arg) else arg
            for arg in sys.argv[1:])
        text = report(scored, missing, args.captures, args.tcpwhy, command)
    except (OSError, RuntimeError, ValueError, KeyError, subprocess.CalledProcessError) as error:
        sys.exit(f"accuracy_real: {error}")
    print(text)
    if missing:
        print(f"accuracy_real: {len(missing)} labelled rows not found under {args.captures}",
              file=sys.stderr)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
    failed = [s for s in scored if s.failure is not None]
    if failed:
        sys.exit(f"accuracy_real: tcpwhy failed on {len(failed)} captures (listed in the report)")


if __name__ == "__main__":
    main()
