"""`--auth credentials|api-key`: who pays for a CLI-backed provider's requests (AnthropicCLI,
OpenAISubscription, GoogleCLI), decided once at the command line's edge.

- `credentials`: the CLI's own sign-in (a subscription), as when no key is set; a key in the provider's own
  variable (`SAGENT_CLAUDE_API_KEY`, ...) is ignored for this run, so a key set for other runs never bills
  this one.
- `api-key`: an API key billed through the CLI: the one `--api-key-env` names, else the provider's own
  variable, else the vendor's usual one (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY`); none
  set is a usage error naming them.
"""

from __future__ import annotations

import argparse
import os

CHOICES = ("credentials", "api-key")
VENDOR_KEYS = {
    "anthropic-cli": ("ANTHROPIC_API_KEY",),
    "openai-subscription": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "google-cli": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""The vendor's usual key variables for each CLI-backed provider, after sagent's own."""


def resolve_auth(args: argparse.Namespace) -> str | None:
    """Apply `args.auth` (see the module's docstring); the usage problem, or None."""
    if getattr(args, "auth", None) is None:
        return None
    from sagent.providers.specs import find_spec

    spec = find_spec(args.provider) if args.provider else None
    if spec is None or spec.name not in VENDOR_KEYS:
        names = ", ".join(s.display for s in map(find_spec, VENDOR_KEYS) if s is not None)
        return f"--auth chooses how a CLI-backed provider is paid: give --provider with one of {names}"
    if args.auth == "credentials":
        if args.api_key_env:
            return "--auth credentials uses the CLI's own sign-in: leave out --api-key-env"
        for variable in spec.key_variables:
            os.environ.pop(variable, None)
        return None
    if args.api_key_env:
        return None  # checked with the other flags: the variable must be set
    candidates = (*spec.key_variables, *VENDOR_KEYS[spec.name])
    chosen = next((v for v in candidates if os.environ.get(v)), None)
    if chosen is None:
        wanted = " or ".join(candidates)
        return f"--auth api-key: no key is set for {spec.display}; set {wanted} (or name one with --api-key-env)"
    args.api_key_env = chosen
    return None
