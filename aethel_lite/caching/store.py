"""Content-addressed, per-passage result store: one SQLite file per producer configuration.

Entity extraction and passage embedding are pure functions of one passage's text and of the
producer's configuration, so a :class:`PassageStore` keys their results by the text itself
(:func:`text_key`) and every corpus holding the same text reuses them; a changed configuration opens
a new file. Its tables are ``meta(name, value)`` (``format`` and ``config``) and ``entries(key, value)``
(the producer's bytes, never interpreted nor unpickled). WAL mode and a busy timeout let several
processes share a file. A file that is not a SQLite database, is corrupt, or whose ``meta`` names
another format or configuration is reported with a :class:`RuntimeWarning` and replaced by an
empty store, also when found during a read (which then returns no hits) or a write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import ParameterError
from .locations import cache_dir
from .versions import package_versions

__all__ = [
    "STORE_FORMAT",
    "MAX_PARAMS",
    "FLUSH_EVERY",
    "PassageStore",
    "text_key",
    "config_fingerprint",
    "compute_missing",
    "package_versions",
]

STORE_FORMAT = "aethel-store/1"
MAX_PARAMS = 900  # host parameters per IN (...) query; SQLite's historic limit is 999
#: Values computed between two writes to a store: a run killed mid-way loses at most this many.
FLUSH_EVERY = 256
BUSY_TIMEOUT = 120.0  # seconds a connection waits for another process's write lock
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")


def text_key(text: str) -> str:
    """The store key of a passage: hex SHA-256 of ``text`` encoded as UTF-8."""
    if not isinstance(text, str):
        raise ParameterError(f"text: expected str, got {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_part(label: str) -> str:
    """``label`` with every run of characters other than letters, digits, ``_`` and ``.`` made ``_``."""
    return _UNSAFE.sub("_", label.strip())


def _canonical_json(config: Mapping, what: str) -> str:
    try:
        return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{what}: config is not JSON-serialisable ({exc})") from None


def config_fingerprint(config: Mapping) -> str:
    """Hex SHA-256 of the canonical JSON (sorted keys, no spaces) of ``config``."""
    return hashlib.sha256(_canonical_json(config, "config_fingerprint").encode("utf-8")).hexdigest()


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF  # extended codes keep the primary code in the low byte


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the file is damaged (not merely busy, read-only or full)."""
    code = _primary_code(exc)
    if code is not None:
        return code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
    return not isinstance(exc, sqlite3.OperationalError)  # pragma: no cover - Python < 3.11


def _is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says another connection holds a lock (worth retrying)."""
    code = _primary_code(exc)
    if code is not None:
        return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)  # pragma: no cover - Python < 3.11


_SQL_TYPE = {"str": "TEXT", "int": "INTEGER", "float": "REAL", "NoneType": "NULL"}
logger = logging.getLogger(__name__)


class PassageStore:
    """Per-passage results of one producer configuration, in one SQLite file.

    Parameters
    ----------
    kind : str
        What is stored, e.g. ``"entities"`` or ``"embeddings"`` (part of the file name).
    name : str
        The producer, e.g. ``"ner"`` or a model name (part of the file name, where every run of
        characters other than letters, digits, ``_`` and ``.`` becomes ``_``).
    config : mapping
        JSON-serialisable configuration: everything that changes a stored value. Its
        :func:`config_fingerprint` names the file and its canonical JSON is kept in ``meta``.
    root : path, optional
        Cache root passed to :func:`aethel_lite.caching.locations.cache_dir` (default ``$AETHEL_CACHE``).
        ``path`` is the SQLite file, ``fingerprint`` the :func:`config_fingerprint` of ``config``.
    """

    def __init__(
        self, kind: str, name: str, config: Mapping, *, root: str | os.PathLike | None = None
    ) -> None:
        for label, value in (("kind", kind), ("name", name)):
            if not isinstance(value, str) or not value.strip():
                raise ParameterError(f"PassageStore {label}: expected a non-empty str, got {value!r}")
        self.kind = kind
        self.name = name
        self.config_json = _canonical_json(config, f"PassageStore {kind}-{name}")
        self.fingerprint = hashlib.sha256(self.config_json.encode("utf-8")).hexdigest()
        self.path = (
            cache_dir("store", root) / f"{_file_part(kind)}-{_file_part(name)}-{self.fingerprint[:16]}.sqlite"
        )
        self._conn: sqlite3.Connection | None = None
        self._open()

    def __repr__(self) -> str:
        return f"PassageStore({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        """:meth:`_connect_once`, retried for up to :data:`BUSY_TIMEOUT` seconds while the file is busy
        (enabling WAL fails at once while another process opens the file)."""
        deadline = time.monotonic() + BUSY_TIMEOUT
        while True:
            try:
                return self._connect_once()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(0.02)

    def _connect_once(self) -> sqlite3.Connection:
        """Open the file (creating the tables in an empty database); _Mismatch if it is another store."""
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: atomic, never corrupt
            with self._transaction(conn):  # one process creates, the others then read its meta
                tables = {
                    row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                }
                if not tables:
                    conn.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
                    conn.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
                    conn.executemany(
                        "INSERT INTO meta (name, value) VALUES (?, ?)",
                        [("format", STORE_FORMAT), ("config", self.config_json)],
                    )
                    tables = {"meta", "entries"}
                meta = dict(conn.execute("SELECT name, value FROM meta")) if "meta" in tables else {}
            problem = _meta_problem(meta, tables, self.config_json)
        except BaseException:
            conn.close()
            raise
        if problem:
            conn.close()
            raise _Mismatch(problem)
        return conn

    def _open(self) -> None:
        try:
            self._conn = self._connect()
        except _Mismatch as exc:
            self._rebuild(str(exc))
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._rebuild(f"not a valid SQLite database ({exc})")

    def _rebuild(self, reason: str) -> None:
        """Warn, delete the file (and its WAL side files) and create an empty store in its place."""
        warnings.warn(
            f"{self.path}: unusable {self.kind} store ({reason}); rebuilding it", RuntimeWarning, stacklevel=3
        )
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")
        self._conn = self._connect()

    @staticmethod
    @contextlib.contextmanager
    def _transaction(conn: sqlite3.Connection):
        conn.execute("BEGIN IMMEDIATE")  # take the write lock now (waits up to the busy timeout)
        try:
            yield
        except BaseException:
            if conn.in_transaction:  # SQLite may already have rolled back (e.g. a full disk)
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"{self.path}: the store is closed")
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Stored values of ``keys`` (missing keys are absent); ``{}`` when a corrupt database is rebuilt."""
        unique = list(dict.fromkeys(keys))
        out: dict[str, bytes] = {}
        try:
            for i in range(0, len(unique), MAX_PARAMS):
                batch = unique[i : i + MAX_PARAMS]
                marks = ",".join("?" * len(batch))
                out.update(self.conn.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", batch))
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._rebuild(f"corrupt database ({exc})")
            return {}
        wrong = {k: type(v).__name__ for k, v in out.items() if not isinstance(v, bytes)}
        if wrong:  # SQLite keeps any type in any column: a value written by something else is not ours
            kinds = ", ".join(sorted({_SQL_TYPE.get(t, t) for t in wrong.values()}))
            logger.warning(
                "aethel: warning: %s: %d stored value%s of the wrong SQL type (%s, not BLOB); computed again",
                self.path,
                len(wrong),
                "" if len(wrong) == 1 else "s",
                kinds,
            )
            out = {k: v for k, v in out.items() if k not in wrong}
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> int:
        """Store ``(key, value)`` pairs in one transaction (overwriting); return how many. A corrupt
        database is rebuilt and the write retried once on the new file."""
        rows = [(str(k), sqlite3.Binary(v)) for k, v in items]
        if not rows:
            return 0
        try:
            self._write(rows)
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._rebuild(f"corrupt database ({exc})")
            self._write(rows)
        return len(rows)

    def _write(self, rows: list[tuple[str, Any]]) -> None:
        with self._transaction(self.conn):
            self.conn.executemany("INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> PassageStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def compute_missing(
    store: PassageStore,
    todo: Sequence[str],
    compute: Callable[[list[str]], Sequence[Any]],
    encode: Callable[[Any], bytes],
    *,
    groups: Iterable[list[str]] | None = None,
    found: int = 0,
    flush: int = FLUSH_EVERY,
    progress: bool = False,
    what: str = "passages",
) -> dict[str, Any]:
    """Compute the values of the keys ``todo`` (which the store lacks) and write them to ``store`` as they come.

    Parameters
    ----------
    store : PassageStore
    todo : sequence of str
    compute : callable
        ``compute(keys)`` returns one value per key of a group, in order.
    encode : callable
        The stored bytes of one value.
    groups : iterable of list of str, optional
        The keys of ``todo`` in the groups ``compute`` is called with (default: ``flush`` at a time).
    found : int
        How many keys of the caller's request the store already held (where the tqdm bar starts).
    flush : int
        The computed rows are written (one transaction) whenever at least ``flush`` of them wait.
    progress : bool
    what : str
        The bar's label.

    Returns
    -------
    dict
        key -> computed value, for every key of ``todo``.
    """
    from tqdm.auto import tqdm

    todo = list(todo)
    if groups is None:
        groups = [todo[i : i + flush] for i in range(0, len(todo), flush)]
    out: dict[str, Any] = {}
    pending: list[tuple[str, bytes]] = []
    desc = f"{what}: {found} found in the store, {len(todo)} to compute"
    with tqdm(
        total=found + len(todo), initial=found, desc=desc, unit=" passages", disable=not progress
    ) as bar:
        for group in groups:
            values = compute(group)
            out.update(zip(group, values))
            pending.extend((k, encode(v)) for k, v in zip(group, values))
            bar.update(len(group))
            if len(pending) >= flush:
                store.put_many(pending)
                pending = []
        store.put_many(pending)
    return out


def _meta_problem(meta: Mapping[str, str], tables: set[str], config_json: str) -> str | None:
    """Why a database is not this store (None when its tables and meta match)."""
    if not {"meta", "entries"} <= tables:
        return f"no store tables (found {', '.join(sorted(tables))})"
    if meta.get("format") != STORE_FORMAT:
        return f"format {meta.get('format')!r}, expected {STORE_FORMAT!r}"
    if meta.get("config") != config_json:
        return "its meta holds another configuration"
    return None


class _Mismatch(Exception):
    """The file is a SQLite database, but not a store of this format and configuration."""
