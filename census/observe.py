#!/usr/bin/env python3
"""Counts a census server's effects from outside its process and prints one number, for
`mcp-once probe --observe cmd:"python3 census/observe.py KIND ..."`.

  sqlite FILE TABLE       rows in TABLE (0 while the file or the table does not exist)
  duckdb FILE TABLE       rows in TABLE, read from a copy of FILE and its WAL: the server keeps
                          DuckDB's write lock, so the file itself cannot be opened beside it
                          (needs the duckdb module: run with census/.venv/bin/python)
  jsonl FILE KEY=JSON     lines of FILE that are JSON objects with KEY equal to JSON
  chars FILE TEXT         occurrences of TEXT in FILE
  json-len FILE KEY       length of the list under the top-level KEY of a JSON file (0 if absent)

Exit status 0 with the number on stdout, or non-zero with the reason on stderr (the probe then
reports the reading as failed instead of counting a wrong number).
"""

import json
import os
import shutil
import sqlite3
import sys
import tempfile


def sqlite_rows(path, table):
    if not os.path.exists(path):
        return 0
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        known = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        if known is None:
            return 0
        return con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    finally:
        con.close()


def duckdb_rows(path, table):
    import duckdb  # only in census/.venv

    if not os.path.exists(path):
        return 0
    with tempfile.TemporaryDirectory(prefix="census-duckdb-") as scratch:
        copy = os.path.join(scratch, "copy.duckdb")
        shutil.copyfile(path, copy)
        if os.path.exists(path + ".wal"):
            shutil.copyfile(path + ".wal", copy + ".wal")
        con = duckdb.connect(copy)
        try:
            known = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()
            if known[0] == 0:
                return 0
            return con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        finally:
            con.close()


def jsonl_lines(path, match):
    key, _, want = match.partition("=")
    want = json.loads(want)
    if not os.path.exists(path):
        return 0
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            item = json.loads(line)
            if isinstance(item, dict) and item.get(key) == want:
                n += 1
    return n


def chars(path, text):
    if not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as f:
        return f.read().count(text)


def json_len(path, key):
    if not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return len(doc.get(key) or [])


KINDS = {"sqlite": sqlite_rows, "duckdb": duckdb_rows, "jsonl": jsonl_lines, "chars": chars, "json-len": json_len}


def main(argv):
    if len(argv) != 4 or argv[1] not in KINDS:
        sys.exit(f"usage: observe.py {{{'|'.join(KINDS)}}} FILE ARG")
    print(KINDS[argv[1]](argv[2], argv[3]))


if __name__ == "__main__":
    main(sys.argv)
