"""The paper's method: the passage-entity graph, entities, BCT, Personalized PageRank, provenance."""
