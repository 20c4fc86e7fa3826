"""spaCy NER of a few texts in another process, begun before their entities are needed.

``aethel search`` needs its questions' entities only once the index is open, but importing spaCy and
loading its pipeline take about 0.9 s of one core. Begun in a second process when the command starts
(:func:`warm_up`), they run on the other core while this one imports the package and opens the index,
its embeddings and the question encoder; the questions are handed to that process when the index
knows its extractor (:func:`start`), and its mentions are read when the first is asked for.

The other process runs the same extractor (:class:`~aethel_lite.core.ner.SpacyNerExtractor`, same
``exclude`` and ``max_chars``) on the same installed spaCy and model, and sends its mentions back as
JSON (strings and integers, so exactly): the entities are the ones tagging in this process would
give. An extractor takes them only for the very texts and settings given here
(:func:`~aethel_lite.core.ner.tag_elsewhere`); if the other process fails for any reason, the texts
are tagged in this process as before. A process warmed up but given no texts is ended when
:func:`start` finds it unused, or at exit.

Run as ``python -S -m aethel_lite.core.ner_process [SETTINGS]`` (started by
:mod:`~aethel_lite.core.ner_start`): loads the pipeline of the JSON ``{"exclude", "max_chars"}`` (none:
the defaults), then reads the texts (a JSON list) on standard input and writes one list of ``[text, key,
label, start, end]`` per text on standard output.
"""

from __future__ import annotations

import atexit
import json
import signal
import subprocess
import sys
from collections.abc import Sequence

from .mentions import Mention
from .ner import Ner3Extractor, SpacyNerExtractor, import_spacy, tag_elsewhere
from .ner_start import spawn

__all__ = ["MAX_TEXTS", "warm_up", "start", "end_unused", "main"]

#: At most this many texts are sent (a long file of questions is tagged here after them, so its first
#: answer does not wait for all of them).
MAX_TEXTS = 32
#: Seconds to wait for the other process before tagging here instead.
TIMEOUT = 120.0
#: processes begun by :func:`warm_up` and not yet given texts, by their settings
_WARM: dict[tuple, subprocess.Popen] = {}


class _Tagging:
    """The other process tagging ``texts``; :meth:`result` waits for its mentions (None: it failed)."""

    def __init__(self, texts: list[str], process: subprocess.Popen) -> None:
        self.texts = texts  # sent when the mentions are asked for (the process loads spaCy meanwhile)
        self.process = process
        self._result: list[list[Mention]] | None = None

    def result(self) -> list[list[Mention]] | None:
        if self._result is None and self.process.returncode is None:
            self._result = self._wait()
        return self._result

    def _wait(self) -> list[list[Mention]] | None:
        try:
            out, _ = self.process.communicate(json.dumps(self.texts).encode(), timeout=TIMEOUT)
            if self.process.returncode != 0:
                return None
            rows = json.loads(out)
            if not (isinstance(rows, list) and len(rows) == len(self.texts)):
                return None
            return [[Mention(*m) for m in ms] for ms in rows]
        except (subprocess.TimeoutExpired, OSError, ValueError, TypeError):
            _end(self.process)
            return None


def _spawn(settings: tuple) -> subprocess.Popen | None:
    """The other process, loading the pipeline of ``settings`` (None if it cannot be started)."""
    exclude, max_chars = settings
    return spawn({"exclude": list(exclude), "max_chars": max_chars})


def _end(process: subprocess.Popen) -> None:
    process.kill()
    process.communicate()


def warm_up(extractor=None, process: subprocess.Popen | None = None) -> bool:
    """Begin loading ``extractor``'s spaCy NER (default: :class:`~aethel_lite.core.ner.SpacyNerExtractor`'s
    defaults, what ``ner`` and ``ner3`` use) in another process, before any text is known; return
    whether a process was begun. :func:`start` gives it texts; unused, it is ended at exit.

    ``process``: one already begun for the default settings (:func:`~aethel_lite.core.ner_start.spawn`
    with no settings, as :mod:`aethel_lite.cli` starts it before its imports), kept instead of a new one.
    """
    ner = SpacyNerExtractor() if extractor is None else _ner(extractor)
    if process is not None and (extractor is not None or ner.settings in _WARM):
        _end(process)  # not the default settings' process, or one of them is kept already
        return False
    if ner is None or ner.settings in _WARM:
        return False
    process = process or _spawn(ner.settings)
    if process is None:
        return False
    if not _WARM:
        atexit.register(end_unused)
    _WARM[ner.settings] = process
    return True


def _ner(extractor) -> SpacyNerExtractor | None:
    ner = extractor.ner if isinstance(extractor, Ner3Extractor) else extractor
    return ner if isinstance(ner, SpacyNerExtractor) else None


def start(extractor, texts: Sequence[str]) -> bool:
    """Have ``texts`` (the first :data:`MAX_TEXTS`) tagged by ``extractor``'s spaCy NER in another
    process (the one :func:`warm_up` began for its settings, or a new one); return whether they were
    handed to one.

    ``extractor`` is a :class:`~aethel_lite.core.ner.SpacyNerExtractor` or a
    :class:`~aethel_lite.core.ner.Ner3Extractor` (whose NER is sent; its filter runs here); for any
    other extractor, or texts a process already tags with these settings, nothing happens. The
    extractor of the same settings takes the mentions when it is asked for these texts.
    """
    ner = _ner(extractor)
    texts = list(dict.fromkeys(t for t in texts if isinstance(t, str)))[:MAX_TEXTS]
    if ner is None or not texts:
        return False

    def begin() -> _Tagging | None:
        process = _WARM.pop(ner.settings, None) or _spawn(ner.settings)
        return None if process is None else _Tagging(texts, process)

    return tag_elsewhere(ner, texts, begin)


def end_unused() -> None:
    """End the processes :func:`warm_up` began that were given no texts."""
    while _WARM:
        _end(_WARM.popitem()[1])


def main(argv: Sequence[str] | None = None) -> int:
    """The other process: load the pipeline of the settings on the command line (none: the defaults),
    then tag the texts that come on standard input."""
    # the terminal's Ctrl-C reaches this process too: the search that started it says what happened
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    args = sys.argv[1:] if argv is None else list(argv)
    import_spacy()
    ner = SpacyNerExtractor()
    if args:
        settings = json.loads(args[0])
        ner = SpacyNerExtractor(max_chars=settings["max_chars"])
        ner.exclude = tuple(settings["exclude"])
    ner.nlp  # noqa: B018 - loaded before the texts are asked for
    mentions = ner.extract(json.loads(sys.stdin.buffer.read()), progress=False)
    sys.stdout.write(json.dumps([[[m.text, m.key, m.label, m.start, m.end] for m in ms] for ms in mentions]))
    return 0


if __name__ == "__main__":  # pragma: no cover - run in the other process
    sys.exit(main())
