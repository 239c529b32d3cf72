"""validate_json.py - check JSON documents against a JSON Schema (2020-12).

Usage: validate_json.py SCHEMA[:KEY] DOC...
SCHEMA:KEY validates against the sub-schema stored under KEY of the
schema file (e.g. schemas/tools/list_hotspots.json:outputSchema).
The validator is the python3-jsonschema package: an oracle independent
of PerfLens's own C code.  Exit 0 when every document validates, 1 with
the first error of each failing document printed otherwise, 77 when
jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed")
    sys.exit(77)


def load_schema(spec):
    path, _, key = spec.partition(":")
    with open(path) as f:
        schema = json.load(f)
    if key:
        schema = schema[key]
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def main():
    schema = load_schema(sys.argv[1])
    validator = jsonschema.Draft202012Validator(schema)
    failed = 0
    for doc_path in sys.argv[2:]:
        with open(doc_path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            failed += 1
            e = errors[0]
            print("%s: %s at /%s" % (doc_path, e.message[:300],
                                     "/".join(str(p) for p in e.path)))
    sys.exit(1 if failed else 0)


main()
