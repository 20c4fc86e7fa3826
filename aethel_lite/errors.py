"""Exceptions raised by aethel-lite. Every message names the file, line or parameter at fault."""

from __future__ import annotations

import numbers


class AethelError(Exception):
    """Base class of every error aethel-lite raises on purpose."""


class DataError(AethelError, ValueError):
    """Input data is missing, malformed or empty."""


class DataNotFoundError(DataError, FileNotFoundError):
    """A data file or data set is not where it was looked for."""


class DataConfigError(DataError):
    """The configured data folder (``$AETHEL_DATA``, or ``./data``) lacks the data set asked for. Not a
    :class:`DataNotFoundError`: callers that fall back to the synthetic corpus must never catch it."""


class ParameterError(AethelError, ValueError):
    """A parameter is outside its valid range (the message names it)."""


class ConvergenceError(AethelError, RuntimeError):
    """An iterative method did not reach its tolerance within ``max_iter`` iterations."""


def check_k(k: object, flag: str = "k") -> int:
    """``k`` as an ``int`` when it is an integer ≥ 1, else a :class:`ParameterError`.

    Parameters
    ----------
    k : object
        A cut-off (passages per question, metric depth); numpy integers pass, a ``bool`` does not.
    flag : str
        The parameter or option named in the message (``"k"``, ``"--k"``, ``"-k"``).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ParameterError(f"{flag} must be a positive integer (≥ 1), got {k!r}")
    return int(k)
