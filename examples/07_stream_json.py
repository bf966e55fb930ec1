"""Consume `sagent --output-format stream-json` from another program: one JSON record per line, as the
agent works. This reads them as they come, shows the tool calls and the answer, and checks the exit code.

With an API key set, sagent uses that provider; without one it runs on the embedded local model (needs
`uv sync --extra local`).
"""

import json
import subprocess
import sys
from pathlib import Path

task = "List the files in this folder with the List tool, then name one of them."
command = [sys.executable, "-m", "sagent.cli.main", "-p", task, "--output-format", "stream-json", "--ephemeral"]
process = subprocess.Popen(command, cwd=Path(__file__).parent, stdout=subprocess.PIPE, text=True)
assert process.stdout is not None
kinds: dict[str, int] = {}
for line in process.stdout:  # each line is a complete JSON record, written when its event happens
    record = json.loads(line)
    kind = record["type"] if "subtype" not in record else f"{record['type']}/{record['subtype']}"
    kinds[kind] = kinds.get(kind, 0) + 1
    if record["type"] == "system" and record.get("subtype") == "init":
        print(f"session {record['session_id']} on {record['model']} with {len(record['tools'])} tools")
    elif record["type"] == "assistant":
        for block in record["message"]["content"]:
            if block["type"] == "tool_use":
                print(f"tool call: {block['name']} {json.dumps(block['input'])}")
    elif record["type"] == "result":
        print(f"result: {record['subtype']} after {record['num_turns']} turn(s), ${record['total_cost_usd']:.4f}")
        print("answer:", (record.get("result") or "").strip()[:300])
code = process.wait()
print("records:", ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items())))
print("exit code:", code)  # 0 success, 1 error, 2 bad usage, 3 max tool rounds, 4 budget, 130 interrupted
sys.exit(code)
