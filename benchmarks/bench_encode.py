"""MiniLM's four encoders side by side (passages/s, cosine to PyTorch float32), and ``aethel search`` timed.

    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_encode.py [--n 300] [--rounds 3]
    AETHEL_DATA=/work/shared/data .venv/bin/python benchmarks/bench_encode.py --n 2000 --rounds 4   # the full run
    .venv/bin/python benchmarks/bench_encode.py --n 0 --search INDEX [--methods bm25,aethel-hybrid] [--repeats 15]

1. Encoding. ``--n`` FinanceBench question pages and ``--n`` MuSiQue paragraphs (a fixed random sample,
   seed 0), each as ``DenseRetriever`` embeds a passage (``title + "\\n" + text``, batches of 64, no cache),
   with PyTorch float32, PyTorch bfloat16 (what ``make book`` uses), ONNX Runtime float32 and ONNX Runtime
   int8. The texts are cut into ``--rounds`` parts; every round runs each variant on its part, in an order
   rotated from round to round, so a machine whose load changes meets every variant alike. passages/s =
   texts / the variant's summed seconds. Models are loaded (and the ONNX files exported) before any clock
   starts; every variant gets ``--threads`` threads (default: one per core).
2. Agreement. Per passage, the cosine of each variant's vector with PyTorch float32's: min, 1st percentile,
   median.
3. ``--search INDEX``: ``aethel search INDEX QUESTION --method M`` as a whole process for each method,
   alternating with the bare-Python baseline ``python -c "import numpy, scipy.sparse"``; the best and
   the median of ``--repeats`` rounds of each in wall time and in CPU time (user + system), and the
   best wall time's ratio to the baseline's. ``--before CHECKOUT`` also times another commit's code
   (a ``git worktree`` of it, put on ``PYTHONPATH``) through the same ``aethel`` and index, in the
   same rounds.

Every figure depends on the machine's load: the first line prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

VARIANTS = ("torch-fp32", "torch-bf16", "onnx-fp32", "onnx-int8")
PRECISION = {
    "torch-fp32": "float32",
    "torch-bf16": "bfloat16",
    "onnx-fp32": "onnx-fp32",
    "onnx-int8": "onnx-int8",
}
BASELINE = [sys.executable, "-c", "import numpy, scipy.sparse"]
QUESTION = "What was the total revenue reported in the most recent fiscal year?"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def corpora(n: int) -> dict[str, list[str]]:
    """``n`` FinanceBench question pages and ``n`` MuSiQue paragraphs, the strings MiniLM embeds."""
    from aethel_lite.data.loaders import load_financebench, load_musique
    from aethel_lite.data.schema import passage_text

    rng = np.random.default_rng(0)
    out = {}
    for name, ds in (("financebench", load_financebench()), ("musique", load_musique())):
        idx = np.sort(rng.choice(len(ds.passages), size=min(n, len(ds.passages)), replace=False))
        out[name] = [passage_text(ds.passages[i]) for i in idx]
    return out


def encode_side_by_side(texts: list[str], rounds: int) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Seconds and vectors of every variant over ``texts``, the variants alternated round by round."""
    from aethel_lite.retrievers import DenseRetriever

    models = {v: DenseRetriever(precision=PRECISION[v], cache=False) for v in VARIANTS}
    for r in models.values():
        r.encode(texts[:4])  # loads the model (exports the ONNX file) before the clock starts
    parts = np.array_split(np.arange(len(texts)), rounds)
    seconds = dict.fromkeys(VARIANTS, 0.0)
    vectors: dict[str, list] = {v: [None] * rounds for v in VARIANTS}
    for i, part in enumerate(parts):
        chunk = [texts[j] for j in part]
        for v in VARIANTS[i % len(VARIANTS) :] + VARIANTS[: i % len(VARIANTS)]:
            t0 = time.perf_counter()
            vectors[v][i] = models[v].encode(chunk)
            seconds[v] += time.perf_counter() - t0
    return seconds, {v: np.concatenate(vs) for v, vs in vectors.items()}


def agreement(vectors: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float]]:
    ref = vectors["torch-fp32"].astype(np.float64)
    out = {}
    for v in VARIANTS[1:]:
        x = vectors[v].astype(np.float64)
        cos = (x * ref).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(ref, axis=1))
        out[v] = (float(cos.min()), float(np.percentile(cos, 1)), float(np.median(cos)))
    return out


def _aethel() -> str:
    found = Path(sys.executable).with_name("aethel")
    return str(found) if found.exists() else "aethel"


def time_searches(setups: list[tuple[str, str, dict]], methods: list[str], repeats: int) -> None:
    """Whole-process ``aethel search`` per method and per ``(name, index, environment)`` of ``setups``
    against the bare-Python baseline, every command once per round (so a changing load meets them
    alike); the best and the median of ``repeats`` rounds."""
    commands = {"baseline": (BASELINE, _search_env())}
    for m in methods:
        for name, index, env in setups:
            label = m if len(setups) == 1 else f"{m} [{name}]"
            commands[label] = ([_aethel(), "search", index, QUESTION, "--method", m, "-k", "5"], env)
    wall = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    for _ in range(repeats):
        for name, (cmd, env) in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            elapsed = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                sys.exit(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
            wall[name].append(elapsed)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    base = min(wall["baseline"])
    print(f"aethel search, one question, whole process, {repeats} rounds in turns (loadavg {_load()}):")
    for name in commands:
        ratio = "" if name == "baseline" else f" ({min(wall[name]) / base:.2f}x)"
        label = "python -c 'import numpy, scipy.sparse'" if name == "baseline" else f"--method {name}"
        print(
            f"  {label:<38} wall min {min(wall[name]):5.2f} s{ratio:<9} median {statistics.median(wall[name]):5.2f} s"
            f"   CPU min {min(cpu[name]):5.2f} s  median {statistics.median(cpu[name]):5.2f} s"
        )


def _search_env(checkout: str | None = None) -> dict:
    """The environment of a timed command: this one's, without the thread count the encoding run set
    (a search chooses its own), and with ``PYTHONPATH`` at ``checkout`` (another commit's code) if given."""
    env = {k: v for k, v in os.environ.items() if k not in ("AETHEL_ONNX_THREADS", "PYTHONPATH")}
    if checkout:
        env["PYTHONPATH"] = checkout
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="texts per corpus (0: no encoding run)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--search", metavar="INDEX", help="also time aethel search on this index")
    ap.add_argument("--methods", default="bm25,dense,aethel-bct,aethel-hybrid")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--before",
        metavar="CHECKOUT",
        help="also time the code of another checkout (e.g. `git worktree add ../before HEAD~3`) on the same "
        "index, through this aethel command with PYTHONPATH at it, alternated with this one",
    )
    args = ap.parse_args(argv)
    os.environ["AETHEL_ONNX_THREADS"] = str(args.threads)
    import onnxruntime
    import torch

    torch.set_num_threads(args.threads)
    print(
        f"# bench_encode  python {platform.python_version()}  torch {torch.__version__}  onnxruntime "
        f"{onnxruntime.__version__}  cpus {os.cpu_count()}  threads {args.threads}  loadavg {_load()}"
    )
    if args.n > 0:
        for name, texts in corpora(args.n).items():
            seconds, vectors = encode_side_by_side(texts, max(1, min(args.rounds, len(texts))))
            chars = np.mean([len(t) for t in texts])
            rates = "  ".join(f"{v} {len(texts) / seconds[v]:6.1f}/s" for v in VARIANTS)
            speed = "  ".join(f"{v} {seconds['torch-fp32'] / seconds[v]:.2f}x" for v in VARIANTS[1:])
            print(f"{name:<12} {len(texts)} texts (mean {chars:,.0f} chars)  {rates}  (loadavg {_load()})")
            print(f"{'':<12} speed-up over torch-fp32: {speed}")
            for v, (lo, p1, med) in agreement(vectors).items():
                print(f"{'':<12} cosine to torch-fp32  {v:<10} min {lo:.9f}  p1 {p1:.9f}  median {med:.9f}")
    if args.search:
        setups = [("this", args.search, _search_env())]
        if args.before:
            setups.append(("before", args.search, _search_env(args.before)))
        time_searches(setups, [m for m in args.methods.split(",") if m], args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
