"""Process-wide memos of cheap-but-repeated pure functions of a text (tokenising, windowing, decoding
stored entities), for studies that fit the same passages many times. A :class:`TextMemo` maps
``(settings, text)`` to a value, ``settings`` naming everything besides the text that changes it; the
values must be immutable (every caller shares them). Retrievers use the memos only inside
:func:`shared` (an evaluation or a study that fits the same passages again); results are the same either way::

    with memo.shared():
        run = retriever.fit(passages).search(queries)
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["TextMemo", "shared", "is_shared"]

_SHARED = contextvars.ContextVar("aethel_memo_shared", default=False)


@contextlib.contextmanager
def shared(on: bool = True) -> Iterator[None]:
    """Inside the block, retrievers keep per-text work (question mentions, BM25 tokens, question embeddings,
    decoded entities) in the process-wide memos, or with ``on=False`` do not (a timed search pays for its own)."""
    token = _SHARED.set(bool(on))
    try:
        yield
    finally:
        _SHARED.reset(token)


def is_shared() -> bool:
    """Whether the memos are in use here (:func:`shared`)."""
    return _SHARED.get()


class TextMemo:
    """A bounded dict ``(settings, text) -> value`` filled in batches.

    Parameters
    ----------
    name : str
        For messages.
    max_items : int
        The memo is emptied before an insertion would make it larger than this (a bound on memory).
    """

    def __init__(self, name: str, max_items: int = 200_000) -> None:
        self.name = name
        self.max_items = int(max_items)
        self._values: dict[tuple[str, str], Any] = {}

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        self._values.clear()

    def map(
        self, settings: str, texts: Sequence[str], compute: Callable[[list[str]], Sequence[Any]]
    ) -> list[Any]:
        """``[f(settings, t) for t in texts]``, calling ``compute(todo)`` once on the distinct texts not
        memoised (it returns one value per text of ``todo``, in order)."""
        texts = list(texts)
        values = self._values
        hits = {t: values[(settings, t)] for t in texts if (settings, t) in values}
        todo = list(dict.fromkeys(t for t in texts if t not in hits))
        if todo:
            new = list(compute(todo))
            if len(new) != len(todo):
                raise RuntimeError(
                    f"{self.name} memo: compute returned {len(new)} values for {len(todo)} texts"
                )
            hits.update(zip(todo, new))
            if len(values) + len(todo) > self.max_items:
                values.clear()
            if len(todo) <= self.max_items:
                values.update(((settings, t), v) for t, v in zip(todo, new))
        return [hits[t] for t in texts]
