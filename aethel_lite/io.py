"""Small I/O helpers shared by every module: atomic writes, JSON(L) with errors naming file and line, hashes.
Nothing read back from disk is unpickled (arrays: ``.npy``/``.npz``; else JSON)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import math
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import DataError, DataNotFoundError, ParameterError

__all__ = [
    "check_output_file",
    "check_writable",
    "atomic_write",
    "write_json",
    "read_json",
    "write_jsonl",
    "read_jsonl",
    "read_json_shaped",
    "read_npy",
    "sha256_file",
    "check_utf8",
    "shape_fault",
]


def check_output_file(path: Any, flag: str = "--out") -> Path:
    """Validate a result-file path before any work; return it as a :class:`Path`.

    Parameters
    ----------
    path : path-like
        Where a result will be written (by :func:`atomic_write`, through a temporary file beside it).
    flag : str
        The option named in error messages.

    Raises
    ------
    ParameterError
        Empty path, an existing folder, a path under a file, or a folder where nothing can be
        written (:func:`check_writable` on the nearest existing folder); the message names the path.
    """
    if path is None or not str(path).strip():
        raise ParameterError(f"{flag}: empty path; name the result file")
    target = Path(path)
    if target.is_dir():
        raise ParameterError(f"{flag} {path}: is a folder; name a file, e.g. {Path(path) / 'result.json'}")
    for anc in target.absolute().parents:
        if anc.exists():
            if not anc.is_dir():
                raise ParameterError(f"{flag} {path}: {anc} is a file, not a folder")
            check_writable(anc, f"{flag} {path}")
            break
    return target


def check_writable(folder: Path, what: str) -> None:
    """Raise ``ParameterError("{what}: cannot write in {folder} ({reason})")`` unless a temporary file
    can be created and removed in ``folder`` (a read-only file system or ``/proc`` passes ``os.access``)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".aethel-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ParameterError(f"{what}: cannot write in {folder} ({exc.strerror or exc})") from None


def _umask() -> int:
    """The process's file-creation mask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore
    os.umask(mask)
    return mask


def give_default_mode(fd: int) -> None:
    """Give a ``tempfile.mkstemp`` file (created 0600) the mode ``open()`` would have given it (0666 less the umask)."""
    os.fchmod(fd, 0o666 & ~_umask())


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[Any]:
    """Open a temporary file beside ``path`` (with :func:`give_default_mode`); on success rename it to
    ``path``, on error delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        give_default_mode(fd)
    finally:
        os.close(fd)
    try:
        text = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with open(tmp, mode, **text) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (sorted keys, so two runs give identical bytes), atomically."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=indent, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; errors name the file (and line/column for a syntax error).

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    DataError
        The file is not UTF-8, not valid JSON, nested too deeply, or cannot be read.
    """
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}); malformed JSON") from exc
    except RecursionError as exc:
        raise DataError(f"{path}: malformed JSON (nested too deeply)") from exc
    except IsADirectoryError as exc:
        raise DataError(f"{path}: is a folder, not a JSON file") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from exc


INT64 = 2**63  # an integer read by :func:`read_json_shaped` lies in [-INT64, INT64): it fits numpy's int64


def read_json_shaped(path: str | os.PathLike, shape: Any, what: str) -> Any:
    """Read a JSON file whose structure must match ``shape``; any fault is one :class:`DataError` naming the file.

    Parameters
    ----------
    path : path-like
    shape : type, list, tuple or dict
        ``str``, ``int`` (an integer in int64's range, not a bool), ``float`` (any finite number), ``bool``,
        ``object`` (anything); ``[S]``: a list of items of shape ``S``; ``(S1, S2, ...)``: a list of exactly
        those items; ``{"key": S, ...}``: an object holding at least those keys (others are not checked);
        ``{str: S}``: an object whose every value has shape ``S`` (a vocabulary, say).
        The shape is finite, so a deeper document than it describes is refused, whatever its depth.
    what : str
        What the file holds, in the user's words (``"titles"``): the message is ``{path}: unreadable {what} (...)``.

    Raises
    ------
    DataError
        Missing, unreadable, not UTF-8, not JSON, nested too deeply for the parser, or not of ``shape`` (the
        message names the first place that is not, e.g. ``edges[3][1]``).
    """
    try:
        doc = json.loads(Path(path).read_bytes())
    except RecursionError:
        raise DataError(f"{path}: unreadable {what} (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{path}: unreadable {what} (malformed JSON at line {exc.lineno}: {exc.msg})"
        ) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: unreadable {what} (not UTF-8 text, byte {exc.start})") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise DataError(f"{path}: unreadable {what} (an integer of thousands of digits)") from None
    except OSError as exc:
        raise DataError(f"{path}: unreadable {what} ({exc.strerror or exc})") from None
    fault = _shape_fault(doc, shape, "the document")
    if fault:
        raise DataError(f"{path}: unreadable {what} ({fault})")
    return doc


def read_npy(path: str | os.PathLike, what: str, *, mmap_mode: str | None = None) -> Any:
    """The array of a ``.npy`` file, never unpickled; any fault is one :class:`DataError` naming the file.

    Parameters
    ----------
    path : path-like
    what : str
        What the file holds, in the user's words: the message is ``{path}: unreadable {what} (...)``.
    mmap_mode : str, optional
        ``"r"``: the array memory-mapped (nothing read but its header); None: read into memory.

    Raises
    ------
    DataError
        Missing, unreadable, not a ``.npy`` file (NumPy would take it for a pickle), an array of Python
        objects, or shorter than its header says (checked before anything is allocated).
    """
    import numpy as np  # here: the other helpers of this base module load without NumPy

    try:
        with open(path, "rb") as fh:
            if fh.read(6) != b"\x93NUMPY":
                raise ValueError("not a .npy file")
            fh.seek(0)
            version = np.lib.format.read_magic(fh)
            read_header = getattr(np.lib.format, f"read_array_header_{version[0]}_{version[1]}", None)
            if read_header is None:
                raise ValueError(f".npy format version {version[0]}.{version[1]}, not 1.0 or 2.0")
            shape, _, dtype = read_header(fh)
            if dtype.hasobject:
                raise ValueError("an array of Python objects")
            need, size = fh.tell() + math.prod(shape) * dtype.itemsize, os.fstat(fh.fileno()).st_size
            if size < need:
                raise ValueError(f"truncated: {size} bytes where its header says {need}")
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise DataError(f"{path}: unreadable {what} ({reason})") from None


_KIND = {
    str: "text",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
}


def _kind(value: Any) -> str:
    return "null" if value is None else _KIND.get(type(value), type(value).__name__)


def _flat_ok(value: list, shape: Any) -> bool:
    """A quick yes for the common large cases, a list of scalars or of fixed-length tuples of the same scalar
    (``[str]``, ``[(int, int)]``); False means "look item by item" (:func:`_shape_fault` finds the fault)."""
    item = shape[0] if isinstance(shape, list) else None
    if isinstance(item, tuple) and len(set(item)) == 1:
        width, item = len(item), item[0]
        if not all(type(v) is list and len(v) == width for v in value):
            return False
        value = [x for v in value for x in v]
    if item is str:
        return all(type(v) is str for v in value)
    if item is int:
        return all(type(v) is int for v in value) and (
            not value or (-INT64 <= min(value) and max(value) < INT64)
        )
    return False


def _shape_fault(value: Any, shape: Any, where: str) -> str | None:
    """Where and how ``value`` departs from ``shape`` (:func:`read_json_shaped`), or None; recursion only as deep
    as the shape."""
    if shape is object:
        return None
    if shape is int:
        if type(value) is not int:
            return f"{where}: expected an integer, got {_kind(value)}"
        if not -INT64 <= value < INT64:
            return f"{where}: integer {str(value)[:30]} is out of range"
        return None
    if shape is float:
        if type(value) not in (int, float):
            return f"{where}: expected a number, got {_kind(value)}"
        if not math.isfinite(value):
            return f"{where}: expected a finite number, got {value}"
        return None
    if shape in (str, bool):
        return None if type(value) is shape else f"{where}: expected {_KIND[shape]}, got {_kind(value)}"
    if isinstance(shape, dict):
        if type(value) is not dict:
            return f"{where}: expected an object, got {_kind(value)}"
        if list(shape) == [str]:  # {str: S}: any keys, every value of shape S
            for key, item in value.items():
                fault = _shape_fault(item, shape[str], f"{where}[{key!r}]")
                if fault:
                    return fault
            return None
        for key, sub in shape.items():
            if key not in value:
                return f"{where}: no {key!r}"
            fault = _shape_fault(value[key], sub, key if where == "the document" else f"{where}.{key}")
            if fault:
                return fault
        return None
    if type(value) is not list:
        return f"{where}: expected a list, got {_kind(value)}"
    if _flat_ok(value, shape):
        return None
    if isinstance(shape, tuple) and len(value) != len(shape):
        return f"{where}: expected {len(shape)} items, got {len(value)}"
    for i, item in enumerate(value):
        fault = _shape_fault(item, shape[i] if isinstance(shape, tuple) else shape[0], f"{where}[{i}]")
        if fault:
            return fault
    return None


_LONE_CR = re.compile(r"(?<=\r)(?!\n)")  # after a \r that does not start a \r\n: where text mode ends a line


def read_jsonl(path: str | os.PathLike, *, numbered: bool = False) -> Iterator[Any]:
    """Yield one dict per non-blank line of a JSONL file (``.gz`` allowed).

    Parameters
    ----------
    path : path-like
    numbered : bool
        Yield ``(line_number, dict)`` pairs (1-based) instead of dicts.

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    DataError
        A line is not valid JSON, not a JSON object or not UTF-8, or the file (or its gzip
        stream) is corrupt or truncated; the message is ``file:line: ...`` where a line is known.
    """
    path = Path(path)
    if not path.exists():
        raise DataNotFoundError(f"{path}: file not found")
    lineno = 0
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            for raw in fh:  # bytes, decoded line by line: a bad byte is reported on its own line
                text = raw.decode("utf-8")
                for line in (
                    _LONE_CR.split(text) if "\r" in text else (text,)
                ):  # universal newlines, as text mode
                    if not line:
                        continue
                    lineno += 1
                    row = parse_jsonl_line(line, path, lineno)
                    if row is not None:
                        yield (lineno, row) if numbered else row
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:{lineno + 1}: not UTF-8 text (byte {exc.start} of the line)") from exc
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise DataError(f"{path}: corrupt or truncated gzip stream after line {lineno} ({exc})") from exc
    except IsADirectoryError as exc:
        raise DataError(f"{path}: is a folder, not a JSONL file") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read after line {lineno} ({exc.strerror or exc})") from exc


def parse_jsonl_line(line: str, path: str | os.PathLike, lineno: int) -> dict | None:
    """One JSONL line as a dict, ``None`` for a blank line; errors name ``file:line``."""
    if not line.strip():
        return None
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{lineno}: malformed JSON line ({exc.msg}, column {exc.colno})") from exc
    except RecursionError as exc:
        raise DataError(f"{path}:{lineno}: malformed JSON line (nested too deeply)") from exc
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise DataError(f"{path}:{lineno}: malformed JSON line (an integer of thousands of digits)") from None
    if not isinstance(row, dict):
        raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
    return row


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    """Write dicts one per line (sorted keys), atomically; ``.gz`` paths are gzip-compressed."""
    path = Path(path)
    lines = (json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n" for row in rows)
    if path.suffix == ".gz":
        with atomic_write(path, "wb", encoding=None) as raw:
            # mtime=0 and no file name (the temp file's would differ) keep the bytes identical across runs
            with gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
                for line in lines:
                    gz.write(line.encode("utf-8"))
        return
    with atomic_write(path) as fh:
        fh.writelines(lines)


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check_utf8(text: str, what: str) -> str:
    """``text`` itself when it is Unicode text that UTF-8 can encode, else a :class:`ParameterError` naming ``what``.

    Python keeps the bytes of a command-line argument (or of text read with ``surrogateescape``) that are not
    UTF-8 as lone surrogates (U+DC80–U+DCFF); tokenizers and JSON output fail on them, so every question is
    checked here once, whatever method answers it.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if 0xDC80 <= ord(bad) <= 0xDCFF else f"U+{ord(bad):04X}"
        raise ParameterError(
            f"{what}: not UTF-8 text ({byte} at character {exc.start + 1}); give it as UTF-8"
        ) from None
    return text


def shape_fault(value: Any, shape: Any, where: str) -> str | None:
    """Where and how a parsed JSON ``value`` departs from ``shape`` (as :func:`read_json_shaped` takes it), or
    None: for a reader that parses its own lines (one JSONL line at a time) and names the file itself."""
    return _shape_fault(value, shape, where)
