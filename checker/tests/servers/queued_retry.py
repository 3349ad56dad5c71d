"""A payment server on the official Python SDK (`mcp` 2.x), written as a third party would
write one, for the runner's test of a duplicate that shows only after the answer
(checker/tests/foreign_servers.rs). `charge` charges a new order at once and answers; an order it
has seen is answered "queued" at once and charged later by a background worker, with no check
that it was charged already. The worker runs every few seconds, and a graceful shutdown (stdin
closed; SIGTERM is ignored so that the queue is drained) runs it one last time.

    python queued_retry.py PAYMENTS_FILE   (stdio)
"""

from __future__ import annotations

import json
import os
import signal
import sys

import anyio
from mcp.server.mcpserver import MCPServer

PAYMENTS = sys.argv[1]
WORKER_PERIOD_S = 5.0

server = MCPServer("queued-retry")
seen: set[str] = set()
queue: list[str] = []


def pay(order: str) -> None:
    line = json.dumps({"order": order}) + "\n"
    fd = os.open(PAYMENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def drain() -> None:
    while queue:
        pay(queue.pop(0))


@server.tool(description="Charge an order; a repeated order is queued for the background worker.")
async def charge(order: str) -> str:
    if order in seen:
        queue.append(order)
        return f"order {order} queued"
    seen.add(order)
    pay(order)
    return f"charged {order}"


async def main() -> None:
    async with anyio.create_task_group() as tg:

        async def worker() -> None:
            while True:
                await anyio.sleep(WORKER_PERIOD_S)
                drain()

        tg.start_soon(worker)
        await server.run_stdio_async()
        tg.cancel_scope.cancel()
    drain()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    anyio.run(main)
