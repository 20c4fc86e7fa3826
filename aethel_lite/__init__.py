"""aethel-lite: reproducible graph retrieval for multi-hop financial diligence.

Documents are split into passages, entities are extracted, and passages and entities form
an undirected bipartite graph. Query entities seed a personalization vector and Personalized
PageRank spreads relevance to passages that share entities with them; BCT (bipartite
coreference teleportation) widens the seeds to aliases of the query entities.

The main names can be imported from the package itself, e.g.
``from aethel_lite import GraphRetriever, personalized_pagerank, load_musique``. They are
resolved on first use (PEP 562 ``__getattr__``), so ``import aethel_lite`` stays cheap: numpy,
scipy and the heavy dependencies (torch, spaCy, sentence-transformers) are imported only when a
name that needs them is first used.
"""

from __future__ import annotations

__version__ = "0.1.0"

# name -> submodule that defines it (imported on first access)
_LAZY = {
    # data
    "Dataset": "data.schema", "Passage": "data.schema", "Query": "data.schema",
    "load_musique": "data.loaders", "load_2wiki": "data.loaders", "load_financebench": "data.loaders",
    "load_dataset": "data.loaders", "available_datasets": "data.loaders",
    "make_synthetic": "data.synthetic", "alias_table": "data.synthetic",
    "sample_corpus": "data.sampling",  # (open_corpus is also a submodule: import it from data.sampling)
    # graph, PageRank, BCT, provenance
    "EntityGraph": "graph", "build_graph": "graph",
    "personalized_pagerank": "ppr", "PPROperator": "ppr", "forward_push": "ppr",
    "BCTWeights": "bct", "Expansion": "bct", "expand_seeds": "bct", "seed_vector": "bct",
    "SeedShare": "provenance", "seed_contributions": "provenance", "ppr_parts": "provenance",
    # entities
    "normalize_entity": "entities", "get_extractor": "entities", "extract_entities": "entities",
    "RegexExtractor": "entities", "SpacyNerExtractor": "entities", "Ner3Extractor": "entities",
    # retrievers and runs
    "Retriever": "retrievers", "BM25Retriever": "retrievers", "DenseRetriever": "retrievers",
    "GraphRetriever": "retrievers", "Run": "retrievers", "rrf": "retrievers",
    # evaluation
    "evaluate": "metrics", "per_query": "metrics",
    "bootstrap_ci": "stats", "paired_bootstrap": "stats",
    "make_retriever": "experiment", "load_or_synthetic": "experiment",
    "write_json": "io",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
