"""The optional bearer token, checked the same way on OTLP/HTTP and OTLP/gRPC."""

from __future__ import annotations

import hmac

TOKEN_ENV = "TRACEREPLAY_TOKEN"


class TokenCheck:
    """Accepts ``Authorization: Bearer <token>`` when a token is set, anything when none is."""

    def __init__(self, token: str | None) -> None:
        self._expected = token.encode() if token else None

    @property
    def enabled(self) -> bool:
        return self._expected is not None

    def allows(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header (or gRPC ``authorization`` metadata) value passes."""
        if self._expected is None:
            return True
        if not authorization:
            return False
        scheme, _, credential = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(credential.strip().encode(), self._expected)
