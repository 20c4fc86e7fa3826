"""Load an evaluation's data set: real data when ``$AETHEL_DATA`` has it, else the synthetic corpus, said loudly."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataConfigError, DataNotFoundError, ParameterError
from . import loaders
from .own_files import own_files as hide_names
from .paths import HOW_TO_GET_DATA, configured_root, data_root
from .sampling import open_corpus
from .schema import Dataset
from .synthetic import make_synthetic

FORMATS = ("musique", "2wiki", "financebench", "synthetic")


def check_format_options(
    fmt: str,
    *,
    setting: str | None = None,
    pages_changed: bool = False,
    distractors: bool | str | None = None,
    own_files: bool = False,
) -> None:
    """Reject a format name, setting or option that does not fit the data set, before anything is loaded.

    The one check behind :func:`load_for_eval` and ``aethel eval`` (whose flags the messages name).

    Parameters
    ----------
    fmt, setting, distractors, own_files
        As for :func:`load_for_eval` (``distractors=None``: not set).
    pages_changed : bool
        Whether FinanceBench's page options (``granularity``, ``chunk_words``) were set.

    Raises
    ------
    ParameterError
        Unknown format or setting, or an option for a data set or setting it does not apply to.
    """
    if fmt not in FORMATS:
        raise ParameterError(f"--format: unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if setting not in (None, "closed", "open"):
        raise ParameterError(f"--setting must be 'closed' or 'open', got {setting!r}")
    if fmt != "financebench" and pages_changed:
        raise ParameterError(f"--granularity/--chunk-words apply to --format financebench only, not {fmt}")
    if distractors is not None and fmt != "2wiki":
        raise ParameterError(f"--distractors/--no-distractors apply to --format 2wiki only, not {fmt}")
    if distractors not in (None, False) and setting != "open":
        raise ParameterError("--distractors needs --setting open (a closed pool never ranks them)")
    if own_files and fmt != "financebench":
        raise ParameterError(f"--own-files applies to --format financebench only, not {fmt}")


def load_for_eval(
    fmt: str,
    data: str | None = None,
    *,
    setting: str | None = None,
    seed: int = 0,
    size: int = 1000,
    docs: str = "question",
    granularity: str = "page",
    chunk_words: int = 200,
    distractors: bool | str | None = None,
    own_files: bool = False,
) -> Dataset:
    """Load a data set by format name, in the setting it will be evaluated in.

    Parameters
    ----------
    fmt : {"musique", "2wiki", "financebench", "synthetic"}
    data : str, optional
        A file (MuSiQue/2Wiki layout) or a folder (default ``$AETHEL_DATA``).
    setting : {None, "closed", "open"}
        MuSiQue and 2Wiki: ``"open"`` gives :func:`~aethel_lite.data.sampling.open_corpus` of the data
        set; ``None`` and ``"closed"`` keep the closed pools.
    seed, size : int
        The synthetic corpus: ``size`` passages generated from ``seed``.
    docs, granularity, chunk_words
        FinanceBench only, as for :func:`~aethel_lite.data.loaders.load_financebench`.
    distractors : None, bool or path
        2Wiki open corpus only: the 6,119-paragraph distractor corpus (``distractor_corpus_6119.json``
        beside the questions) if present (``None``), required (``True``), not used (``False``), or read from a path.
    own_files : bool
        FinanceBench only: the "your own files" setting (:mod:`aethel_lite.data.own_files`).

    Raises
    ------
    ParameterError
        A format, setting or option that does not fit the data set (:func:`check_format_options`).
    DataNotFoundError
        A data file is missing and ``data`` is given or no data folder is configured.
    DataConfigError
        ``data`` is None and the configured folder (:func:`~aethel_lite.data.paths.configured_root`) is
        missing or does not hold this data set: the message names the folder.
    """
    options = dict(
        setting=setting,
        seed=seed,
        size=size,
        docs=docs,
        granularity=granularity,
        chunk_words=chunk_words,
        distractors=distractors,
        own_files=own_files,
    )
    if data is None and fmt != "synthetic":
        root = configured_root()
        try:
            return _load_for_eval(fmt, None, **options)
        except DataNotFoundError as exc:
            if root is None:
                raise
            where = f"AETHEL_DATA={root}" if os.environ.get("AETHEL_DATA") else f"the data folder {root}"
            missing = str(exc).split(": ")[0]
            raise DataConfigError(
                f"{where} is set but does not hold the {fmt} data set ({missing} not found). "
                f"{HOW_TO_GET_DATA}"
            ) from exc
    return _load_for_eval(fmt, data, **options)


def _load_for_eval(
    fmt: str,
    data: str | None,
    *,
    setting: str | None,
    seed: int,
    size: int,
    docs: str,
    granularity: str,
    chunk_words: int,
    distractors: bool | str | None,
    own_files: bool,
) -> Dataset:
    check_format_options(
        fmt,
        setting=setting,
        pages_changed=granularity != "page" or chunk_words != 200,
        distractors=distractors,
        own_files=own_files,
    )
    if fmt == "synthetic":
        return make_synthetic(n_passages=size, seed=seed)
    if fmt == "financebench":
        dataset = loaders.load_financebench(
            _data_dir(data, loaders.FINANCEBENCH_DIR[0]),
            docs=docs,
            granularity=granularity,
            chunk_words=chunk_words,
        )
        return hide_names(dataset, name="financebench-own") if own_files else dataset
    if fmt == "musique":
        dataset = loaders.load_musique(_data_file(data, loaders.MUSIQUE_FILE))
    else:
        path = _data_file(data, loaders.TWOWIKI_FILE)
        extra = _distractor_file(path, distractors) if setting == "open" else None
        dataset = loaders.load_2wiki(path, distractors=extra)
        if setting == "open":
            dataset.meta.setdefault("distractors", None)
    return open_corpus(dataset) if setting == "open" else dataset


def eval_inputs(
    fmt: str, data: str | None = None, *, setting: str | None = None, distractors: bool | str | None = None
) -> list[Path]:
    """The files :func:`load_for_eval` reads for these arguments (those that exist), so that a command
    can refuse to write over one of them; none for the synthetic corpus."""
    if fmt == "synthetic":
        return []
    root = data_root()
    if fmt == "financebench":
        folder = _data_dir(data, loaders.FINANCEBENCH_DIR[0]) or root / loaders.FINANCEBENCH_DIR[0]
        paths = [folder / name for name in (loaders.FB_QUESTIONS, loaders.FB_DOCINFO, loaders.FB_PAGES)]
    else:
        default = loaders.MUSIQUE_FILE if fmt == "musique" else loaders.TWOWIKI_FILE
        questions = _data_file(data, default) or root.joinpath(*default)
        paths = [questions]
        if fmt == "2wiki" and setting == "open":
            extra = _distractor_file(questions, distractors)
            paths += [Path(extra)] if extra is not None else []
    return [p for p in paths if p.exists()]


def _data_dir(data: str | None, sub: str) -> Path | None:
    """The data set's folder: ``data/sub`` when ``data`` holds it, else ``data`` (None: the loader's default)."""
    if data is None:
        return None
    path = Path(data)
    return path / sub if (path / sub).is_dir() else path


def _data_file(data: str | None, default: tuple[str, str]) -> Path | None:
    """The questions file: ``data`` itself, or ``default``'s file name inside the folder ``data``."""
    if data is None:
        return None
    path = Path(data)
    return _data_dir(data, default[0]) / default[1] if path.is_dir() else path


def _distractor_file(questions: Path | None, distractors: bool | str | None) -> Path | str | None:
    """What :func:`~aethel_lite.data.loaders.load_2wiki` gets for ``distractors``: the default file
    beside the questions (when present, for ``None``; required, for ``True``), a path, or None."""
    if distractors is False:
        return None
    if distractors is not None and distractors is not True:
        return distractors
    folder = Path(questions).parent if questions is not None else data_root() / loaders.TWOWIKI_DISTRACTORS[0]
    default = folder / loaders.TWOWIKI_DISTRACTORS[1]
    return default if distractors is True or default.exists() else None


def load_or_synthetic(
    fmt: str,
    *,
    setting: str = "closed",
    size: int = 1000,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    **kwargs: Any,
) -> Dataset:
    """:func:`load_for_eval` (in ``setting``), or — when the real data is not there — the synthetic corpus, loudly.

    The fallback data set is named ``"synthetic (instead of <fmt>)"``, carries
    ``meta["fallback_from"] = fmt``, and for the closed-pool setting gets random pools of 20
    (:meth:`Dataset.with_random_pools`). It happens only when no data is configured at all (no
    ``data`` argument, ``$AETHEL_DATA`` unset, no ``./data``); any other missing data raises as in
    :func:`load_for_eval`, so a wrong setting never quietly turns into a synthetic book.
    """
    if fmt != "synthetic":
        try:
            return load_for_eval(fmt, setting=setting, **kwargs)
        except DataNotFoundError:
            if kwargs.get("data") is not None:
                raise
            if log:
                log(
                    f"WARNING: no real data is configured (AETHEL_DATA is not set and there is no ./data folder), so "
                    f"{fmt} is not available.\nWARNING: running on the SYNTHETIC corpus instead; "
                    "these numbers are NOT comparable with the paper's."
                )
    ds = make_synthetic(n_passages=size, seed=seed)
    if setting == "closed":
        ds = ds.with_random_pools(20, seed=seed)
    if fmt != "synthetic":
        ds.name = f"synthetic (instead of {fmt})"
        ds.meta["fallback_from"] = fmt
    return ds
