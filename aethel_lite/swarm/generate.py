"""An optional text generator that rewrites the memo's summary prose from the findings.

A generator (``TextGenerator``) is anything with ``generate(prompt, *, system) -> str`` that raises
:class:`GeneratorError` when it cannot produce one; without one the summary comes from templates.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

from ..errors import AethelError, ParameterError

__all__ = ["GeneratorError", "OpenAICompatibleGenerator", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "You write the summary paragraph of an investment-committee memo. Use only the findings given. "
    "Copy every figure exactly as written in the findings, in bold, followed by its reference, e.g. "
    "**1.62x** [A4]. Do not compute, round or restate any other number. No headings, no lists."
)


class GeneratorError(AethelError):
    """The text generator failed: unreachable, too slow, an error status, or a malformed reply."""


class OpenAICompatibleGenerator:
    """Client of an OpenAI-compatible chat-completions endpoint.

    Parameters
    ----------
    url : str
        Base URL ending before ``/chat/completions`` (e.g. ``http://127.0.0.1:8000/v1``), or the endpoint's.
    model : str
        Model name sent in the request.
    timeout : float
        Seconds to wait for the reply.
    api_key : str, optional
        Sent as ``Authorization: Bearer <key>`` when given.
    max_tokens : int
    temperature : float
    """

    def __init__(
        self,
        url: str,
        *,
        model: str = "default",
        timeout: float = 30.0,
        api_key: str | None = None,
        max_tokens: int = 600,
        temperature: float = 0.0,
    ):
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ParameterError(f"generator url must start with http:// or https://, got {url!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ParameterError(f"generator timeout must be > 0 seconds, got {timeout!r}")
        base = url.rstrip("/")
        self.endpoint = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model
        self.timeout = float(timeout)
        self.api_key = api_key
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)

    def __repr__(self) -> str:
        return f"OpenAICompatibleGenerator({self.endpoint!r}, model={self.model!r}, timeout={self.timeout})"

    def generate(self, prompt: str, *, system: str = SYSTEM_PROMPT) -> str:
        """The assistant message's text for ``prompt``.

        Raises
        ------
        GeneratorError
            Connection refused, no reply within ``timeout``, an HTTP error status, or a reply
            without ``choices[0].message.content`` as a non-empty string (named in the message).
        """
        body = json.dumps(
            {
                "model": self.model,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            }
        )
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.endpoint, data=body.encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - URL given by the user
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise GeneratorError(f"text generator {self.endpoint}: HTTP {exc.code} {exc.reason}") from None
        except TimeoutError:
            raise GeneratorError(
                f"text generator {self.endpoint}: no reply within {self.timeout:g} s"
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise GeneratorError(
                    f"text generator {self.endpoint}: no reply within {self.timeout:g} s"
                ) from None
            raise GeneratorError(f"text generator {self.endpoint}: unreachable ({exc.reason})") from None
        except (ConnectionError, OSError) as exc:
            raise GeneratorError(f"text generator {self.endpoint}: connection failed ({exc})") from None
        try:
            reply = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise GeneratorError(
                f"text generator {self.endpoint}: the reply is not JSON (first bytes: {raw[:60]!r})"
            ) from None
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise GeneratorError(
                f"text generator {self.endpoint}: malformed reply, no choices[0].message.content"
            ) from None
        if not isinstance(content, str) or not content.strip():
            raise GeneratorError(f"text generator {self.endpoint}: empty reply")
        return content.strip()
