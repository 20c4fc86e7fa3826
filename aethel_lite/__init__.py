"""aethel-lite: reproducible graph retrieval for multi-hop financial diligence.

Passages and the entities extracted from them form a bipartite graph; query entities seed a
Personalized PageRank that spreads relevance to passages sharing entities with them, and BCT
(bipartite coreference teleportation) widens the seeds to the entities' aliases. The layers of the
package and their import rule are in the README ("How the code is laid out").

The main names are importable from the package itself (``from aethel_lite import GraphRetriever``)
and resolved on first use (PEP 562), so ``import aethel_lite`` imports no heavy dependency.
"""

from __future__ import annotations

from .imports import lazy_names

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
    "HybridRetriever": "retrievers",
    "AnchorsRetriever": "retrievers",
    "StatementsRetriever": "retrievers",
    "MultiHopRetriever": "retrievers",
    "clone": "retrievers",
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


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
