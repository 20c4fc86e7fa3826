"""Exceptions raised by aethel-lite. Every message names the file, line or parameter at fault."""

from __future__ import annotations


class AethelError(Exception):
    """Base class of every error aethel-lite raises on purpose."""


class DataError(AethelError, ValueError):
    """Input data is missing, malformed or empty."""


class DataNotFoundError(DataError, FileNotFoundError):
    """A data file or data set is not where it was looked for."""


class DataConfigError(DataError):
    """The configured data folder (``$AETHEL_DATA``, or ``./data`` when it exists) is missing or does
    not hold the data set asked for. Deliberately *not* a :class:`DataNotFoundError`: callers that
    fall back to the synthetic corpus when no data is configured must never catch it."""


class ParameterError(AethelError, ValueError):
    """A parameter is outside its valid range (the message names it)."""


class ConvergenceError(AethelError, RuntimeError):
    """An iterative method did not reach its tolerance within ``max_iter`` iterations."""
