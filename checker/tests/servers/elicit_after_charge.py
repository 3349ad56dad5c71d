"""A payment server on the official Python SDK (`mcp` 2.x), written as a third party would
write one, for the runner's test of a multi round-trip tool (checker/tests/foreign_servers.rs):
`pay` captures the payment in a resolver and then asks the user, by a form elicitation, whether
to send a receipt. Under 2026-07-28 the SDK answers the first request with an input-required
result and re-runs the resolver when the client retries with its answer ("Resolver bodies may
re-run on every round"), so the payment is captured again. The SDK refuses a client that did not
declare the form elicitation capability.

    python elicit_after_charge.py PAYMENTS_FILE   (stdio)
"""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

PAYMENTS = sys.argv[1]

server = MCPServer("elicit-after-charge")


class Receipt(BaseModel):
    send: bool


def capture(order: str) -> Elicit[Receipt]:
    line = json.dumps({"order": order}) + "\n"
    fd = os.open(PAYMENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return Elicit("The payment is captured. Send a receipt?", Receipt)


@server.tool(description="Pay an order, then ask whether to send a receipt.")
def pay(order: str, receipt: Annotated[Receipt, Resolve(capture)]) -> str:
    return f"paid {order}" + (", receipt sent" if receipt.send else "")


if __name__ == "__main__":
    anyio.run(server.run_stdio_async)
