"""A payment server on the official Python SDK (`mcp` 2.x), written as a third party would
write one, for the tests of verdicts from what was observed (checker/tests/foreign_servers.rs).
It has none of the ledger fixtures' conventions: no delay arguments, no log line naming what its
handler did, no key file beside its payments file.

`pay` appends the payment to a JSON-lines file (fsynced), awaits the payment provider's
confirmation, and only then records the idempotency key, in memory. The SDK cancels a handler
whose `notifications/cancelled` arrives, so a cancellation during that await leaves the key
unrecorded, and a retry with the same key pays again.

    python pay_after_effect.py PAYMENTS_FILE [CONFIRM_SECONDS]   (stdio)
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer

PAYMENTS = sys.argv[1]
CONFIRM_SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0

server = MCPServer("pay-after-effect")
paid: dict[str, str] = {}


@server.tool(description="Pay an order; a repeated idempotency key gets the first payment's answer.")
async def pay(order: str, idempotency_key: str) -> str:
    if idempotency_key in paid:
        return paid[idempotency_key]
    line = json.dumps({"order": order, "idempotency_key": idempotency_key}) + "\n"
    fd = os.open(PAYMENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    await anyio.sleep(CONFIRM_SECONDS)  # the provider confirms the payment
    paid[idempotency_key] = f"paid {order}"
    return paid[idempotency_key]


if __name__ == "__main__":
    anyio.run(server.run_stdio_async)
