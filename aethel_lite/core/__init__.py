"""The paper's method: the passage-entity graph, entities, BCT, document metadata, Personalized PageRank, provenance."""
