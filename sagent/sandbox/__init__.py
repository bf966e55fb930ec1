"""The OS sandbox every Bash command runs in: one policy value (`SandboxPolicy`) and one way to start a
command under it (`launcher`). On Linux it is bubblewrap; see docs/tools.md (Bash) and docs/settings.md.

    from sagent import Agent
    from sagent.sandbox import SandboxPolicy
    agent = Agent(model, tools=builtin_tools(), sandbox=SandboxPolicy(mode="read-only"))
"""

from sagent.sandbox.policy import DEFAULT, MODES, OFF, SandboxError, SandboxMode, SandboxPolicy, from_settings

__all__ = ["DEFAULT", "MODES", "OFF", "SandboxError", "SandboxMode", "SandboxPolicy", "from_settings"]
