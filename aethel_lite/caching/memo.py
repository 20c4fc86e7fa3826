r"""Process-wide memos of pure functions of a text, for studies that fit the same passages many times.

The scaling chapter fits every method on 7 sizes × 3 seeds of each corpus, and the open-corpus
chapter fits several methods on one corpus: the same page is tokenised for BM25, cut into
windows for dense max-pooling, and has its stored entities decoded, once per fit. The on-disk
stores (:mod:`aethel_lite.caching.store`) save the expensive models' work across runs; a
:class:`TextMemo` saves the cheap-but-repeated work within one process.

A memo maps ``(settings, text)`` to a value, where ``settings`` is a string naming everything
besides the text that changes the value (a tokenizer's configuration, a window size, a store's
fingerprint). The function must be pure in those two, and its values immutable (tuples, frozen
dataclasses, read-only arrays): every caller shares them. Memos are bounded — when one would
exceed ``max_items`` it is emptied first — so a long session holds at most that many values.

Retrievers use them only when their ``memo`` option is set (:func:`aethel_lite.evaluation.runner.run_methods`
sets it); ``aethel index``/``aethel search`` and latency measurements leave it off, so they pay
for — and time — their own work. Results are the same either way (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["TextMemo"]


class TextMemo:
    """A bounded dict ``(settings, text) -> value`` filled in batches.

    Parameters
    ----------
    name : str
        For messages.
    max_items : int
        The memo is emptied before an insertion would make it larger than this.
    """

    def __init__(self, name: str, max_items: int = 200_000) -> None:
        self.name = name
        self.max_items = int(max_items)
        self._values: dict[tuple[str, str], Any] = {}

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        self._values.clear()

    def map(self, settings: str, texts: Sequence[str], compute: Callable[[list[str]], Sequence[Any]]) -> list[Any]:
        """``[f(settings, t) for t in texts]``, calling ``compute`` once on the distinct texts not memoised.

        ``compute(todo)`` must return one value per text of ``todo``, in order.
        """
        texts = list(texts)
        values = self._values
        hits = {t: values[(settings, t)] for t in texts if (settings, t) in values}
        todo = list(dict.fromkeys(t for t in texts if t not in hits))
        if todo:
            new = list(compute(todo))
            if len(new) != len(todo):
                raise RuntimeError(f"{self.name} memo: compute returned {len(new)} values for {len(todo)} texts")
            hits.update(zip(todo, new))
            if len(values) + len(todo) > self.max_items:
                values.clear()
            if len(todo) <= self.max_items:
                values.update(((settings, t), v) for t, v in zip(todo, new))
        return [hits[t] for t in texts]
