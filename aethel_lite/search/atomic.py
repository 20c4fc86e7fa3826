"""Crash-safe writing of an index folder: the writer's lock (:class:`IndexLock`), the hidden temporary
sibling folder (:func:`temp_sibling`), the atomic switch into place once complete (:func:`commit_folder`),
and the removal of what a killed run left behind (:func:`clean_debris`). An interruption at any point
(Ctrl-C, SIGTERM, SIGKILL, power loss) leaves the previous index as it was."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import AethelError, DataError, ParameterError
from ..io import check_writable, read_json
from .format import INDEX_FILE, PASSAGES_FILE, is_index_folder

__all__ = [
    "IndexBusyError",
    "Terminated",
    "IndexLock",
    "check_out",
    "foreign_files",
    "forced_deletions",
    "temp_sibling",
    "remove_path",
    "signals_held",
    "interrupt_handlers",
    "raise_if_signalled",
    "commit_folder",
    "switch_into_place",
    "index_identity",
    "index_state",
    "clean_debris",
    "removal_note",
    "RUN_MARK",
    "own_mark",
]


class IndexBusyError(AethelError, RuntimeError):
    """Another process is writing the same index folder."""


class Terminated(BaseException):
    """Raised in the main thread by ``aethel index``'s SIGTERM handler (like KeyboardInterrupt)."""


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with ``renameat2(RENAME_EXCHANGE)``; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def remove_path(path: Path) -> str | None:
    """Delete a folder tree, or a file or symbolic link, if it exists; return why it could not all be
    removed (None when nothing is left). A read-only folder of the tree (an old index made read-only)
    is made writable by its owner first, as ``rm -rf`` would."""
    if path.is_symlink() or path.is_file():
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            return exc.strerror or str(exc)
        return None
    problems: list[str] = []

    def retry(func: Callable[..., Any], name: str, exc_info: Any) -> None:
        exc = exc_info[1]
        if isinstance(exc, FileNotFoundError):
            return
        if isinstance(exc, PermissionError):
            with contextlib.suppress(OSError):
                parent = os.path.dirname(name)
                os.chmod(parent, os.stat(parent).st_mode | 0o700)
                if func in (os.rmdir, os.unlink):
                    func(name)
                    return
                if func in (os.scandir, os.open, os.listdir):
                    os.chmod(name, os.stat(name).st_mode | 0o700)
                    shutil.rmtree(name, onerror=retry)
                    return
        problems.append(f"{name}: {getattr(exc, 'strerror', None) or exc}")

    shutil.rmtree(path, onerror=retry)
    if not os.path.lexists(path):
        return None
    return problems[0] if problems else "it is still there"


def _siblings(out: Path, kind: str) -> list[Path]:
    prefix = f".{out.name}.{kind}-"
    try:
        return sorted(p for p in out.parent.iterdir() if p.name.startswith(prefix))
    except FileNotFoundError:
        return []


class IndexLock:
    """Exclusive writer lock of an index folder: ``.<name>.lock`` beside it, ``flock``-ed (released by
    the kernel when its process dies, even by SIGKILL), with the pid.

    Raises
    ------
    IndexBusyError
        On entry, when another live process holds the lock (its pid is named).
    """

    def __init__(self, out: Path) -> None:
        self.path = out.parent / f".{out.name}.lock"
        self.out = out
        self._fd: int | None = None

    def __enter__(self) -> IndexLock:
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 64).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise IndexBusyError(
                    f"{self.out}: another `aethel index` (pid {owner}) is writing this index "
                    f"(lock file {self.path}); wait for it to finish"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous owner removed the file between our open and flock: retry
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self._fd)
            self._fd = None


def foreign_files(folder: Path) -> list[str]:
    """The entries of ``folder`` (relative POSIX names, sorted) that ``aethel index`` did not write: in an
    index folder, every file or link its ``index.json`` does not record and every folder holding no
    recorded file; in any other folder, all of its entries."""
    written: set[str] = set()
    if is_index_folder(folder):
        with contextlib.suppress(DataError, OSError):
            files = read_json(folder / INDEX_FILE).get("files")
            written = {INDEX_FILE, PASSAGES_FILE, *(files if isinstance(files, dict) else ())}
    held = {p.as_posix() for name in written for p in Path(name).parents}
    if own_mark(folder):  # a run mark an interrupted switch left (clean_debris removes it)
        written.add(RUN_MARK)
    out: list[str] = []

    def unreadable(exc: OSError) -> None:
        raise ParameterError(
            f"{exc.filename}: cannot read it ({exc.strerror}), so it is not known what a rebuild "
            "would delete; make it readable or move it out of the index folder"
        ) from None

    for root, dirs, names in os.walk(folder, onerror=unreadable):
        rel = Path(root).relative_to(folder)
        for d in list(dirs):
            name = (rel / d).as_posix()
            if (Path(root) / d).is_symlink() or name not in held:
                out.append(name)
                dirs.remove(d)  # its contents go with it: list it once
        out += [(rel / n).as_posix() for n in names if (rel / n).as_posix() not in written]
    return sorted(out)


def _named(names: Sequence[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def check_out(out: Any, *, force: bool = False, add: bool = False, inputs: Sequence[Any] = ()) -> Path:
    """Validate ``--out`` before any work; return the folder to write: its real path (the lock, the
    temporary folder and the switch are at a link's target).

    Parameters
    ----------
    out : path-like
        The index folder.
    force : bool
        Accept a folder holding files ``aethel index`` did not write (:func:`foreign_files`; deleted).
    add : bool
        ``--add``: the folder must hold an index already.
    inputs : sequence of path-like
        The paths to index; none may lie inside ``out`` (the folder is replaced).

    Raises
    ------
    ParameterError
        Empty path; a file or a path under one; foreign files; an input inside the folder; a place
        where nothing can be written; ``add`` without an index.
    """
    if out is None or not str(out).strip():
        raise ParameterError("--out: empty path; name the index folder, e.g. --out my-index")
    given = Path(out)
    path = Path(os.path.realpath(given))
    for anc in reversed((path,) + tuple(path.parents)):
        if anc.exists() and not anc.is_dir():
            what = "is a file" if anc == path else f"is under {anc}, which is a file"
            raise ParameterError(f"--out {out}: {what}; the index is a folder, give a new or existing folder")
    for raw in inputs:
        p = Path(os.path.realpath(raw))
        if p == path or path in p.parents:
            raise ParameterError(
                f"--out {out}: the input {raw} lies inside it, and the folder is replaced by the new "
                "index; move the input out of the index folder first"
            )
    exists = path.exists()
    is_index = exists and is_index_folder(path)
    aside = [p for p in _siblings(path, "old") if _run_of(p, path) and is_index_folder(p)]
    if add and not is_index and not (aside and not exists):  # an index moved aside is put back (clean_debris)
        raise ParameterError(
            f"--add: {out} is not an aethel index; build one first with `aethel index FILES --out {out}`"
        )
    foreign = foreign_files(path) if exists else []
    if foreign and not force:
        what = (
            "an aethel index, with files it did not write"
            if is_index
            else "files that are not an aethel index"
        )
        raise ParameterError(
            f"--out {out}: the folder holds {what} ({_named(foreign)}); move them out or choose "
            "a new folder, or pass --force to replace the folder and delete them"
        )
    if exists and not os.access(path, os.W_OK | os.X_OK):
        raise ParameterError(
            f"--out {out}: the folder is read-only, and {'--add' if add else 'a rebuild'} replaces it; "
            f"make it writable (chmod u+w {out}) or choose another folder"
        )
    anc = path.parent
    while not anc.exists():
        anc = anc.parent
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ParameterError(f"--out {out}: cannot write in {anc} (permission denied)")
    check_writable(anc, f"--out {out}")  # a read-only file system or a folder such as /proc passes os.access
    return path


def forced_deletions(out: Path, log: Callable[[str], None]) -> None:
    """Say which files of ``out`` that ``aethel index`` did not write ``--force`` deletes."""
    foreign = foreign_files(out) if out.exists() else []
    if foreign:
        log(
            f"--force: deleting {len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'} of {out} that aethel index "
            f"did not write: {_named(foreign, 20)}"
        )


#: the run mark: a file that ``aethel index`` writes in each folder it makes beside an index (the temporary
#: folder, and the previous index while it is switched out); what it holds is :func:`_mark_text` of the run id
#: that ends the folder's name. Only a folder holding its own mark is ever removed as debris (:func:`clean_debris`).
RUN_MARK = ".aethel-run"
_RUN_ID = re.compile(r"[0-9]+-[0-9a-f]{8}")


def _mark_text(run: str) -> str:
    return f"aethel index run {run}\n"


def _write_mark(folder: Path, run: str) -> None:
    """Write ``folder/RUN_MARK`` for run ``run`` (created new: an existing file is never written over)."""
    fd = os.open(folder / RUN_MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, _mark_text(run).encode("ascii"))
    finally:
        os.close(fd)


def _run_of(path: Path, out: Path) -> str | None:
    """The run id of a sibling ``.<out>.tmp-<run>`` or ``.<out>.old-<run>`` when the folder holds that run's mark
    (a real folder, a regular file, the exact text), else None: the folder is not one this program wrote."""
    run = path.name.rsplit("-", 2)
    run = "-".join(run[-2:]) if len(run) == 3 else ""
    if not _RUN_ID.fullmatch(run) or path.is_symlink() or not path.is_dir():
        return None
    try:
        fd = os.open(path / RUN_MARK, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    return run if text == _mark_text(run).encode("ascii") else None


def own_mark(out: Path) -> bool:
    """Whether ``out/RUN_MARK`` is a run mark (left in the index by a switch interrupted before it was removed)."""
    try:
        text = (out / RUN_MARK).read_bytes() if not (out / RUN_MARK).is_symlink() else b""
    except OSError:
        return False
    return re.fullmatch(rb"aethel index run [0-9]+-[0-9a-f]{8}\n", text) is not None


def temp_sibling(out: Path) -> Path:
    """Create and return the hidden sibling folder ``.<name>.tmp-<pid>-<random>`` an index is written in,
    holding this run's mark (:data:`RUN_MARK`)."""
    run = f"{os.getpid()}-{secrets.token_hex(4)}"
    tmp = out.parent / f".{out.name}.tmp-{run}"
    tmp.mkdir()
    _write_mark(tmp, run)
    return tmp


def _settle() -> None:
    """A Python call: the interpreter runs the handlers of signals that have arrived (at a call)."""


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM across the switch of folders, on every thread: Python runs a signal's
    handler in the main thread whichever thread the kernel gave the signal to, so while this block
    runs the handlers only note the signal. On leaving, the handlers are restored and a noted signal
    is delivered to the previous handler (KeyboardInterrupt or :class:`Terminated` is raised there),
    after the switch. Outside the main thread (where Python runs no handler) nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: noted.append(signum)) for s in wanted}
    try:
        yield
    finally:
        _settle()  # a signal that arrived in the last instructions is noted, not left to the old handler
        for s, handler in previous.items():
            signal.signal(s, handler)
        for signum in dict.fromkeys(noted):
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)  # raises KeyboardInterrupt or Terminated here, after the switch
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


_SIGNALLED: list[int] = []  # SIGINT/SIGTERM received while interrupt_handlers() is active


def _interrupt(signum: int) -> BaseException:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _on_signal(signum: int, frame: Any) -> None:
    """Note the signal and raise KeyboardInterrupt (SIGINT) or :class:`Terminated` (SIGTERM), except
    inside the import machinery, which can swallow it: :func:`raise_if_signalled` raises it later."""
    _SIGNALLED.append(signum)
    if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        return
    raise _interrupt(signum)


def raise_if_signalled() -> None:
    """Raise the interruption of a signal that :func:`interrupt_handlers` noted (if any)."""
    if _SIGNALLED:
        raise _interrupt(_SIGNALLED[-1])


@contextlib.contextmanager
def interrupt_handlers():
    """SIGINT and SIGTERM raise KeyboardInterrupt and :class:`Terminated`, and are noted for
    :func:`raise_if_signalled` (main thread only; the previous handlers are restored after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _SIGNALLED.clear()
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _SIGNALLED.clear()


def commit_folder(tmp: Path, out: Path) -> None:
    """Make ``tmp`` the index at ``out`` in one atomic step (durable: files and folders fsync-ed); what
    was at ``out`` is left at ``tmp`` (the caller removes it).

    Every folder beside ``out`` holds the run's mark at every moment, so that :func:`clean_debris` knows it
    for this program's: the previous index is marked before it is switched out, and the mark the new index
    brings from ``tmp`` is removed once it is in place (a mark left in ``out`` by a crash is removed next time)."""
    run = _run_of(tmp, out)
    if run is None:
        raise DataError(f"{tmp}: the temporary folder lost its run mark {RUN_MARK}; nothing was switched")
    for path in sorted(tmp.rglob("*")):
        if path.is_file():
            _fsync(path)
    for path in sorted({p.parent for p in tmp.rglob("*")} | {tmp}):
        _fsync(path)
    if out.exists():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(
                out / RUN_MARK
            )  # only a mark: check_out refuses a folder holding another file of that name
        _write_mark(out, run)
        _fsync(out)
        if not _exchange(tmp, out):  # fallback: two renames; a crash between them is repaired by clean_debris
            old = out.parent / f".{out.name}.old-{run}"
            os.replace(out, old)
            os.replace(tmp, out)
            os.replace(old, tmp)
    else:
        os.replace(tmp, out)
    os.unlink(out / RUN_MARK)
    _fsync(out)
    _fsync(out.parent)


def switch_into_place(tmp: Path, out: Path) -> None:
    """The last step of writing an index: with SIGINT and SIGTERM held (:func:`signals_held`), raise a
    signal noted earlier (:func:`raise_if_signalled`), else :func:`commit_folder` ``tmp`` to ``out``
    and remove the previous index. A signal arriving meanwhile is raised after the switch."""
    with signals_held():
        raise_if_signalled()  # a signal noted but swallowed earlier (see interrupt_handlers)
        commit_folder(tmp, out)


def index_identity(out: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of ``out/index.json`` (None: no index there). Every index is written in a
    new folder, so a changed identity means the folder at ``out`` was switched."""
    try:
        st = os.stat(out / INDEX_FILE)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def index_state(out: Path, before: tuple[int, int] | None) -> str:
    """What is at ``out`` now, from the folder itself, given its :func:`index_identity` before the run:
    ``"complete"`` (the new index is in place), ``"kept"`` (the previous one is) or ``"none"``."""
    now = index_identity(out)
    if now is not None and now != before:
        return "complete"
    return "kept" if before is not None else "none"


def clean_debris(out: Path, log: Callable[[str], None]) -> None:
    """Remove what interrupted writers left beside ``out`` (we hold the lock, so they are dead), after
    moving back a previous index that a crash between the fallback commit's two renames left aside.
    A folder is known for debris by the run mark inside it (:data:`RUN_MARK`), never by its name alone:
    a folder named like one but without its mark is left, and named in one line. Each removal is
    checked: what is left is named, with the reason. A mark left in ``out`` itself is removed."""
    ours, foreign = [], []
    for path in _siblings(out, "tmp") + _siblings(out, "old"):
        (ours if _run_of(path, out) is not None else foreign).append(path)
    olds = [p for p in ours if p.name.startswith(f".{out.name}.old-")]
    if not out.exists() and olds:
        os.replace(olds[-1], out)
        log(f"restored {out} from {olds[-1].name} (a previous run was interrupted while switching indexes)")
        ours.remove(olds[-1])
    if own_mark(out):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(out / RUN_MARK)
    for path in ours:
        log(removal_note(path, _remove_marked(path, out), "left by an interrupted run"))
    if foreign:
        log(
            f"left {_named([p.name for p in foreign], 10)} beside {out}: named like a temporary folder of "
            f"aethel index, but without the mark ({RUN_MARK}) it writes in its own, so not removed"
        )


def _remove_marked(path: Path, out: Path) -> str | None:
    """:func:`remove_path` of a folder holding its run mark, the mark last: a removal that stops half-way
    leaves a folder still known as this program's (the mark is written again if the folder stays)."""
    run = _run_of(path, out)
    with contextlib.suppress(OSError):
        os.chmod(path, os.stat(path).st_mode | 0o700)  # an old index made read-only, as remove_path does
    try:
        children = [c for c in path.iterdir() if c.name != RUN_MARK]
    except OSError as exc:
        return exc.strerror or str(exc)
    for child in children:
        problem = remove_path(child)
        if problem is not None:
            return problem
    problem = remove_path(path)
    if problem is not None and run is not None and path.is_dir() and not os.path.lexists(path / RUN_MARK):
        with contextlib.suppress(OSError):
            _write_mark(path, run)
    return problem


def removal_note(path: Path, problem: str | None, why: str) -> str:
    """The line that says whether ``path`` (``why`` it was there) was removed."""
    if problem is None:
        return f"removed {path.name}, {why}"
    return f"could not remove {path} ({why}): {problem}; remove it by hand"
