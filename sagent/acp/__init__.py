"""`sagent acp`: sagent as an Agent Client Protocol agent, spoken over standard input and output to an
editor (Zed, JetBrains IDEs, Neovim, Emacs) on the official `agent-client-protocol` SDK.

- `command`: the subcommand's flags and help (the SDK is imported only once it runs).
- `server`: the protocol's agent side: initialize, sessions, prompts, cancel, modes and config options.
- `session`: one editor session: its sagent agent, its MCP servers, its mode and model.
- `updates`: sagent's events as `session/update` notifications (message and thought chunks, tool calls
  with kind, title, locations, diffs and status, the plan), and a loaded session's history replayed.
- `approver`: the permission question put to the editor (`session/request_permission`).
- `editor`: the editor's file system and terminals, lent to sagent's tools (`sagent.tools.editor`).
"""
