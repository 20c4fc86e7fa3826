"""Caching beside the bottom: where caches live, the per-passage store, in-process memos, the result cache, versions."""
