"""aethel-lite: reproducible graph retrieval for multi-hop financial diligence.

Passages and the entities extracted from them form a bipartite graph; query entities seed a
Personalized PageRank that spreads relevance to passages sharing entities with them, and BCT
(bipartite coreference teleportation) widens the seeds to the entities' aliases. The layers of the
package and their import rule are in the README ("How the code is laid out").

The main names are importable from the package itself (``from aethel_lite import GraphRetriever``)
and resolved on first use (PEP 562), so ``import aethel_lite`` imports no heavy dependency. Module
paths from before the layers (``aethel_lite.ppr``, ...) still import: :data:`MOVED` maps them.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__version__ = "0.1.0"

# name -> submodule that defines it (imported on first access)
_LAZY = {
    # data
    "Dataset": "data.schema",
    "Passage": "data.schema",
    "Query": "data.schema",
    "load_musique": "data.loaders",
    "load_2wiki": "data.loaders",
    "load_financebench": "data.loaders",
    "load_dataset": "data.loaders",
    "available_datasets": "data.loaders",
    "make_synthetic": "data.synthetic",
    "alias_table": "data.synthetic",
    "sample_corpus": "data.sampling",  # (open_corpus is also a submodule: import it from data.sampling)
    # graph, PageRank, BCT, provenance
    "EntityGraph": "core.graph",
    "build_graph": "core.graph",
    "personalized_pagerank": "core.ppr",
    "PPROperator": "core.ppr",
    "forward_push": "core.ppr",
    "BCTWeights": "core.bct",
    "Expansion": "core.bct",
    "expand_seeds": "core.bct",
    "seed_vector": "core.bct",
    "SeedShare": "core.provenance",
    "seed_contributions": "core.provenance",
    "ppr_parts": "core.provenance",
    # entities
    "normalize_entity": "core.entities",
    "get_extractor": "core.entities",
    "extract_entities": "core.entities",
    "RegexExtractor": "core.entities",
    "SpacyNerExtractor": "core.entities",
    "Ner3Extractor": "core.entities",
    # retrievers and runs
    "Retriever": "retrievers",
    "BM25Retriever": "retrievers",
    "DenseRetriever": "retrievers",
    "GraphRetriever": "retrievers",
    "Run": "retrievers",
    "rrf": "retrievers",
    # evaluation
    "evaluate": "evaluation.metrics",
    "per_query": "evaluation.metrics",
    "bootstrap_ci": "evaluation.stats",
    "paired_bootstrap": "evaluation.stats",
    "make_retriever": "retrievers.registry",
    "load_or_synthetic": "data.select",
    "write_json": "io",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


#: module paths from before the layers -> their new homes (a split module's parts, re-exported)
MOVED: dict[str, str | tuple[str, ...]] = {
    "cache": "caching.locations",
    "store": "caching.store",
    "memo": "caching.memo",
    "resultcache": "caching.resultcache",
    "graph": "core.graph",
    "entities": "core.entities",
    "bct": "core.bct",
    "docmeta": "retrievers.docmeta",
    "ppr": "core.ppr",
    "ppr_kernels": "core.ppr_kernels",
    "provenance": ("core.provenance", "retrievers.reach"),
    "metrics": "evaluation.metrics",
    "stats": "evaluation.stats",
    "splits": "evaluation.splits",
    "index": "search.index",
    "open_corpus": "studies.open_corpus",
    "scaling": "studies.scaling",
    "anchoring": "studies.anchoring",
    "analysis": "studies.analysis",
    "teaching": "studies.teaching",
    "paper": "studies.paper",
    "notebooks": "book.notebooks",
    "report": "book.report",
    "repro": "book.repro",
    "claims": "book.claims",
    "bookcheck": "book.bookcheck",
    "sphinxext": "book.sphinxext",
    "experiment": ("retrievers.registry", "evaluation.runner", "data.select", "caching.versions"),
    "hybrid": ("retrievers.hybrid_settings", "studies.tuning", "studies.beyond"),
}


class _MovedModules:
    """Import hook that serves :data:`MOVED`: the old path yields the new module itself (``aethel_lite.ppr
    is aethel_lite.core.ppr``) or, for a split module, a module of re-exported names. A meta path finder
    and loader by its methods (PEP 451), without the ``importlib.abc`` bases: importing that module
    (about 60 ms, for ``importlib.resources``) would delay the ``aethel`` command's signal handler."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(__name__ + ".") or fullname.partition(__name__ + ".")[2] not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    @staticmethod
    def _new(fullname: str) -> str | tuple[str, ...]:
        return MOVED[fullname.partition(__name__ + ".")[2]]

    def create_module(self, spec):
        new = self._new(spec.name)
        if isinstance(new, str):
            module = importlib.import_module(f"{__name__}.{new}")
            self._specs[id(module)] = module.__spec__
            return module
        module = types.ModuleType(spec.name, f"Moved: the names of {', '.join(new)}.")
        for part in new:
            real = importlib.import_module(f"{__name__}.{part}")
            module.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
        return module

    def exec_module(self, module):
        if id(module) in self._specs:  # importlib gave the module the old name's spec: give its own back
            module.__spec__ = self._specs.pop(id(module))

    def get_code(self, fullname):  # ``python -m aethel_lite.notebooks`` runs aethel_lite.book.notebooks
        new = self._new(fullname)
        target = f"{__name__}.{new if isinstance(new, str) else new[-1]}"
        return compile(
            f"import runpy\nrunpy.run_module({target!r}, run_name='__main__', alter_sys=True)\n",
            f"<{fullname}>",
            "exec",
        )

    def __init__(self):
        self._specs: dict[int, object] = {}


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())
