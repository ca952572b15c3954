"""The check on every sidecar call: the shared secret (`crmmem_runtime.shared_secret`, which
both processes read) compared in constant time. Only the memory service of the same pod may
call the sidecar: whoever else can reach the port (another process in the pod, another local
user under `make run`) could otherwise read any tenant's ids, rewrite or wipe its index. Health
checks and reflection stay open for probes.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from crmmem_runtime.shared_secret import METADATA_KEY

OPEN_SERVICES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class SharedSecretInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """UNAUTHENTICATED for every call without the secret, except health and reflection."""

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()

        async def refuse(_request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED, "the retrieval sidecar needs its shared secret"
            )

        self._refusal = grpc.unary_unary_rpc_method_handler(refuse)

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = handler_call_details.method or ""
        if method.startswith(OPEN_SERVICES) or self.admits(
            handler_call_details.invocation_metadata
        ):
            return await continuation(handler_call_details)
        return self._refusal

    def admits(self, metadata: Any) -> bool:
        sent = b""
        for key, value in metadata or ():
            if key == METADATA_KEY:
                sent = value.encode() if isinstance(value, str) else bytes(value)
                break
        return hmac.compare_digest(sent, self._secret)
