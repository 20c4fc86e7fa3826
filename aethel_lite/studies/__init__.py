"""The book's studies: open corpus, scaling, anchoring, error analysis, teaching, the hybrid's tuning and study."""
