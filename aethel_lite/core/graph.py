"""The passage–entity graph: an undirected bipartite graph plus optional entity–entity alias edges.

It is stored as two sparse binary matrices, ``incidence`` :math:`B \\in \\{0,1\\}^{n_p \\times n_e}`
(:math:`B_{ij} = 1` iff passage *i* mentions entity *j*) and ``alias`` :math:`L` (symmetric, zero
diagonal) or ``None``; its adjacency, passages first, is

.. math::

    A = \\begin{pmatrix} 0 & B \\\\ B^\\top & L \\end{pmatrix}.
"""

from __future__ import annotations

import os
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import DataError, DataNotFoundError, ParameterError
from ..io import atomic_write, read_json, write_json

__all__ = ["EntityGraph", "build_graph"]

_FORMAT = "aethel-entity-graph"
_VERSION = 1
_NPZ = "graph.npz"
_JSON = "graph.json"


def _csr(matrix: Any, shape: tuple[int, int], what: str) -> sp.csr_matrix:
    """``matrix`` as a canonical float64 CSR matrix of the given shape (or raise)."""
    if not sp.issparse(matrix):
        raise ParameterError(f"{what}: expected a scipy.sparse matrix, got {type(matrix).__name__}")
    if matrix.shape != shape:
        raise ParameterError(f"{what}: expected shape {shape}, got {matrix.shape}")
    out = sp.csr_matrix(matrix, dtype=np.float64)
    out.sum_duplicates()
    out.sort_indices()
    return out


def _positions(names: list[str], duplicate: str) -> dict[str, int]:
    """Name -> position; a repeated name raises :class:`DataError` (``f"{duplicate} {name!r}"``)."""
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in index:
            raise DataError(f"{duplicate} {name!r}")
        index[name] = i
    return index


@dataclass(eq=False)
class EntityGraph:
    """A bipartite passage–entity graph with optional entity–entity alias edges.

    Parameters
    ----------
    pids : list of str
        Passage ids, one per row of ``incidence`` (unique).
    entities : list of str
        Normalised entity keys, one per column of ``incidence`` (unique).
    incidence : scipy.sparse.csr_matrix, shape (n_passages, n_entities)
        Binary float64, :math:`B`.
    alias : scipy.sparse.csr_matrix or None, shape (n_entities, n_entities)
        Symmetric binary float64 entity–entity edges, :math:`L`.
    surface : dict of str to str
        Entity key -> its most frequent surface form (for display only).

    Notes
    -----
    Node order in :meth:`adjacency` and in PageRank vectors: passages in ``pids`` order, then
    entities in ``entities`` order.
    """

    pids: list[str]
    entities: list[str]
    incidence: sp.csr_matrix
    alias: sp.csr_matrix | None = None
    surface: dict[str, str] = field(default_factory=dict)
    _adjacency: sp.csr_matrix | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.pids = [str(p) for p in self.pids]
        self.entities = [str(e) for e in self.entities]
        self.pid_index = _positions(self.pids, "pids: duplicate passage id")
        self.entity_index = _positions(self.entities, "entities: duplicate entity key")
        n_p, n_e = len(self.pids), len(self.entities)
        self.incidence = _csr(self.incidence, (n_p, n_e), "incidence")
        if self.alias is not None:
            self.alias = _csr(self.alias, (n_e, n_e), "alias")
            if (self.alias != self.alias.T).nnz:
                raise ParameterError("alias: matrix must be symmetric")
        self.surface = dict(self.surface)

    @property
    def n_passages(self) -> int:
        """Number of passage nodes."""
        return len(self.pids)

    @property
    def n_entities(self) -> int:
        """Number of entity nodes."""
        return len(self.entities)

    @property
    def n_nodes(self) -> int:
        """``n_passages + n_entities``."""
        return self.n_passages + self.n_entities

    def __repr__(self) -> str:
        n_alias = 0 if self.alias is None else self.alias.nnz // 2
        return (
            f"EntityGraph(n_passages={self.n_passages}, n_entities={self.n_entities}, "
            f"mentions={self.incidence.nnz}, alias_edges={n_alias})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntityGraph):
            return NotImplemented

        def same(a, b) -> bool:
            if a is None or b is None:
                return a is None and b is None
            return a.shape == b.shape and (a != b).nnz == 0

        return (
            self.pids == other.pids
            and self.entities == other.entities
            and self.surface == other.surface
            and same(self.incidence, other.incidence)
            and same(self.alias, other.alias)
        )

    def adjacency(self) -> sp.csr_matrix:
        """Symmetric adjacency :math:`A` as float64 CSR, passages first (cached: do not modify it in place)."""
        if self._adjacency is None:
            b = self.incidence
            n_p, n_e = b.shape
            low_right = self.alias if self.alias is not None else sp.csr_matrix((n_e, n_e))
            adj = sp.bmat([[sp.csr_matrix((n_p, n_p)), b], [b.T, low_right]], format="csr", dtype=np.float64)
            adj.sum_duplicates()
            adj.sort_indices()
            self._adjacency = adj
        return self._adjacency

    def passage_node(self, pid: str) -> int:
        """Node index of a passage; raises :class:`DataError` if unknown."""
        try:
            return self.pid_index[pid]
        except KeyError:
            raise DataError(f"unknown passage id {pid!r}") from None

    def entity_node(self, key: str) -> int:
        """Node index of an entity key (``n_passages + column``); raises :class:`DataError` if unknown."""
        try:
            return self.n_passages + self.entity_index[key]
        except KeyError:
            raise DataError(f"unknown entity key {key!r}") from None

    def degrees(self) -> np.ndarray:
        """Node degrees (row sums of :meth:`adjacency`), shape (n_nodes,)."""
        return np.asarray(self.adjacency().sum(axis=1)).ravel()

    def subgraph(self, pids: Iterable[str]) -> EntityGraph:
        """The graph induced by some passages (a closed candidate pool), in the given order: those
        passages, the entities they mention (in this graph's order) and the alias edges among them.
        Unknown or repeated ids raise :class:`DataError`."""
        pids = list(pids)
        seen: set[str] = set()
        for pid in pids:
            if pid not in self.pid_index:
                raise DataError(f"pids: unknown passage id {pid!r}")
            if pid in seen:
                raise DataError(f"pids: duplicate passage id {pid!r}")
            seen.add(pid)
        inc = self.incidence[np.array([self.pid_index[pid] for pid in pids], dtype=np.int64)]
        cols = np.flatnonzero(np.diff(inc.tocsc().indptr))
        inc = inc[:, cols]
        alias = None if self.alias is None else self.alias[cols][:, cols]
        entities = [self.entities[j] for j in cols]
        surface = {k: self.surface[k] for k in entities if k in self.surface}
        return EntityGraph(pids=pids, entities=entities, incidence=inc, alias=alias, surface=surface)

    def to_networkx(self, pids: Iterable[str] | None = None):
        """The graph (or a query neighbourhood of it) as a :class:`networkx.Graph`.

        Parameters
        ----------
        pids : iterable of str, optional
            If given, only the :meth:`subgraph` of these passages.

        Returns
        -------
        networkx.Graph
            Nodes ``("p", pid)`` (``kind="passage"``) and ``("e", key)`` (``kind="entity"``,
            ``label`` = surface form); edges with ``kind`` ``"mention"`` or ``"alias"``, ``weight=1.0``.
        """
        import networkx as nx

        g = self if pids is None else self.subgraph(pids)
        out = nx.Graph()
        out.add_nodes_from((("p", pid), {"kind": "passage"}) for pid in g.pids)
        out.add_nodes_from(
            (("e", key), {"kind": "entity", "label": g.surface.get(key, key)}) for key in g.entities
        )
        coo = g.incidence.tocoo()
        out.add_edges_from(
            (("p", g.pids[i]), ("e", g.entities[j]), {"kind": "mention", "weight": 1.0})
            for i, j in zip(coo.row.tolist(), coo.col.tolist())
        )
        if g.alias is not None:
            coo = sp.triu(g.alias, k=1).tocoo()
            out.add_edges_from(
                (("e", g.entities[i]), ("e", g.entities[j]), {"kind": "alias", "weight": 1.0})
                for i, j in zip(coo.row.tolist(), coo.col.tolist())
            )
        return out

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``graph.npz`` (sparse structure, no pickled objects) and ``graph.json`` (ids and surface
        forms) atomically; two saves of equal graphs give byte-identical files.

        Returns
        -------
        pathlib.Path
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        for name, m in (("incidence", self.incidence), ("alias", self.alias)):
            if m is not None:
                arrays[f"{name}_indptr"] = m.indptr.astype(np.int64)
                arrays[f"{name}_indices"] = m.indices.astype(np.int64)
                arrays[f"{name}_data"] = m.data.astype(np.float64)
        with atomic_write(directory / _NPZ, "wb", encoding=None) as fh:
            np.savez_compressed(fh, **arrays)
        meta = {
            "format": _FORMAT,
            "version": _VERSION,
            "pids": self.pids,
            "entities": self.entities,
            "surface": self.surface,
            "has_alias": self.alias is not None,
        }
        write_json(directory / _JSON, meta, indent=None)
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike) -> EntityGraph:
        """Read a graph written by :meth:`save`.

        Raises
        ------
        DataNotFoundError
            ``graph.json`` or ``graph.npz`` is missing (the message names it).
        DataError
            Either file is corrupt or the two disagree (the message names the file).
        """
        directory = Path(directory)
        json_path, npz_path = directory / _JSON, directory / _NPZ
        for path in (json_path, npz_path):
            if not path.is_file():
                raise DataNotFoundError(f"{path}: graph file not found")
        meta = read_json(json_path)
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise DataError(f"{json_path}: not an aethel entity-graph file")
        if meta.get("version") != _VERSION:
            raise DataError(f"{json_path}: unsupported graph format version {meta.get('version')!r}")
        try:
            pids, entities = list(meta["pids"]), list(meta["entities"])
            surface, has_alias = dict(meta["surface"]), bool(meta["has_alias"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{json_path}: missing or malformed field ({exc})") from exc
        n_p, n_e = len(pids), len(entities)

        def matrix(z, name: str, shape: tuple[int, int]) -> sp.csr_matrix:
            try:
                data, indices, indptr = z[f"{name}_data"], z[f"{name}_indices"], z[f"{name}_indptr"]
                kinds = data.dtype.kind + indices.dtype.kind + indptr.dtype.kind
                if kinds not in ("fii", "fiu", "fui", "fuu"):  # csr_matrix would convert text or complex
                    raise ValueError(f"arrays of types {data.dtype}, {indices.dtype}, {indptr.dtype}")
                if not np.isfinite(data).all():
                    raise ValueError("weights that are not finite")
                m = sp.csr_matrix((data, indices, indptr), shape=shape)
                m.check_format(full_check=True)
            except Exception as exc:  # noqa: BLE001 - any failure here means a corrupt file
                raise DataError(f"{npz_path}: corrupt or inconsistent {name} matrix ({exc})") from exc
            return m

        if not zipfile.is_zipfile(npz_path):  # else np.load takes it for a pickle and advises unpickling it
            raise DataError(f"{npz_path}: corrupt graph arrays (not a complete .npz archive)")
        try:
            with np.load(npz_path, allow_pickle=False) as z:
                incidence = matrix(z, "incidence", (n_p, n_e))
                alias = matrix(z, "alias", (n_e, n_e)) if has_alias else None
        except DataError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise DataError(f"{npz_path}: corrupt graph arrays ({exc})") from exc
        try:
            return cls(pids=pids, entities=entities, incidence=incidence, alias=alias, surface=surface)
        except (DataError, ParameterError) as exc:
            raise DataError(f"{directory}: inconsistent graph files ({exc})") from exc


def _key_text(mention: Any) -> tuple[str, str]:
    if isinstance(mention, str):
        return mention, mention
    try:
        key, text = mention.key, mention.text
    except AttributeError:
        msg = f"mentions: expected str or an object with .key and .text, got {type(mention).__name__}"
        raise ParameterError(msg) from None
    return str(key), str(text)


def build_graph(
    pids: Sequence[str],
    mentions: Sequence[Sequence[Any]],
    *,
    stop: set[str] | None = None,
    alias_pairs: Iterable[tuple[str, str]] | None = None,
) -> EntityGraph:
    """Build the passage–entity graph from per-passage entity mentions.

    Parameters
    ----------
    pids : sequence of str
        Passage ids (unique), in node order.
    mentions : sequence of sequences
        ``mentions[i]``: passage ``pids[i]``'s mentions (``.key`` node name, ``.text`` surface form, as
        :class:`aethel_lite.core.entities.Mention`) or plain strings; repeats give one edge, empty keys are ignored.
    stop : set of str, optional
        Stop-entity keys to drop.
    alias_pairs : iterable of (str, str), optional
        Entity–entity links; pairs not joining two distinct graph entities are ignored. If ``None``, ``alias`` is
        ``None``, else a (possibly empty) symmetric matrix.

    Returns
    -------
    EntityGraph
        Entities sorted, each with its most frequent surface form (ties: the smallest); entity-less passages isolated.

    Raises
    ------
    DataError
        ``pids`` and ``mentions`` differ in length, or a pid is repeated.
    """
    pids = [str(p) for p in pids]
    if len(pids) != len(mentions):
        raise DataError(f"build_graph: {len(pids)} pids but {len(mentions)} mention lists")
    stop = set(stop or ())
    per_passage: list[set[str]] = []
    surfaces: dict[str, Counter] = {}
    for ms in mentions:
        keys: set[str] = set()
        for m in ms:
            key, text = _key_text(m)
            if not key or key in stop:
                continue
            keys.add(key)
            surfaces.setdefault(key, Counter())[text] += 1
        per_passage.append(keys)
    entities = sorted(surfaces)
    index = {k: j for j, k in enumerate(entities)}
    columns = [sorted(index[k] for k in keys) for keys in per_passage]
    indptr = np.cumsum([0] + [len(c) for c in columns], dtype=np.int64)
    indices = [j for c in columns for j in c]
    incidence = sp.csr_matrix(
        (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), indptr), shape=(len(pids), len(entities))
    )
    alias = None
    if alias_pairs is not None:
        edges = set()
        for a, b in alias_pairs:
            ia, ib = index.get(a), index.get(b)
            if ia is not None and ib is not None and ia != ib:
                edges.update(((ia, ib), (ib, ia)))
        rows, cols = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2).T
        alias = sp.csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(entities), len(entities)))
    surface = {k: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for k, c in surfaces.items()}
    return EntityGraph(pids=pids, entities=entities, incidence=incidence, alias=alias, surface=surface)
