#!/bin/sh
# Appends the name of the tool that just ran to the project's .team-tools.log.
tool=$(sed -n 's/.*"tool_name": *"\([^"]*\)".*/\1/p')
echo "$tool" >> "$CLAUDE_PROJECT_DIR/.team-tools.log"
