"""Execute the book's notebooks with papermill, deterministically and atomically.

``python -m aethel_lite.book.notebooks`` (what ``make notebooks`` runs) executes ``notebooks/*.ipynb``
(sorted by name) in the repository root, with the ``python3`` kernel of the running interpreter and
the environment inherited, and writes each executed copy to ``book/executed/<name>.ipynb``, which
the Jupyter Book renders (``execute_notebooks: "off"``). A notebook receives only the ``-p``
parameters its ``parameters`` cell declares. A failed notebook is reported with the failing cell
and leaves no executed copy (a stale one is removed). Two runs give byte-identical files
(:func:`strip_volatile`; the kernel runs with ``PYTHONHASHSEED=0`` unless set); run times are
printed and kept in ``results/execution.json``, never in the executed notebook. The data box a chapter
shows (:func:`loaded_banner`, :func:`data_banner`) is here too.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import html
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.paths import HOW_TO_GET_DATA, check_data_root, configured_root, data_root
from ..errors import AethelError, ParameterError
from ..io import atomic_write, read_json, write_json

NOTEBOOK_DIR = "notebooks"
OUTPUT_DIR = Path("book") / "executed"
EXECUTION_FILE = Path("results") / "execution.json"
DEFAULT_KERNEL = "python3"
#: What ``--quick`` gives each notebook that declares the name (small subsets; CI builds the book so).
QUICK_PARAMETERS: dict[str, Any] = {"quick": True, "limit": 8, "n_resamples": 200, "synthetic_size": 300}
#: Seconds per cell: a hang guard; a cold open-corpus cell (MiniLM over 45k texts) needs ~30 min.
DEFAULT_TIMEOUT = 7200
INJECTED_ID = "injected-parameters"
# tqdm.auto, imported inside a kernel without ipywidgets, warns "IProgress not found" into the
# executed notebook. Notebooks pass progress=False, so the warning is noise: silenced by message.
KERNEL_WARNING_FILTERS = ("ignore:IProgress not found",)
#: Environment variables that change a chapter's numbers, recorded with its execution statistics.
NUMBER_SETTINGS = ("AETHEL_DENSE_PRECISION",)


@dataclass
class NotebookFailure:
    """One failed notebook and its error. ``cell_index`` counts the executed notebook's cells (the injected
    parameters cell included); ``source_index`` (0-based), ``cell_id`` and ``cell_line`` (its first non-blank line)
    locate the cell in ``notebooks/NAME.ipynb``."""

    name: str
    cell_index: int | None
    ename: str
    evalue: str
    traceback: list[str] = field(default_factory=list)
    source_index: int | None = None
    cell_id: str | None = None
    cell_line: str | None = None

    def __str__(self) -> str:
        where = "before execution"
        if self.cell_index is not None:
            where = f"cell {self.source_index if self.source_index is not None else self.cell_index}"
            where += (f" (id {self.cell_id})" if self.cell_id else "") + (
                f" `{self.cell_line}`" if self.cell_line else ""
            )
        msg = f"notebook {self.name} failed at {where}: {self.ename}: {self.evalue}"
        if self.traceback:  # its last lines, without terminal colours
            msg += "\n" + re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", "\n".join(self.traceback[-6:]))
        return msg


class NotebookRunError(AethelError):
    """Raised when one or more notebooks failed; ``failures`` lists them."""

    def __init__(self, failures: Sequence[NotebookFailure]):
        self.failures = list(failures)
        super().__init__("\n\n".join(str(f) for f in self.failures))


class NotebookInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) while a notebook ran: which one, at which cell, and which were finished (and kept)."""

    def __init__(self, notebook: str, cell: int | None, n_cells: int | None, finished: Sequence[str] = ()):
        self.notebook, self.cell, self.n_cells, self.finished = notebook, cell, n_cells, list(finished)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.notebook if self.cell is None else f"{self.notebook}, cell {self.cell} of {self.n_cells}"
        kept = f"{len(self.finished)} finished chapter(s) kept" if self.finished else "no chapter finished"
        return f"interrupted in {where}; {kept}"


# -- discovery and parameters ------------------------------------------------------------------
def discover(root: str | os.PathLike = ".", only: Sequence[str] | None = None) -> list[Path]:
    """Notebooks ``root/notebooks/*.ipynb`` sorted by name (hidden files skipped); ``only`` keeps the given
    names (``.ipynb`` optional; an unknown one is a :class:`ParameterError`)."""
    nb_dir = Path(root) / NOTEBOOK_DIR
    found = {p.stem: p for p in sorted(nb_dir.glob("*.ipynb")) if not p.name.startswith(".")}
    for name in only or ():
        if Path(name).name.removesuffix(".ipynb") not in found:
            available = ", ".join(found) or "(none)"
            raise ParameterError(f"--only {name}: no such notebook in {nb_dir}; available: {available}")
    return [found[Path(name).name.removesuffix(".ipynb")] for name in only] if only else list(found.values())


def parse_parameters(pairs: Sequence[Sequence[str]] | None) -> dict[str, Any]:
    """``[["limit", "20"], ["name", "x"]]`` -> ``{"limit": 20, "name": "x"}`` (JSON when it parses)."""
    params: dict[str, Any] = {}
    for name, raw in pairs or ():
        if not name.isidentifier():
            raise ParameterError(f"-p {name}: parameter name must be a Python identifier")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    return params


def _select_parameters(notebooks: Sequence[Path], params: Mapping[str, Any], quick: bool) -> dict[Path, dict]:
    """Give each notebook the parameters it declares (``quick``: :data:`QUICK_PARAMETERS`' first); error on names
    no notebook declares."""
    import papermill

    declared = {
        nb: set(papermill.inspect_notebook(str(nb))) if params or quick else set() for nb in notebooks
    }
    every = set().union(*declared.values())
    if unknown := sorted(set(params) - every):
        raise ParameterError(
            f"parameter(s) {', '.join(unknown)} not declared by any selected notebook "
            f"({', '.join(p.stem for p in notebooks)}); declared: {', '.join(sorted(every)) or '(none)'}"
        )
    given = {**QUICK_PARAMETERS, **params} if quick else dict(params)
    return {nb: {k: v for k, v in given.items() if k in names} for nb, names in declared.items()}


def kernel_command(kernel_name: str = DEFAULT_KERNEL) -> list[str]:
    """The command ``jupyter_client`` will launch for ``kernel_name`` (:class:`ParameterError` if there is none)."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import NoSuchKernel

    try:
        return KernelManager(kernel_name=kernel_name).format_kernel_cmd()
    except NoSuchKernel as exc:
        why = f"not found for {sys.executable}; install ipykernel in this environment"
        raise ParameterError(f"kernel {kernel_name!r} {why}") from exc


def strip_volatile(
    nb, *, root: str | os.PathLike | None = None, output_path: str | os.PathLike | None = None
):
    """Remove what changes from run to run, in place (returns ``nb``): the wall-clock times papermill and nbclient
    stamp into the notebook; the injected parameters cell gets the id ``injected-parameters``, paths become relative."""

    def rel(path: str | os.PathLike) -> str:
        if root is not None:
            with contextlib.suppress(ValueError):  # on another drive
                return Path(os.path.relpath(Path(path).resolve(), Path(root).resolve())).as_posix()
        return Path(path).as_posix()

    if (pm := nb.metadata.get("papermill")) is not None:
        paths = {"input_path": pm.get("input_path"), "output_path": output_path}
        pm.update({key: rel(path) for key, path in paths.items() if path})
    for meta in (nb.metadata, *(cell.metadata for cell in nb.cells)):
        for key in ("start_time", "end_time", "duration"):
            (meta.get("papermill") or {}).pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if INJECTED_ID in cell.metadata.get("tags", []) and "id" in cell:
            cell["id"] = INJECTED_ID
    return nb


# -- execution ----------------------------------------------------------------------------------
def execute_one(
    path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    parameters: Mapping[str, Any] | None = None,
    root: str | os.PathLike = ".",
    kernel_name: str = DEFAULT_KERNEL,
    timeout: float | None = DEFAULT_TIMEOUT,
    on_cell: Callable[[int, int], None] | None = None,
) -> NotebookFailure | None:
    """Execute one notebook with papermill in ``root``; write it atomically to ``output``.

    ``on_cell(i, n)`` is called as cell ``i`` of the source notebook's ``n`` cells starts (the cell
    papermill injects is not counted). Returns ``None`` on success, else a :class:`NotebookFailure`
    (and ``output`` is removed). Ctrl-C raises :class:`NotebookInterrupted`.
    """
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    path, output = Path(path), Path(output)
    output.unlink(missing_ok=True)  # a stale copy never outlives a failed or interrupted run
    # the running cell, its place in the source notebook (papermill's injected cell not counted), cell count
    now: dict[str, Any] = {"cell": None, "index": None, "n": None, "injected": 0}

    def cell_started(cell: Any, cell_index: int, **_: Any) -> None:
        if INJECTED_ID in cell.metadata.get("tags", []):
            now["injected"] = 1
            return
        now.update(cell=cell, index=cell_index - now["injected"], n=n_cells)
        if on_cell is not None:
            on_cell(now["index"], n_cells)

    try:
        n_cells = len(nbformat.read(path, as_version=4).cells)
        with _kernel_env():
            nb = papermill.execute_notebook(
                str(path),
                None,  # kept in memory; written below only on success
                parameters=dict(parameters or {}),
                kernel_name=kernel_name,
                cwd=str(root),
                progress_bar=False,
                request_save_on_cell_execute=False,
                execution_timeout=timeout,
                on_cell_start=cell_started,
                # the kernel's own log stays quiet (errors in cells reach us as messages, a dead kernel as a failure)
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
    except KeyboardInterrupt:
        raise NotebookInterrupted(path.stem, now["index"], now["n"]) from None
    except PapermillExecutionError as exc:
        if exc.ename == "KeyboardInterrupt":  # the kernel got the same Ctrl-C first
            raise NotebookInterrupted(path.stem, now["index"], now["n"]) from None
        failure = NotebookFailure(path.stem, exc.cell_index, exc.ename, exc.evalue, list(exc.traceback))
        if (cell := now["cell"]) is not None:  # the failing cell, as it stands in notebooks/NAME.ipynb
            line = next((line.strip()[:80] for line in cell.source.splitlines() if line.strip()), None)
            failure.source_index, failure.cell_id, failure.cell_line = now["index"], cell.get("id"), line
        return failure
    except Exception as exc:  # kernel died, timeout, unreadable notebook ...
        return NotebookFailure(path.stem, None, type(exc).__name__, str(exc))
    with atomic_write(output) as fh:
        nbformat.write(strip_volatile(nb, root=root, output_path=output), fh)
    return None


@contextlib.contextmanager
def _kernel_env():
    """Environment for the kernel process: ``PYTHONHASHSEED=0`` unless set, warning filters added."""
    saved = {k: os.environ.get(k) for k in ("PYTHONWARNINGS", "PYTHONHASHSEED")}
    filters = [f for f in (saved["PYTHONWARNINGS"] or "").split(",") if f]
    os.environ["PYTHONWARNINGS"] = ",".join(dict.fromkeys([*filters, *KERNEL_WARNING_FILTERS]))
    os.environ.setdefault("PYTHONHASHSEED", "0")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_notebooks(
    root: str | os.PathLike = ".",
    *,
    only: Sequence[str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    kernel_name: str = DEFAULT_KERNEL,
    timeout: float | None = DEFAULT_TIMEOUT,
    progress: bool = True,
    stop_on_error: bool = False,
    quick: bool = False,
    on_done: Callable[[str, float, NotebookFailure | None], None] | None = None,
) -> list[Path]:
    """Execute the notebooks under ``root`` and return the executed paths.

    Every selected notebook is run (unless ``stop_on_error``); if any failed, :class:`NotebookRunError`
    is raised afterwards. ``quick`` adds :data:`QUICK_PARAMETERS` (``parameters`` win).
    ``on_done(name, wall-clock seconds, failure or None)`` is called as each one finishes.
    """
    from tqdm.auto import tqdm

    root = Path(root)
    if not (notebooks := discover(root, only)):
        raise ParameterError(f"no notebooks found in {root / NOTEBOOK_DIR}")
    kernel_command(kernel_name)  # fail early and clearly if the kernel is missing
    check_data_root()  # AETHEL_DATA set to a folder that does not exist: an error naming it, never a synthetic book
    per_nb = _select_parameters(notebooks, parameters or {}, quick)
    written: list[Path] = []
    failures: list[NotebookFailure] = []
    with tqdm(notebooks, desc="notebooks", unit="nb", disable=not progress) as bar:
        for nb in bar:
            bar.set_postfix_str(nb.stem)
            out, t0 = root / OUTPUT_DIR / nb.name, time.perf_counter()
            show = lambda i, n, stem=nb.stem: bar.set_postfix_str(f"{stem}: cell {i}/{n}")
            try:
                failure = execute_one(
                    nb,
                    out,
                    parameters=per_nb[nb],
                    root=root,
                    kernel_name=kernel_name,
                    timeout=timeout,
                    on_cell=show,
                )
            except NotebookInterrupted as exc:
                exc.finished = [p.stem for p in written]
                raise
            seconds = time.perf_counter() - t0
            if on_done is not None:
                on_done(nb.stem, seconds, failure)
            if failure is None:
                record_execution(root, nb, out, per_nb[nb], seconds)
                written.append(out)
            else:
                failures.append(failure)
                if stop_on_error:
                    break
    if failures:
        raise NotebookRunError(failures)
    return written


def record_execution(
    root: str | os.PathLike,
    source: str | os.PathLike,
    executed: str | os.PathLike,
    parameters: Mapping,
    seconds: float,
) -> dict:
    """Add one notebook's run time, cell counts, UTC build time and parameters to ``root/results/execution.json``
    (the one result file that changes from run to run; the executed notebook carries no times). Returns the record."""
    import nbformat

    cells = nbformat.read(executed, as_version=4).cells
    record = {
        "notebook": Path(source).stem,
        "seconds": round(float(seconds), 1),
        "cells": len(cells),
        "code_cells": sum(c.cell_type == "code" for c in cells),
        "built": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "parameters": dict(parameters),
        # settings read from the environment that change numbers (never paths: AETHEL_DATA/AETHEL_CACHE stay out)
        "environment": {k: os.environ[k] for k in NUMBER_SETTINGS if os.environ.get(k)},
    }
    path, saved = Path(root) / EXECUTION_FILE, {}
    with contextlib.suppress(AethelError):  # an unreadable stats file is rebuilt, never fails a build
        saved = read_json(path) if path.exists() else {}
    write_json(path, {**(saved if isinstance(saved, dict) else {}), record["notebook"]: record})
    return record


# -- the data box ------------------------------------------------------------------------------------
_UNSET = "no real data is configured (AETHEL_DATA is not set)"
_NOT_PAPERS = "Numbers here are not the paper's"


def data_status(dataset_name: str) -> str:
    """One loud line saying which data a notebook runs on and why (for ``"synthetic"``: whether real data is
    configured at all); never a local path (it is printed into the published book)."""
    env = os.environ.get("AETHEL_DATA")
    if dataset_name == "synthetic":
        if not env:
            why = f"{_UNSET}. {HOW_TO_GET_DATA}"
        elif not data_root().is_dir():
            why = f"AETHEL_DATA is set but is not a directory. {HOW_TO_GET_DATA}"
        else:
            why = "real data is configured (AETHEL_DATA is set), but this notebook uses the synthetic corpus by design."
        return f"DATA: SYNTHETIC corpus — {why} {_NOT_PAPERS}."
    if configured_root() is None:  # no data folder at all: the chapter's loaders fall back to synthetic data
        return (
            f"DATA: SYNTHETIC corpus instead of {dataset_name} — {_UNSET}. {HOW_TO_GET_DATA} {_NOT_PAPERS}."
        )
    return f"DATA: {dataset_name}, real data from the folder that {'AETHEL_DATA names' if env else 'data/ holds'}."


@dataclass(frozen=True)
class DataBanner:
    """A notebook output that says loudly which data a chapter uses: in the book a warning box
    (the theme's ``admonition warning``; ``admonition note`` for real data), plain text elsewhere."""

    text: str
    synthetic: bool

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        kind, title = ("warning", "Synthetic data") if self.synthetic else ("note", "Data")
        body = html.escape(self.text.removeprefix("DATA: "))
        return f'<div class="admonition {kind}"><p class="admonition-title">{title}</p><p>{body}</p></div>'


def data_banner(dataset_name: str) -> DataBanner:
    """:func:`data_status` as a :class:`DataBanner` (put it as the last line of a notebook cell); prefer
    :func:`loaded_banner`, built from the data sets actually loaded."""
    text = data_status(dataset_name)
    return DataBanner(text, synthetic=text.startswith("DATA: SYNTHETIC"))


def loaded_banner(loaded: Mapping[str, Any], missing: Sequence[str] = ()) -> DataBanner:
    """The data box built from the data sets a chapter actually loaded (not from what it asked for).

    ``loaded`` maps the name the chapter asked for to the :class:`~aethel_lite.data.schema.Dataset` it got;
    one with ``meta["fallback_from"]`` (:func:`aethel_lite.data.select.load_or_synthetic`) is the synthetic
    corpus standing in for the real one. ``missing``: names not run because no real data is configured.
    The box is a warning when any number comes from a stand-in, or when only the synthetic corpus ran; else
    a note listing the real data sets (questions, passages). The text never holds a local path.
    """
    env = os.environ.get("AETHEL_DATA")
    stand_ins = [n for n, ds in loaded.items() if ds.meta.get("fallback_from")]
    synthetic = {n for n, ds in loaded.items() if n == "synthetic" or ds.name.startswith("synthetic")}
    real = [n for n in loaded if n not in stand_ins and n not in synthetic]
    if stand_ins or not real:
        why = "AETHEL_DATA is set, yet the chapter ran on synthetic data" if env else _UNSET
        instead = ", ".join(stand_ins or list(missing) or ["real data"])
        text = (
            f"DATA: SYNTHETIC corpus instead of {instead} — {why}. {HOW_TO_GET_DATA} "
            f"{_NOT_PAPERS}, and no table sets them beside the paper's."
        )
        return DataBanner(text + _left_out(loaded), synthetic=True)
    sizes = [
        f"{n} ({len(loaded[n].queries):,} questions, {len(loaded[n].passages):,} passages)" for n in real
    ]
    where = "the folder that AETHEL_DATA names" if env else "the data/ folder"
    text = f"DATA: {'; '.join(sizes)} — real data from {where}."
    if "synthetic" in loaded:
        text += " The synthetic corpus also runs, by design, and is labelled wherever it appears."
    if missing:
        text += f" Not run: {', '.join(missing)}."
    return DataBanner(text + _left_out(loaded), synthetic=False)


def _left_out(loaded: Mapping[str, Any]) -> str:
    """The rows each loader skipped and why (``meta["skipped"]``), in words for the data box."""
    said = []
    for name, ds in loaded.items():
        if skipped := ds.meta.get("skipped"):
            whys = "; ".join(f"{k} {why}" for why, k in sorted(skipped.items()))
            said.append(f"{name}: {sum(skipped.values())} rows skipped ({whys})")
    return f" Left out when loading: {'; '.join(said)}." if said else ""


def hold_loader_notices() -> None:
    """Keep the data loaders' logged notices off the chapter's stderr (a raw box in the book):
    :func:`loaded_banner` says the same, from each data set's ``meta["skipped"]``, in the data box."""
    log = logging.getLogger("aethel_lite.data")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(
            logging.NullHandler()
        )  # a handler on the path: Python's last-resort stderr stays silent


# -- command line ------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m aethel_lite.book.notebooks",
        description="Execute notebooks/*.ipynb with papermill into book/executed/ (cwd: the repository root).",
    )
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        default=[],
        help="inject a parameter (value parsed as JSON when possible); repeatable",
    )
    p.add_argument("--only", action="append", metavar="NAME", help="run only this notebook (repeatable)")
    quick = ", ".join(f"{k}={json.dumps(v)}" for k, v in QUICK_PARAMETERS.items())
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"small subsets: give each notebook the parameters of QUICK_PARAMETERS it declares ({quick}); -p wins",
    )
    p.add_argument("--list", action="store_true", help="list the notebooks and their parameters, run nothing")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds per cell (default %(default)s; 0 = none)",
    )
    p.add_argument("--kernel", default=DEFAULT_KERNEL, help="kernel spec name (default %(default)s)")
    p.add_argument("--root", default=".", help="repository root (default: current directory)")
    p.add_argument("--stop-on-error", action="store_true", help="stop at the first failed notebook")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 ok, 1 notebook failed, 2 bad usage)."""
    import papermill
    from tqdm.auto import tqdm

    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    timings: dict[str, float] = {}

    def done(name: str, seconds: float, failure: NotebookFailure | None) -> None:
        timings[name] = seconds
        tqdm.write(f"time: {name} {seconds:.1f} s{'' if failure is None else ' (failed)'}", file=sys.stdout)
        sys.stdout.flush()

    try:
        if args.list:
            for nb in discover(args.root, args.only):
                desc = ", ".join(
                    f"{k}={v.get('default')}" for k, v in papermill.inspect_notebook(str(nb)).items()
                )
                print(f"{nb.stem}\t{desc}")
            return 0
        written = run_notebooks(
            args.root,
            only=args.only,
            parameters=parse_parameters(args.parameter),
            kernel_name=args.kernel,
            timeout=args.timeout or None,
            progress=not args.no_progress,
            stop_on_error=args.stop_on_error,
            quick=args.quick,
            on_done=done,
        )
    except NotebookInterrupted as exc:
        print(f"\n{exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # before or between notebooks
        print("\ninterrupted; finished chapters kept", file=sys.stderr)
        return 130
    except NotebookRunError as exc:
        print(f"time: {len(timings)} notebook(s) {sum(timings.values()):.1f} s")
        print(f"error: {len(exc.failures)} notebook(s) failed\n{exc}", file=sys.stderr)
        return 1
    except AethelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"time: {len(timings)} notebook(s) {sum(timings.values()):.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
