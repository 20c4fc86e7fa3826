"""Time the book's notebooks cold (empty caches) and warm (caches filled), notebook by notebook.

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_book.py            # cold, then warm
    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_book.py --warm-only --cache .aethel_cache
    .venv/bin/python benchmarks/bench_book.py --only 30_scaling -p extended true --cache .aethel_cache --warm-only

Each notebook is executed by the project's runner (``python -m aethel_lite.book.notebooks``, papermill)
in a child process with ``AETHEL_CACHE`` pointed at ``--cache`` (a fresh temporary folder unless
given). The cold pass starts from an empty cache folder; the warm pass re-runs the same notebooks on
the cache the cold pass filled. Printed: seconds per notebook and pass, the warm/cold ratio, the
child's peak resident memory (``ru_maxrss``), and the machine's load average before each pass.
The ``jupyter-book build`` step is timed once at the end (``--build``).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _notebooks(only: list[str] | None) -> list[str]:
    names = sorted(p.stem for p in (REPO / "notebooks").glob("[0-9]*.ipynb"))
    return [n for n in names if not only or n in only]


def _run(name: str, cache: Path, params: list[list[str]]) -> tuple[float, float, int]:
    env = {**os.environ, "AETHEL_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.setdefault("AETHEL_DENSE_PRECISION", "bfloat16")  # as `make book` (Makefile)
    cmd = [sys.executable, "-m", "aethel_lite.book.notebooks", "--only", name, "--no-progress"]
    for key, value in params:
        cmd += ["-p", key, value]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux; max over children so far
    if proc.returncode != 0:
        sys.exit(f"{name} failed:\n{proc.stderr[-3000:]}")
    return seconds, max(peak, before) / 1024, proc.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", help="cache folder (default: a fresh temporary folder, deleted afterwards)")
    ap.add_argument("--only", action="append", help="notebook name (repeatable); default: all")
    ap.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    ap.add_argument("--warm-only", action="store_true", help="skip the cold pass (the cache must be filled)")
    ap.add_argument("--build", action="store_true", help="also time jupyter-book build")
    args = ap.parse_args(argv)
    names = _notebooks(args.only)
    tmp = None
    if args.cache:
        cache = Path(args.cache).resolve()
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench_book_"))
        cache = tmp / "cache"
    print(
        f"# bench_book  python {platform.python_version()}  cpus {os.cpu_count()}  AETHEL_DATA={os.environ.get('AETHEL_DATA')}"
    )
    print(f"# cache {cache}  parameters {args.parameter or 'defaults'}")
    passes = ["warm"] if args.warm_only else ["cold", "warm"]
    times: dict[str, dict[str, float]] = {n: {} for n in names}
    try:
        for label in passes:
            if label == "cold" and cache.exists():
                shutil.rmtree(cache)
            print(f"# {label} pass, loadavg {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            for name in names:
                seconds, peak, _ = _run(name, cache, args.parameter)
                times[name][label] = seconds
                print(
                    f"{label:>5}  {name:<20} {seconds:8.1f} s   peak RSS so far {peak:7.0f} MiB", flush=True
                )
        print(
            f"\n{'notebook':<20} "
            + " ".join(f"{p:>9}" for p in passes)
            + ("   warm/cold" if len(passes) == 2 else "")
        )
        for name in names:
            row = " ".join(f"{times[name][p]:8.1f}s" for p in passes)
            ratio = f"   {times[name]['warm'] / times[name]['cold']:9.2f}" if len(passes) == 2 else ""
            print(f"{name:<20} {row}{ratio}")
        totals = {p: sum(times[n][p] for n in names) for p in passes}
        print(
            f"{'total':<20} "
            + " ".join(f"{totals[p]:8.1f}s" for p in passes)
            + (f"   {totals['warm'] / totals['cold']:9.2f}" if len(passes) == 2 else "")
        )
        if args.build:
            t0 = time.perf_counter()
            subprocess.run(
                [
                    str(Path(sys.executable).with_name("jupyter-book")),
                    "build",
                    ".",
                    "--warningiserror",
                    "--keep-going",
                ],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
            print(f"{'jupyter-book build':<20} {time.perf_counter() - t0:8.1f}s")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
