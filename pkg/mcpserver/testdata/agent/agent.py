"""An agent's session with flameox through the official Python SDK (mcp).

The same investigation as agent.mjs, through stdio_client and
ClientSession as a Python host drives the server: the SDK validates every
structured result against the tool's output schema, and every result must
be small enough for a model's context. Run by TestPythonAgent (py_test.go)
with the same one JSON argument as agent.mjs; prints one line
"ok {summary}" or exits 1 with "FAIL: why". Works with mcp 1.x and 2.x
(results are read in their wire form, model_dump(by_alias=True)).
"""

import asyncio
import json
import sys
import time
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters, stdio_client

cfg = json.loads(sys.argv[1])
sizes = []
counts = {"calls": 0, "polls": 0, "poll_max_bytes": 0}


class Fail(Exception):
    pass


def show(v):
    return json.dumps(v)[:3000]


async def call(session, name, args, poll=False):
    """One tools/call with the SDK's defaults; get_job polls counted apart."""
    counts["polls" if poll else "calls"] += 1
    res = await session.call_tool(name, args)
    wire = res.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = "".join(c.get("text", "") for c in wire.get("content", []) if c.get("type") == "text")
    size = {
        "tool": name,
        "text": len(text.encode()),
        "structured": len(json.dumps(wire.get("structuredContent"), separators=(",", ":")).encode()),
    }
    if not poll:
        sizes.append(size)
    else:
        counts["poll_max_bytes"] = max(counts["poll_max_bytes"], size["text"], size["structured"])
    return wire, size


def small(wire, size):
    """Fails when a result is over the byte budget."""
    budget = cfg["max_bytes"]
    if size["text"] > budget or size["structured"] > budget:
        raise Fail(f"{size['tool']}: {size['text']} bytes of text and {size['structured']} of structured content, "
                   f"budget {budget}: {show(wire)}")
    return wire


async def ok(session, name, args, poll=False):
    """The result of a call that must succeed."""
    wire, size = await call(session, name, args, poll)
    sc = wire.get("structuredContent") or {}
    if wire.get("isError") or sc.get("ok") is not True:
        raise Fail(f"{name}: {show(wire)}")
    return small(wire, size)["structuredContent"]["result"]


async def capture(session, plan_token):
    """Runs a planned capture to its end as a job (start_capture, then
    get_job long polls) and returns the job. Switching how an agent waits
    for a capture changes this function only."""
    job = await ok(session, "start_capture", {"plan_token": plan_token})
    end = time.monotonic() + 30 * 60
    while not job.get("terminal"):
        if time.monotonic() > end:
            raise Fail("the job never ended: " + show(job))
        job = await ok(session, "get_job", {"job_id": job["job_id"], "wait_seconds": 20}, poll=True)
    return job


async def investigate(session):
    began = time.monotonic()
    await session.initialize()
    listed = time.monotonic()
    tools = (await session.list_tools()).tools
    list_ms = int(1000 * (time.monotonic() - listed))
    if len(tools) != cfg["tools"]:
        raise Fail(f"list_tools returned {len(tools)} tools, want {cfg['tools']}")
    for t in tools:
        d = t.model_dump(by_alias=True, exclude_none=True)
        if not d.get("outputSchema") or not d.get("annotations"):
            raise Fail(f"{t.name} lacks outputSchema or annotations")

    plan = await ok(session, "plan_capture", {"adapter": "gotest", "workload": cfg["workload"], "parameters": cfg["parameters"]})
    if not plan.get("plan_token"):
        raise Fail("plan_capture: no plan_token: " + show(plan))
    captured = time.monotonic()
    job = await capture(session, plan["plan_token"])
    capture_ms = int(1000 * (time.monotonic() - captured))
    run = (job.get("capture") or {}).get("run") or {}
    run_id = run.get("run_id")
    if job.get("status") != "succeeded" or not run_id or run.get("execution_status") != "succeeded" \
            or run.get("capture_status") != "registered":
        raise Fail("capture: " + show(job))

    hot = await ok(session, "analyze_hotspots", {"input": run_id})
    mix = next((r for r in hot.get("rows", []) if r["function"].endswith("spin.Mix")), None)
    if mix is None:
        raise Fail("analyze_hotspots: spin.Mix is not among the rows: " + show(hot))
    callers = await ok(session, "get_frame_callers", {"input": run_id, "frame_id": mix["frame_id"]})
    if not any(e["function"].endswith("spin.Spin") for e in callers.get("edges", [])):
        raise Fail("get_frame_callers: spin.Spin does not call spin.Mix: " + show(callers))
    stacks = await ok(session, "get_stack_examples", {"input": run_id, "frame_id": mix["frame_id"]})
    ex = stacks.get("examples") or []
    if not ex or not any(f["function"].endswith("spin.TestSpin") for f in ex[0]["frames"]):
        raise Fail("get_stack_examples: no stack from spin.TestSpin: " + show(stacks))
    got = await ok(session, "get_run", {"run_id": run_id})
    if (got.get("run") or {}).get("run_id") != run_id:
        raise Fail("get_run: " + show(got))
    artifact_id = hot["source"]["artifact_id"]
    art = await ok(session, "get_artifact", {"artifact_id": artifact_id})
    if art.get("artifact_id") != artifact_id:
        raise Fail("get_artifact: " + show(art))
    viewer = await ok(session, "get_native_viewer_plan", {"artifact_id": artifact_id})
    if not str(viewer.get("tool", "")).startswith("go tool pprof"):
        raise Fail("get_native_viewer_plan: " + show(viewer))

    if counts["calls"] > cfg["max_calls"]:
        raise Fail(f"{counts['calls']} calls besides get_job polls, budget {cfg['max_calls']}")
    return {"mcp": version("mcp"), **counts, "capture_ms": capture_ms, "list_tools_ms": list_ms,
            "total_ms": int(1000 * (time.monotonic() - began)), "sizes": sizes}


async def main():
    server = StdioServerParameters(command=cfg["command"], args=cfg["args"], env=cfg["env"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            # A failure is returned, not raised: the SDK's task groups
            # would wrap it in an exception group.
            try:
                return await investigate(session), None
            except Fail as e:
                return None, str(e)


if __name__ == "__main__":
    summary, failure = asyncio.run(main())
    if failure is not None:
        print("FAIL: " + failure, file=sys.stderr)
        sys.exit(1)
    print("ok " + json.dumps(summary))
