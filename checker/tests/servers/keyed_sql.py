"""A SQL server on the official Python SDK (`mcp` 2.x), written as a third party would write
one, for the key-conflict check's test (checker/tests/foreign_servers.rs): `execute` runs one
SQL statement on a SQLite file and keeps, per idempotency key, the statement and its answer.
A repeated key with the same statement gets the stored answer and runs nothing; with another
statement it is refused as a conflict. A statement SQLite cannot run is refused as a tool error,
whatever its key.

    python keyed_sql.py DATABASE   (stdio)
"""

from __future__ import annotations

import sqlite3
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

DATABASE = sys.argv[1]

server = MCPServer("keyed-sql")
answers: dict[str, tuple[str, CallToolResult]] = {}


def refused(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@server.tool(description="Execute one SQL statement, at most once per idempotency key.")
def execute(sql: str, idempotency_key: str) -> CallToolResult:
    if idempotency_key in answers:
        statement, answer = answers[idempotency_key]
        if statement != sql:
            return refused("idempotency key reused with another statement")
        return answer
    con = sqlite3.connect(DATABASE)
    try:
        with con:
            cur = con.execute(sql)
    except sqlite3.Error as e:
        return refused(f"SQL error: {e}")
    finally:
        con.close()
    answer = CallToolResult(content=[TextContent(type="text", text=f"{cur.rowcount} row(s)")])
    answers[idempotency_key] = (sql, answer)
    return answer


if __name__ == "__main__":
    con = sqlite3.connect(DATABASE)
    con.execute("CREATE TABLE IF NOT EXISTS payments (note TEXT)")
    con.commit()
    con.close()
    anyio.run(server.run_stdio_async)
