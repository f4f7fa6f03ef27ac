#!/usr/bin/env python3
"""validate.py SCHEMA FILE: validates the JSON in FILE against the JSON Schema SCHEMA with the
validator class SCHEMA's `$schema` names; prints `valid: <title>` or every error and exits 1."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema, format_checker=getattr(cls, "FORMAT_CHECKER", None)).iter_errors(doc),
                key=lambda e: list(e.absolute_path))
for e in errors:
    print("invalid: %s: %s" % ("/".join(map(str, e.absolute_path)), e.message))
if errors:
    sys.exit(1)
print("valid:", schema.get("title", sys.argv[1]))
