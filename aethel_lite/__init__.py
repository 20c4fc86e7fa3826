"""aethel-lite: reproducible graph retrieval for multi-hop financial diligence.

Documents are split into passages, entities are extracted, and passages and entities form
an undirected bipartite graph. Query entities seed a personalization vector and Personalized
PageRank spreads relevance to passages that share entities with them; BCT (bipartite
coreference teleportation) widens the seeds to aliases of the query entities.

Importing the package is cheap: heavy dependencies (torch, spaCy, sentence-transformers)
are imported only inside the functions that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
