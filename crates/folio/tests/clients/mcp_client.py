"""The official MCP Python SDK as a client of Folio, over stdio (spawning
`folio mcp`) or over streamable HTTP (`folio serve`'s /mcp with the token):
it lists the tools and checks their schemas, searches within a scope, asks
a question and receives progress notifications and the answer with its
citations, reads a cited passage, lists collections, threads and the
document resources, and reads one. Prints what it got as JSON for the Rust
test (crates/folio/tests/serve.rs) to check.

usage: mcp_client.py stdio FOLIO_BINARY DATA_DIR SCOPE_FOLDER QUESTION
       mcp_client.py http BASE_URL TOKEN SCOPE_FOLDER QUESTION
"""

import asyncio
import contextlib
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@contextlib.asynccontextmanager
async def connect(kind, where, secret):
    if kind == "stdio":
        server = StdioServerParameters(
            command=where,
            args=["--data-dir", secret, "mcp"],
            env={k: v for k, v in os.environ.items() if k.startswith("FOLIO_")},
        )
        async with stdio_client(server) as (read, write):
            yield read, write
    else:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
        async with http, streamable_http_client(f"{where}/mcp", http_client=http) as streams:
            yield streams[0], streams[1]


def structured(result):
    assert not result.is_error, result.content
    return result.structured_content


async def main():
    kind, where, secret, folder, question = sys.argv[1:6]
    got = {}
    async with connect(kind, where, secret) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            got["server"] = init.server_info.name
            tools = (await session.list_tools()).tools
            got["tools"] = {
                t.name: {"input": t.input_schema, "output": t.output_schema, "description": t.description}
                for t in tools
            }
            hits = structured(
                await session.call_tool("search", {"query": "ownership", "k": 3, "scope": {"paths": [folder]}})
            )["hits"]
            got["hits"] = hits
            progress = []

            async def on_progress(value, total, message):
                progress.append({"progress": value, "message": message})

            run = structured(
                await session.call_tool(
                    "ask",
                    {"question": question, "method": "vanilla-rag", "max_tokens": 48, "temperature": 0, "options": {}},
                    progress_callback=on_progress,
                )
            )
            got["run"] = {k: run[k] for k in ("id", "thread_id", "status", "answer", "citations")}
            got["progress"] = progress
            cited = run["citations"][0]["chunk_id"] if run["citations"] else hits[0]["chunk_id"]
            got["passage"] = structured(await session.call_tool("read", {"passage": cited}))["passage"]
            got["bad_read"] = (await session.call_tool("read", {"passage": 999999})).is_error
            got["threads"] = structured(await session.call_tool("list_threads", {}))["threads"]
            got["collections"] = structured(await session.call_tool("list_collections", {}))["collections"]
            resources = (await session.list_resources()).resources
            got["resources"] = [{"uri": str(r.uri), "name": r.name} for r in resources]
            document = await session.read_resource(resources[0].uri)
            got["resource_text"] = document.contents[0].text
    print(json.dumps(got))


asyncio.run(main())
