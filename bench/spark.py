"""Times the analysis of one rotated capture four ways: the command line,
the Python call, and Spark with one and with two executor cores.

    .venv/bin/python bench/spark.py [CAPTURE] [MEGABYTES_PER_FILE]

The capture (default bench/out/bench.pcap) is first rotated into files of
MEGABYTES_PER_FILE (default 50) with `tcpdump -C`, as a capture appliance
writes them, under $TMPDIR; the files are reused on the next run. Each way
runs once, on a warm page cache; Spark's session start is timed apart.
Prints, and writes to bench/out/spark.md, the seconds, TCP segments per
second, segments per second per core and each way's time against the
command line's. Needs target/release/tcpwhy and the Python package with
pyspark in .venv, as .ci/run leaves them.
"""

import getpass
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TCPWHY = ROOT / "target" / "release" / "tcpwhy"


def rotated(capture: Path, megabytes: int) -> list:
    directory = Path(tempfile.gettempdir()) / f"tcpwhy-rotated-{capture.stem}-{megabytes}"
    if not directory.exists():
        partial = directory.with_suffix(".partial")
        partial.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["tcpdump", "-q", "-Z", getpass.getuser(), "-r", str(capture), "-w", str(partial / "ring"), "-C", str(megabytes)],
            check=True, stderr=subprocess.DEVNULL,
        )
        partial.rename(directory)
    # In the order tcpdump wrote them (ring, ring1, ring2, …, ring10): a file
    # may end at the very time the next begins, and the earlier given goes first.
    def written(path: Path) -> int:
        return int(path.name.removeprefix("ring") or 0)

    return [str(path) for path in sorted(directory.iterdir(), key=written)]


def tcp_segments(files: list) -> int:
    output = subprocess.run(
        [str(TCPWHY), "connections", "--quiet", "--format", "json", *files],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(output.splitlines()[-1])["tcp_segments"]


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    import tcpwhy
    import tcpwhy.spark

    capture = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/out/bench.pcap")
    megabytes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    # Local mode runs the executors in the driver's JVM: room for the decoded records.
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-memory 6g pyspark-shell")
    files = rotated(capture, megabytes)
    size = sum(Path(f).stat().st_size for f in files)
    segments = tcp_segments(files)  # also warms the page cache
    rows = []  # (way, cores, seconds)
    rows.append(("command line (`tcpwhy diagnose`)", 2, timed(lambda: subprocess.run(
        [str(TCPWHY), "diagnose", "--quiet", "--format", "json", *files], check=True, stdout=subprocess.DEVNULL
    ))))
    rows.append(("Python (`tcpwhy.analyze`)", 2, timed(lambda: tcpwhy.analyze(files))))
    for cores in (1, 2):
        start = time.perf_counter()
        spark = tcpwhy.spark.local_session(cores)
        started = time.perf_counter() - start
        seconds = timed(lambda: tcpwhy.spark.analyze(spark, files))
        spark.stop()
        rows.append((f"Spark `local[{cores}]` (session start {started:.1f} s apart)", cores, seconds))
    cli_seconds = rows[0][2]
    lines = [
        f"{capture.name}: {size / 1e9:.2f} GB in {len(files)} files of {megabytes} MB, "
        f"{segments:,} TCP segments, on {os.cpu_count()} cores",
        "",
        "| way | cores | seconds | segments/s | segments/s per core | time against the command line |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for way, cores, seconds in rows:
        rate = segments / seconds
        lines.append(
            f"| {way} | {cores} | {seconds:.1f} | {rate:,.0f} | {rate / cores:,.0f} | {seconds / cli_seconds:.2f}× |"
        )
    report = "\n".join(lines)
    print(report)
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "spark.md").write_text(report + "\n")


if __name__ == "__main__":
    main()
