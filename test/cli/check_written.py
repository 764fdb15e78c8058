#!/usr/bin/env python3
"""Reads each written file back with a strict reader; exit 1 naming the first that fails.

Used by hostile_names_test.cpp: every file the mapper writes must be well-formed whatever the names in
its inputs (newline, NUL, quotes, `<`, `&`, bytes that are not UTF-8).
  .json  json.loads of the text decoded as strict UTF-8
  .csv   csv.reader(strict=True): every record has the header's number of columns, no NUL
  .svg   xml.dom.minidom (expat): well-formed XML 1.0
  .yaml  strict UTF-8 without YAML-forbidden characters, and (PyYAML, when installed) yaml.safe_load
"""
import csv
import io
import json
import re
import sys
import xml.dom.minidom

# YAML 1.2 c-printable, complemented: what may not appear in a YAML stream even inside quotes.
NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def check(path):
    data = open(path, "rb").read()
    text = data.decode("utf-8")  # strict: raises on any byte sequence that is not UTF-8
    if path.endswith(".json"):
        json.loads(text)
    elif path.endswith(".csv"):
        if "\0" in text:
            raise ValueError("NUL in a CSV file")
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
        if not rows:
            raise ValueError("no header")
        for i, row in enumerate(rows):
            if len(row) != len(rows[0]):
                raise ValueError(f"record {i}: {len(row)} columns, the header has {len(rows[0])}")
    elif path.endswith(".svg"):
        xml.dom.minidom.parseString(data)
    elif path.endswith(".yaml"):
        bad = NOT_PRINTABLE.search(text)
        if bad:
            raise ValueError(f"character U+{ord(bad.group()):04X} is not allowed in YAML")
        try:
            import yaml  # PyYAML: optional; the test re-imports the file with the mapper too
        except ImportError:
            return
        yaml.safe_load(text)
    else:
        raise ValueError("no reader for this kind of file")


def main():
    for path in sys.argv[1:]:
        try:
            check(path)
        except Exception as e:  # noqa: BLE001 - any failure to read back is the finding
            print(f"{path!r}: {type(e).__name__}: {e}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
