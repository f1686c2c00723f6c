"""Every operation `/openapi.json` describes, called as a client generated
from it would: path and query parameters and bodies as the document types
them, filled from the examples the test passes, and every reply checked
against the document's schema for its status (jsonschema, draft 2020-12).
A markdown reply must also read as markdown (a heading first). Each
operation is also sent without the token and with a forged Host first,
which must be refused. Prints one line per operation as JSON for
the Rust test to check.

usage: openapi_routes.py BASE_URL TOKEN EXAMPLES_JSON
"""

import json
import sys
import urllib.error
import urllib.request

from jsonschema import Draft202012Validator

base, token, examples = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])


def call(method, path, body=None, bearer=token, host=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, method=method.upper())
    if bearer is not None:
        request.add_header("Authorization", f"Bearer {bearer}")
    if host is not None:
        request.add_header("Host", host)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=600) as reply:
            return reply.status, parsed(reply)
    except urllib.error.HTTPError as refused:
        return refused.code, parsed(refused)


def parsed(reply):
    """JSON as JSON; any other reply (markdown) as its text."""
    body = reply.read()
    if reply.headers.get_content_type() == "application/json":
        return json.loads(body)
    return body.decode()


status, document = call("get", "/openapi.json")
assert status == 200, status
components = document["components"]
# Deletions last, so what they delete is there for the reads before them.
operations = sorted(
    (
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ),
    key=lambda o: o[0] == "delete",
)


def example(operation_id, name):
    """The value of parameter `name`: the operation's own example, else the shared one."""
    params = examples["params"]
    return params.get(f"{operation_id}.{name}", params.get(name))


for method, path, operation in operations:
    url = path
    query = []
    for p in operation.get("parameters", []):
        value = example(operation["operationId"], p["name"])
        if p["in"] == "path":
            url = url.replace("{" + p["name"] + "}", urllib.request.quote(str(value), safe=""))
        elif p["required"] or value is not None:
            query.append(f"{p['name']}={urllib.request.quote(str(value))}")
    if query:
        url += "?" + "&".join(query)
    body = examples["bodies"].get(operation["operationId"])
    if "requestBody" in operation:
        assert body is not None, f"no example body for {operation['operationId']}"
        Draft202012Validator(
            {**operation["requestBody"]["content"]["application/json"]["schema"], "components": components}
        ).validate(body)
    # Which operation runs, on stderr as it starts: a failure says where.
    print(f"{method.upper()} {url}", file=sys.stderr, flush=True)
    # Refused before anything runs: no token, and a Host that is not this server's.
    refusals = [call(method, url, body, bearer=None)[0], call(method, url, body, host="evil.example")[0]]
    status, reply = call(method, url, body)
    responses = operation["responses"]
    described = responses.get(str(status), responses["default"])
    content = described["content"]
    media = "text/markdown" if "text/markdown" in content else "application/json"
    schema = {**content[media]["schema"], "components": components}
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(reply)]
    if media == "text/markdown" and not reply.startswith("# "):
        errors.append(f"not markdown: {reply[:80]!r}")
    print(json.dumps({"operation": operation["operationId"], "url": url, "status": status, "refusals": refusals, "errors": errors[:3]}))
