"""`sagent-slack`: persistent agents a team talks to in Slack, over Socket Mode, on the same runtime.

`routing` decides where each Slack event goes (pure, deterministic), `commands` reads the router's
commands, `personas` finds an agent's system prompt, `manifest` keeps the session directory, `api` wraps
Slack's official `slack_sdk` clients, `mirror` posts an agent's work back into Slack, `service` ties them
together and `cli` is the command. Only `cli` is imported by `sagent slack`; the SDK loads when it runs.
"""
