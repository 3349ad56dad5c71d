#!/usr/bin/env python3
"""A deliberately broken MCP server for the runner's robustness tests.

Each --fault misbehaves in exactly one way; everything else is a plain MCP server over stdio
(or, with --port, Streamable HTTP answering JSON) with one tool, `charge`. Standard library only.
It speaks 2025-11-25 (`initialize`), or with --revision 2026-07-28 also `server/discover`, and
then over HTTP answers 400 to a request without the SEP-2243 `Mcp-Method` header.

no fault
  none                 a well-behaved server: tools/call writes a ledger line and answers

stdio faults
  exit-at-start        exit 3 before reading anything
  silent-initialize    read requests, never answer any (not even initialize)
  garbage-initialize   answer initialize with a non-JSON line, then stay silent
  banner               write two non-JSON lines to stdout at start (a banner and a log line),
                       then behave as `none` (the official clients skip them)
  silent-call          answer the handshake and tools/list, never answer tools/call
  wrong-id             answer tools/call with an id the client never sent
  duplicate-id         answer tools/call twice with the same id (one write)
  garbage              answer tools/call with a non-JSON line, then stay silent
  partial-frame        answer tools/call with half a frame (no newline), then exit 0
  fork-holds-stdout    start a child in a session of its own (outside the server's process
                       group) that holds stdout open for 10 minutes (its pid in STATE.child),
                       then behave as `none`
  trickle-call         write the ledger line, then answer tools/call one byte a second
  flood-no-newline     answer tools/call with 20 MB without a newline, then stay silent
  flood-lines          answer tools/call with 40 MB of valid-looking notifications, never answer
  close-stdout         close stdout on tools/call, stay alive reading stdin
  ignore-sigterm       ignore SIGTERM (and stay after stdin closes); never answer tools/call
  hang-on-restart      write one ledger line on tools/call and never answer it; a second start
                       (counted in --state) never answers initialize
handshake faults (either transport)
  discover-old-only    server/discover lists 2025-11-25 only
HTTP faults (--port)
  http-500             every POST answers 500
  http-reset           tools/call: the connection is reset (RST) after the request is read
  http-sse-forever     tools/call: an SSE stream of keep-alive comments that never carries the
                       response
  http-fork-holds-stdout  as fork-holds-stdout, over HTTP
"""

import argparse
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REVISION = "2025-11-25"

TOOL = {
    "name": "charge",
    "description": "charge an amount (a broken server: see --fault)",
    "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}},
}


FAULT = None


def answer(req):
    """The normal answer to a request, or None for a notification."""
    if "id" not in req or "method" not in req:
        return None
    method = req["method"]
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehaving", "version": "0"},
        }
    elif method == "server/discover" and REVISION >= "2026-07-28":
        result = {
            "supportedVersions": ["2025-11-25"] if FAULT == "discover-old-only" else [REVISION],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehaving", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": req["id"], "result": result}


def charged(req):
    return {"jsonrpc": "2.0", "id": req["id"], "result": {"content": [{"type": "text", "text": "charged"}]}}


def write_ledger(path):
    with open(path, "a") as f:
        f.write(json.dumps({"effect": "charge", "pid": os.getpid()}) + "\n")
        f.flush()
        os.fsync(f.fileno())


def fork_child(state):
    """A child in a session of its own, outside the server's process group, holding stdout and
    stderr open for 10 minutes; its pid appended to STATE.child."""
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, start_new_session=True)
    with open(state + ".child", "a") as f:
        f.write(f"{child.pid}\n")


def block_forever():
    while True:
        signal.pause()


def stdio(args):
    out = sys.stdout.buffer
    fault = args.fault
    if fault == "exit-at-start":
        sys.exit(3)
    if fault == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if fault == "hang-on-restart":
        starts = 0
        if os.path.exists(args.state):
            with open(args.state) as f:
                starts = len(f.read().split())
        with open(args.state, "a") as f:
            f.write("start\n")
        if starts >= 1:
            fault = "silent-initialize"
    if fault == "fork-holds-stdout":
        fork_child(args.state)
    if fault == "banner":
        out.write(b"Pay server 1.0 starting (stdio)\nINFO loaded 3 tools\n")
        out.flush()

    def send(*msgs):
        out.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        out.flush()

    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if fault == "silent-initialize":
            continue
        if fault == "garbage-initialize":
            out.write(b"Welcome! Server ready.\n")
            out.flush()
            continue
        if req.get("method") != "tools/call":
            reply = answer(req)
            if reply is not None:
                send(reply)
            continue
        if fault == "silent-call":
            continue
        if fault == "wrong-id":
            reply = charged(req)
            reply["id"] = 1_000_000 + (req["id"] if isinstance(req["id"], int) else 0)
            send(reply)
        elif fault == "duplicate-id":
            send(charged(req), charged(req))
        elif fault == "garbage":
            out.write(b"charging 42 now... done!\n")
            out.flush()
        elif fault == "partial-frame":
            out.write(json.dumps(charged(req)).encode()[:20])
            out.flush()
            os._exit(0)
        elif fault == "flood-no-newline":
            chunk = b"x" * (1 << 20)
            for _ in range(20):
                out.write(chunk)
            out.flush()
        elif fault == "flood-lines":
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x" * 100}}).encode() + b"\n"
            batch = note * 1000
            for _ in range(40 * (1 << 20) // len(batch)):
                out.write(batch)
            out.flush()
        elif fault == "close-stdout":
            out.flush()
            os.close(1)
            for _ in sys.stdin.buffer:
                pass
            block_forever()
        elif fault == "ignore-sigterm":
            pass
        elif fault == "hang-on-restart":
            write_ledger(args.ledger)
        elif fault == "trickle-call":
            write_ledger(args.ledger)
            for byte in json.dumps(charged(req)).encode() + b"\n":
                out.write(bytes([byte]))
                out.flush()
                time.sleep(1)
        elif fault in ("none", "fork-holds-stdout", "banner") or fault.startswith("discover-"):
            write_ledger(args.ledger)
            send(charged(req))
        else:
            sys.exit(f"unknown fault {fault}")
    # stdin closed: a well-behaved server would exit here; these faults stay until killed.
    if fault in ("ignore-sigterm", "close-stdout"):
        block_forever()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fault = None
    ledger = os.devnull

    def log_message(self, *a):
        pass

    def reply(self, status, body=b"", ctype="application/json"):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.fault == "http-500":
            return self.reply(500, b'{"error": "internal server error (misbehaving server)"}')
        req = json.loads(body)
        if REVISION >= "2026-07-28" and self.headers.get("mcp-method") != req.get("method"):
            return self.reply(400, b'{"error": "Mcp-Method header missing or not the body\'s method"}')
        if req.get("method") == "tools/call":
            if self.fault == "http-reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            if self.fault == "http-sse-forever":
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(b": still working\n\n")
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    return
            if self.fault in ("none", "http-fork-holds-stdout") or self.fault.startswith("discover-"):
                write_ledger(self.ledger)
                return self.reply(200, json.dumps(charged(req)).encode())
        reply = answer(req)
        if reply is None:
            return self.reply(202)
        self.reply(200, json.dumps(reply).encode())


def http(args):
    if args.fault == "http-fork-holds-stdout":
        fork_child(args.state)
    Handler.fault = args.fault
    Handler.ledger = args.ledger
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    except OSError as e:
        # The port was found free by the test and taken by another process before this bind:
        # say so next to the state file, so that the test runs again on another port.
        if e.errno == errno.EADDRINUSE and args.state != os.devnull:
            with open(args.state + ".bind-conflict", "w") as f:
                f.write(f"{args.port}\n")
        raise
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    block_forever()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fault", required=True)
    p.add_argument("--ledger", default=os.devnull)
    p.add_argument("--state", default=os.devnull)
    p.add_argument("--port", type=int)
    p.add_argument("--revision", default="2025-11-25", choices=["2025-11-25", "2026-07-28"])
    args = p.parse_args()
    global REVISION, FAULT
    REVISION, FAULT = args.revision, args.fault
    if args.port is not None:
        http(args)
    else:
        stdio(args)


if __name__ == "__main__":
    main()
