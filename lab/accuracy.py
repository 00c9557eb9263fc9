#!/usr/bin/env python3
"""Scores tcpwhy's diagnoses on a sweep (lab/sweep.py): runs
`tcpwhy diagnose --format json --quiet` on every capture in DIR, compares
its top finding with the planted cause, and prints the accuracy, the
confusion matrix, the loud findings on healthy scenarios and the misses.

    python3 lab/accuracy.py DIR [--tcpwhy PATH] [--write docs/accuracy.md]

A rewrite of a page keeps its `## Notes` section, written by hand.

The scoring rule (the same as crates/tcpwhy/tests/accuracy_on_sweep.rs) is
in lab/README.md. Exits 0 whatever the accuracy; non-zero on errors.
"""

import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
DEFAULT_TCPWHY = os.path.join(REPOSITORY, "target", "release", "tcpwhy")
LOUD = ("warning", "critical")
POINTS = ("client", "server")
LIMITS = ("rwnd", "sndbuf", "cwnd", "app")


class Scored:
    """One scenario: its manifest, tcpwhy's findings on it and the verdict."""

    def __init__(self, manifest, findings):
        self.manifest, self.findings = manifest, findings
        self.name, self.cause = manifest["scenario"], manifest["cause"]
        self.point = manifest["capture_point"]
        self.top = findings[0] if findings else None
        self.loud = [f for f in findings if f["severity"] in LOUD]
        self.right = is_right(manifest, findings)

    @property
    def planted(self):
        return self.manifest["finding"] is not None


# The client's own pace: a wait before its first request, pauses between its
# turns. No one is shown to wait for it.
OWN_PACE = {"client_delay", "client_think"}


def is_right(manifest, findings):
    """Planted: the top finding names the cause, carries the figure the
    manifest asks for, and is a warning or critical; or, when what was
    planted costs no one time (`finding_loud` false), no finding is. Healthy:
    no finding is a warning or critical."""
    quiet = not any(f["severity"] in LOUD for f in findings)
    if manifest["finding"] is None:
        return quiet
    if not findings:
        return False
    top, figure = findings[0], manifest.get("finding_figure")
    if manifest["cause"] == "client_delay":
        return quiet and top["kind"] in OWN_PACE
    loud_enough = top["severity"] in LOUD if manifest.get("finding_loud", True) else quiet
    return (top["kind"] == manifest["finding"] and loud_enough
            and (figure is None or figure in top.get("figures", {})))


def diagnose(tcpwhy, capture):
    """tcpwhy's findings on a capture, ranked as it printed them."""
    output = subprocess.run([tcpwhy, "diagnose", "--format", "json", "--quiet", capture],
                            capture_output=True, text=True)
    if output.returncode != 0:
        raise RuntimeError(f"tcpwhy failed on {capture} (exit {output.returncode}): "
                           f"{output.stderr.strip()}")
    lines = [json.loads(line) for line in output.stdout.splitlines() if line.strip()]
    if not any(line.get("type") == "end" for line in lines):
        raise RuntimeError(f"tcpwhy printed no end object for {capture}")
    return [line for line in lines if line.get("type") == "finding"]


def load_manifests(directory):
    manifests = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as manifest_file:
            manifest = json.load(manifest_file)
        if "cause" in manifest and "finding" in manifest:
            manifests.append(manifest)
    if not manifests:
        raise RuntimeError(f"no sweep manifest in {directory}")
    return manifests


# The report.

def percent(right, total):
    return f"{right}/{total} ({100 * right / total:.0f}%)" if total else "-"


def classes_in_order(scored):
    """The classes of the scenarios, alphabetically, healthy last."""
    return sorted({s.cause for s in scored}, key=lambda cause: (cause == "healthy", cause))


def class_of_kind(scored):
    """The finding kind -> planted class it names."""
    return {s.manifest["finding"]: s.cause for s in scored if s.planted}


def column(scored_one, classes):
    if scored_one.top is None:
        return "none"
    kind = scored_one.top["kind"]
    return classes.get(kind, f"other:{kind}")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def summary(scored):
    planted = [s for s in scored if s.planted]
    healthy = [s for s in scored if not s.planted]
    false_loud = sum(len(s.loud) for s in healthy)
    right = sum(s.right for s in planted)
    named = sum(s.top is not None and s.top["kind"] == s.manifest["finding"] for s in planted)
    return (f"**Top-1 accuracy on planted causes: {percent(right, len(planted))}.** "
            f"The top finding names the planted cause, loud or not, on "
            f"{percent(named, len(planted))}. Healthy scenarios with no loud finding: "
            f"{percent(sum(s.right for s in healthy), len(healthy))}; "
            f"false loud findings on healthy scenarios: {false_loud}.")


def per_class(scored):
    rows = []
    for cause in classes_in_order(scored):
        mine = [s for s in scored if s.cause == cause]
        points = {point: [s for s in mine if s.point == point] for point in POINTS}
        findings = sorted({s.manifest["finding"] for s in mine}, key=str)
        rows.append([f"`{cause}`", ", ".join(f"`{kind}`" for kind in findings),
                     percent(sum(s.right for s in mine), len(mine)),
                     *(percent(sum(s.right for s in points[p]), len(points[p])) for p in POINTS)])
    return table(["class", "finding", "right", "at the client", "at the server"], rows)


def by_point(scored):
    rows = []
    for point in POINTS:
        planted = [s for s in scored if s.planted and s.point == point]
        healthy = [s for s in scored if not s.planted and s.point == point]
        rows.append([point, percent(sum(s.right for s in planted), len(planted)),
                     percent(sum(s.right for s in healthy), len(healthy))])
    return table(["capture point", "planted: top-1 right", "healthy: no loud finding"], rows)


def confusion(scored):
    classes = class_of_kind(scored)
    planted = [s for s in scored if s.planted]
    rows_order = classes_in_order(planted)
    counts = collections.Counter((s.cause, column(s, classes)) for s in planted)
    columns = [c for c in rows_order if any(counts[(r, c)] for r in rows_order)]
    columns += sorted({col for (_, col) in counts} - set(columns))
    rows = [[f"`{row}`", *(counts[(row, col)] or "" for col in columns)] for row in rows_order]
    return table(["planted \\ top finding", *(f"`{c}`" for c in columns)], rows)


def top_confusions(scored, count=8):
    classes = class_of_kind(scored)
    pairs = collections.Counter((s.cause, column(s, classes)) for s in scored
                                if s.planted and column(s, classes) != s.cause)
    return "\n".join(f"- `{cause}` read as `{col}`: {n}" for (cause, col), n in
                     pairs.most_common(count)) or "- none"


def described(finding):
    return f"`{finding['kind']}` ({finding['severity']}): {finding.get('title', '')}"


def false_loud(scored):
    rows = [[s.name, s.manifest.get("artefact") or "", f"`{f['kind']}`", f["severity"],
             f.get("title", "").replace("|", "/")]
            for s in scored if not s.planted for f in s.loud]
    if not rows:
        return "None."
    return table(["scenario", "artefact", "kind", "severity", "title"], rows)


def misses(scored):
    lines = []
    for s in scored:
        if s.right or not s.planted:
            continue
        tops = "; ".join(described(f) for f in s.findings[:3]) or "no finding"
        lines.append(f"- **{s.name}** ({s.point}; {s.manifest['figure']}): {tops}")
    return "\n".join(lines) or "None."


def per_application(scored):
    """The application classes: right per application (a manifest's
    `params.app`) and, for healthy ones, per variant of healthy traffic."""
    rows = []
    apps = sorted({s.manifest["params"].get("app") for s in scored} - {None})
    for app in apps:
        mine = [s for s in scored if s.manifest["params"].get("app") == app]
        planted = [s for s in mine if s.planted]
        healthy = [s for s in mine if not s.planted]
        rows.append([f"`{app}`", percent(sum(s.right for s in planted), len(planted)),
                     percent(sum(s.right for s in healthy), len(healthy))])
    by_app = table(["application", "planted: top-1 right", "healthy: no loud finding"], rows)
    healthy = [s for s in scored if not s.planted and "variant" in s.manifest["params"]]
    variants = sorted({s.manifest["params"]["variant"] for s in healthy})
    rows = [[f"`{variant}`", percent(sum(s.right for s in mine), len(mine)),
             ", ".join(sorted({f"`{f['kind']}`" for s in mine for f in s.loud})) or "-"]
            for variant in variants
            for mine in [[s for s in healthy if s.manifest["params"]["variant"] == variant]]]
    by_variant = table(["healthy variant", "no loud finding", "loud kinds"], rows)
    return by_app + "\n\n" + by_variant


def is_application_sweep(scored):
    return any("app" in s.manifest["params"] for s in scored)


def kernel_limits(scored):
    """The kernel's limit (tcp_info) against the planted class, for the
    scenarios whose senders logged it."""
    logged = [s for s in scored if s.manifest.get("tcp_info")]
    counts = collections.Counter((s.cause, s.manifest["tcp_info"]["limit"]) for s in logged)
    rows = [[f"`{cause}`", *(counts[(cause, limit)] or "" for limit in LIMITS)]
            for cause in classes_in_order(logged)]
    return table(["planted class", *LIMITS], rows)


def sweep_facts(directory, scored):
    """Counts per class and capture point, total size, and how the sweep was made."""
    manifests = [s.manifest for s in scored]
    counts = collections.Counter((m["cause"], m["capture_point"]) for m in manifests)
    rows = [[f"`{cause}`", counts[(cause, "client")], counts[(cause, "server")]]
            for cause in classes_in_order(scored)]
    sizes = [os.path.getsize(os.path.join(directory, m["capture"])) for m in manifests]
    log = {}
    if os.path.exists(os.path.join(directory, "sweep.json")):
        with open(os.path.join(directory, "sweep.json")) as log_file:
            log = json.load(log_file)
    redrawn = sum(1 for s in log.get("scenarios", {}).values() if s["failed_draws"])
    made = (f"{len(manifests)} scenarios, {sum(sizes) / 1e6:.1f} MB of captures "
            f"(largest {max(sizes) / 1e3:.0f} kB)")
    if log.get("seconds"):
        made += (f", recorded in {log['seconds'] / 60:.0f} min from {log['started']}; "
                 f"{redrawn} scenarios needed more than one draw")
    commands = log.get("commands") or ["python3 lab/sweep.py --n 240"]
    return made, table(["class", "at the client", "at the server"], rows), commands


def tcpwhy_version(tcpwhy):
    return subprocess.run([tcpwhy, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


METHOD = """Each scenario of the sweep runs real Linux TCP stacks in network
namespaces joined by the lab's relay, with one cause planted with parameters
drawn at random (RTT 0.2 to 400 ms, rates, sizes, connections, write
patterns, stack settings, capture point), or nothing planted (healthy,
some with capture artefacts added afterwards). Every recording was checked
with tshark, independently of tcpwhy, to show its cause, and drawn again
when it did not. tcpwhy then diagnoses each capture alone. A planted
scenario is right when tcpwhy's top finding (the first, the costliest) has
the kind that names the cause, carries the figure the manifest asks for if
any, and is a warning or critical; a healthy one is right when no finding
is a warning or critical. The confusion matrix places each planted scenario
by the kind of its top finding alone, so a diagonal entry can still be a
miss when that finding is only info; the misses list says why. A
`client_delay` scenario planted the client's own pace (a wait after
connecting before its first request, pauses between its turns), which no
one is shown to wait for and which costs no one time to fix: it is right
when the top finding names the client's pace (`client_delay` or
`client_think`) and no finding is a warning or critical."""


APPLICATIONS = """The application classes (lab/appplants.py) plant the
same causes on real programs, Debian's packages run in the lab's namespaces
(lab/realapps.py): nginx (HTTP and TLS, a slow upstream behind it), curl,
PostgreSQL with pgbench, Redis with redis-benchmark, memcached, iperf3 and
OpenSSH sessions typed on a pty by a person. A third of the scenarios are
healthy traffic as users bring it, which no correct diagnosis calls slow: a
typed SSH session with seconds of thought, a keep-alive connection left idle
5-100 s before the client closes it (with TLS: close_notify, then FIN), a
page load over parallel connections, request/response on a LAN (0.2-3 ms)
or over a WAN (20-100 ms), and a transfer paced just under a link's rate
through a shallow queue. Captures keep 256 bytes a packet (128 for iperf3's
transfers), enough for HTTP, TLS, PostgreSQL, Redis and memcached framing.
Real programs log no `TCP_INFO`: every check reads the capture alone."""


def report(scored, directory, tcpwhy, command):
    made, counts, generation = sweep_facts(directory, scored)
    applications = is_application_sweep(scored)
    title = "real applications" if applications else "the randomised sweep"
    sections = [
        f"# tcpwhy's accuracy on {title}", "",
        f"Made on {time.strftime('%Y-%m-%d')} with {tcpwhy_version(tcpwhy)}, on {made}.", "",
        summary(scored), "",
        "The commands that made it, from the repository (one "
        f"`sweep.py {'--n 120 --classes apps' if applications else '--n 240'}` run of "
        "today's code draws the same scenarios; the last command alone rewrites this page "
        "from a sweep):", "",
        "```sh", *(f"sudo {command}" for command in generation),
        "cargo build --release -p tcpwhy", command, "```", "",
        "## Method", "", METHOD, "", *([APPLICATIONS, ""] if applications else []),
        "## Per class", "", per_class(scored), "",
        *(["## Per application", "", per_application(scored), ""] if applications else []),
        "## By capture point", "", by_point(scored), "",
        "## Confusion matrix", "",
        "Rows: the planted class. Columns: the class whose finding kind the top finding has, "
        "`other:<kind>` for a kind no class is named by, `none` when there is no finding.", "",
        confusion(scored), "", "Most frequent confusions:", "", top_confusions(scored), "",
        "## Loud findings on healthy scenarios", "", false_loud(scored), "",
        "## Misses", "", "Each with its top three findings.", "", misses(scored), "",
        *([] if applications else [
            "## The kernel's view of the bulk senders", "",
            "Where the senders' time went by their own `TCP_INFO` (see lab/README.md for how "
            "`limit` is derived), against the planted class:", "", kernel_limits(scored), ""]),
        "## The sweep", "", counts, "",
    ]
    return "\n".join(sections)


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", metavar="DIR", help="a sweep's captures and manifests")
    parser.add_argument("--tcpwhy", default=DEFAULT_TCPWHY, help="the tcpwhy binary to score")
    parser.add_argument("--write", metavar="MARKDOWN", help="also write the report there")
    return parser.parse_args()


def main():
    args = parse_arguments()
    try:
        manifests = load_manifests(args.directory)
        scored = [Scored(m, diagnose(args.tcpwhy, os.path.join(args.directory, m["capture"])))
                  for m in manifests]
        command = "python3 lab/accuracy.py " + " ".join(
            os.path.relpath(arg, REPOSITORY) if os.path.exists(arg) else arg
            for arg in sys.argv[1:])
        text = report(scored, args.directory, args.tcpwhy, command)
    except (OSError, RuntimeError, ValueError, KeyError, subprocess.CalledProcessError) as error:
        sys.exit(f"accuracy: {error}")
    print(text)
    if args.write:
        text += kept_notes(args.write)
        with open(args.write, "w") as out:
            out.write(text)


def kept_notes(path):
    """The page's `## Notes` section, written by hand about that run's
    misses: a rewrite keeps it, at the end of the page."""
    if not os.path.exists(path):
        return ""
    with open(path) as page:
        text = page.read()
    start = text.find("\n## Notes\n")
    if start < 0:
        return ""
    end = text.find("\n## ", start + 1)
    return "\n" + text[start + 1:end if end >= 0 else len(text)].rstrip("\n") + "\n"


if __name__ == "__main__":
    main()
