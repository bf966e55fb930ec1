"""A script that ends while a model's client is still being built in the background exits as it means to,
not with an abort: the interpreter's teardown stopping that thread inside pydantic-core's native code would
end the process with SIGABRT ("FATAL: exception not rethrown")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = """
import time
from pydantic_core import SchemaValidator, core_schema
from sagent.providers.warm import SdkClient

def check(value, info):
    sum(range(200_000))
    return value

def build():  # a client whose construction runs Python code called from native code, for 1.5 s
    validator = SchemaValidator(core_schema.with_info_plain_validator_function(check))
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        validator.validate_python(1)
    return "client"

SdkClient(build).warm()
time.sleep(0.3)
print("done")
"""


def test_a_script_ending_during_a_warm_up_exits_cleanly(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    for _ in range(3):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "done\n" and "FATAL" not in done.stderr
