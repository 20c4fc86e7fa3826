r"""Development / test halves of each data set's questions, fixed by a seeded hash and kept in a manifest.

Every weight of a tuned method (:mod:`aethel_lite.studies.tuning`) is chosen on the *development* half;
results are reported on the *test* half and on all questions. The halves are

.. math::

    \mathrm{dev} = \text{the first } \lfloor n/2 \rfloor \text{ questions ordered by }
    \mathrm{SHA256}(\text{``}seed\text{:}qid\text{''}), \qquad \mathrm{test} = \text{the rest},

with :data:`SPLIT_SEED` = 0 (no question's content takes part). The halves of the project's data
sets are kept in ``aethel_lite/manifests/dev_test_split.json`` (:func:`write_manifest`, :func:`split`),
so no later change can move a question from one half to the other unnoticed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import DataError, ParameterError
from ..io import read_json, write_json

__all__ = ["SPLIT_SEED", "MANIFEST", "split_name", "rule_split", "split", "load_manifest", "write_manifest"]

SPLIT_SEED = 0
MANIFEST = Path(__file__).resolve().parent.parent / "manifests" / "dev_test_split.json"

#: data set names → the manifest entry holding their questions (the same questions are asked)
_ALIASES = {
    "financebench-4123": "financebench",
    "financebench-chunk": "financebench",
    "financebench-own": "financebench",
    "musique-open": "musique",
    "2wiki-open": "2wiki",
}


def split_name(dataset: str) -> str:
    """The manifest entry of a data set name (``"musique-open"`` → ``"musique"``)."""
    return _ALIASES.get(dataset, dataset)


def _key(qid: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()


def rule_split(qids: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, list[str]]:
    """Split question ids by the seeded hash rule (module docstring).

    Returns
    -------
    dict
        ``{"dev": [...], "test": [...]}``, each in the order of ``qids``.

    Raises
    ------
    DataError
        A question id repeats.
    """
    qids = [str(q) for q in qids]
    if len(set(qids)) != len(qids):
        raise DataError("rule_split: question ids must be unique")
    ranked = sorted(qids, key=lambda q: (_key(q, seed), q))
    dev = set(ranked[: len(qids) // 2])
    return {"dev": [q for q in qids if q in dev], "test": [q for q in qids if q not in dev]}


def load_manifest(path: str | os.PathLike | None = None) -> dict:
    """The manifest (``{"seed", "rule", "datasets": {name: {"dev": [...], "test": [...]}}}``); empty without a file."""
    path = Path(path) if path is not None else MANIFEST
    if not path.exists():
        return {"seed": SPLIT_SEED, "datasets": {}}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict):
        raise DataError(f"{path}: not a dev/test split manifest")
    return data


def split(
    dataset: str, qids: Iterable[str], *, manifest: Mapping | str | os.PathLike | None = None
) -> dict[str, list[str]]:
    """The development and test questions of ``dataset`` among ``qids``.

    Parameters
    ----------
    dataset : str
        A data set name (open-corpus names map to their manifest entry, :func:`split_name`).
    qids : iterable of str
        The questions at hand (all, or a subset such as quick mode's first 12).
    manifest : mapping or path, optional
        Default: the packaged manifest.

    Returns
    -------
    dict
        ``{"dev": [...], "test": [...]}`` in the order of ``qids``. With a manifest entry, a
        question is in the half the manifest lists it in; questions the entry does not list (and
        every question of an unknown data set) are split by :func:`rule_split` among themselves.
    """
    qids = [str(q) for q in qids]
    data = manifest if isinstance(manifest, Mapping) else load_manifest(manifest)
    entry = data.get("datasets", {}).get(split_name(dataset))
    if entry is None:
        return rule_split(qids, int(data.get("seed", SPLIT_SEED)))
    dev, test = set(entry["dev"]), set(entry["test"])
    rest = rule_split([q for q in qids if q not in dev and q not in test], int(data.get("seed", SPLIT_SEED)))
    rest_dev = set(rest["dev"])
    return {
        "dev": [q for q in qids if q in dev or q in rest_dev],
        "test": [q for q in qids if q in test or (q not in dev and q not in rest_dev)],
    }


def write_manifest(
    question_ids: Mapping[str, Sequence[str]],
    path: str | os.PathLike | None = None,
    *,
    seed: int = SPLIT_SEED,
) -> Path:
    """Write the split of every data set (name → all its question ids) atomically; returns the path."""
    if not question_ids:
        raise ParameterError("write_manifest: no data set given")
    path = Path(path) if path is not None else MANIFEST
    data = {
        "seed": seed,
        "rule": "dev = the first floor(n/2) question ids ordered by sha256('<seed>:<qid>'); test = the rest",
        "datasets": {
            name: {"n": len(qids), **rule_split(qids, seed)} for name, qids in sorted(question_ids.items())
        },
    }
    write_json(path, data)
    return path
