"""The `advisor` setting and the `--advisor-*` flags: which model advises, where it is reached, and when it is
consulted (the `AdvisorPolicy` fields), from the command line.

    "advisor": "claude-opus-4-7"                             a model id or provider:model (the short form)
    "advisor": {"model": "claude-opus-4-7", "maxCalls": 5, "stagnation": 6, "markers": ["[HELP]"]}

The checks use only the standard library (the settings files are read before anything heavy loads); the
advisor itself is built by `advisor_from_args`, which imports the providers when a run needs them.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from sagent.lib.json import json_kind

if TYPE_CHECKING:
    from sagent.advisor import Advisor
    from sagent.agent.fleet import ModelFactory
    from sagent.providers.base import Model

MEMBERS: dict[str, tuple[str, str | None]] = {
    # member: (what it takes, the AdvisorPolicy field it sets; None for the model and where it is reached)
    "model": ("string", None),
    "baseUrl": ("string", None),
    "apiKeyEnv": ("string", None),
    "markers": ("markers", "marker"),
    "marker": ("markers", "marker"),  # the same, as the seed names it
    "failures": ("count1|off", "failures"),
    "confidence": ("fraction|off", "confidence"),
    "stagnation": ("count2|off", "stagnation"),
    "similarity": ("similarity", "similarity"),
    "maxCalls": ("count0", "max_consultations"),
    "cooldown": ("count0", "cooldown"),
    "maxUsd": ("usd|off", "max_usd"),
    "maxTokens": ("count1", "max_tokens"),
    "review": ("boolean", "review"),
    "tool": ("boolean", "tool"),
    "native": ("boolean", "native"),
    "structured": ("boolean", "structured"),
}
"""The members of the `advisor` object."""

_EXPECTED = {
    "string": "a non-empty string",
    "markers": "a marker, a list of markers, or null (off)",
    "count0": "a whole number of 0 or more",
    "count1": "a whole number of at least 1",
    "count1|off": "a whole number of at least 1, or null (off)",
    "count2|off": "a whole number of at least 2, or null (off)",
    "fraction|off": "a number from 0 to 1, or null (off)",
    "similarity": "a number above 0 and at most 1",
    "usd|off": "a number of dollars above 0, or null (no limit)",
    "boolean": "true or false",
}


class AdvisorSetting(NamedTuple):
    """What the `advisor` setting and the flags say: the model (None: no advisor), its own endpoint and
    key variable, and the policy's fields by name."""

    model: str | None
    base_url: str | None = None
    api_key_env: str | None = None
    policy: dict[str, Any] = {}


def _fits(kind: str, value: Any) -> bool:
    off = kind.endswith("|off") and value is None
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    whole = isinstance(value, int) and not isinstance(value, bool)
    base = kind.removesuffix("|off")
    if off:
        return True
    if base == "string":
        return isinstance(value, str) and bool(value.strip())
    if base == "markers":
        items = [value] if isinstance(value, str) else value
        return value is None or (isinstance(items, list) and all(isinstance(m, str) and m.strip() for m in items))
    if base in ("count0", "count1", "count2"):
        return whole and value >= int(base[-1])
    if base == "fraction":
        return number and 0 <= value <= 1
    if base == "similarity":
        return number and 0 < value <= 1
    if base == "usd":
        return number and value > 0
    return isinstance(value, bool)


def advisor_problem(value: Any) -> tuple[str | None, list[str]]:
    """What is wrong with an `advisor` setting (`key "advisor.maxCalls": must be ...`), or None; and the
    members it has that no setting knows (warned of, and ignored)."""
    if isinstance(value, str):
        return (None, []) if value.strip() else ('key "advisor": must be a non-empty string or an object', [])
    if not isinstance(value, dict):
        return f'key "advisor": must be a model (a string) or an object, not {json_kind(value)}', []
    unknown = [name for name in value if name not in MEMBERS]
    for name, (kind, _) in MEMBERS.items():
        if name in value and not _fits(kind, value[name]):
            return f'key "advisor.{name}": must be {_EXPECTED[kind]}, not {json_kind(value[name])}', unknown
    return None, unknown


def setting_of(value: Any) -> AdvisorSetting:
    """The checked `advisor` setting as an `AdvisorSetting` (unknown members left out)."""
    if value is None:
        return AdvisorSetting(None)
    if isinstance(value, str):
        return AdvisorSetting(value.strip())
    policy: dict[str, Any] = {}
    for name, (_, field) in MEMBERS.items():
        if field is not None and name in value:
            inner = value[name]
            policy[field] = tuple(inner) if isinstance(inner, list) else inner
    return AdvisorSetting(value.get("model"), value.get("baseUrl"), value.get("apiKeyEnv"), policy)


# ------------------------------------------------------------------------------------------------ flags


def _whole(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is less than {minimum}")
        return value

    return parse


FLAGS = {  # flag destination: the member it overrides
    "advisor_base_url": "baseUrl",
    "advisor_api_key_env": "apiKeyEnv",
    "advisor_max_calls": "maxCalls",
    "advisor_cooldown": "cooldown",
}


def add_advisor_flags(group: argparse._ArgumentGroup) -> None:
    """The flags for the advisor's common settings (the rest are the `advisor` setting's members)."""
    group.add_argument(
        "--advisor-base-url",
        metavar="URL",
        help="the advisor's own API base URL (an OpenAI-compatible server when its provider is not named)",
    )
    group.add_argument(
        "--advisor-api-key-env", metavar="VAR", help="the environment variable holding the advisor's API key"
    )
    group.add_argument(
        "--advisor-max-calls", type=_whole(0), metavar="N", help="consult the advisor at most N times (default 3)"
    )
    group.add_argument(
        "--advisor-cooldown",
        type=_whole(0),
        metavar="N",
        help="executor turns between two consultations (default 2; a call to the Advisor tool is exempt)",
    )


def setting_from_args(args: argparse.Namespace) -> tuple[AdvisorSetting, str]:
    """The advisor setting the flags and the settings files give together, and where its model came from
    (`--advisor` or the file's `key "advisor"`): an `--advisor` flag names the model and keeps the file's
    other members; an `--advisor-*` flag wins over its member."""
    sources = getattr(args, "settings_files", None)
    from_file = sources.loaded.values.get("advisor") if sources is not None else None
    value = getattr(args, "advisor", None)  # the flag's model, else the files' value
    if isinstance(value, str) and isinstance(from_file, dict):  # --advisor MODEL over the file's object
        value = {**from_file, "model": value}
    setting = setting_of(value)
    where = f"--advisor {setting.model}"
    if sources is not None and sources.origin("advisor") not in ("flag", "default"):
        where = f'{sources.origin("advisor")}: key "advisor" ({setting.model})'
    overrides: dict[str, Any] = {}
    for dest, member in FLAGS.items():
        given = getattr(args, dest, None)
        if given is not None:
            overrides[member] = given
    if overrides:
        if setting.model is None:
            names = ", ".join("--" + d.replace("_", "-") for d in FLAGS if getattr(args, d, None) is not None)
            raise ValueError(f"{names}: there is no advisor; name one with --advisor MODEL")
        policy = dict(setting.policy)
        for member in ("maxCalls", "cooldown"):
            if member in overrides:
                policy[MEMBERS[member][1] or ""] = overrides[member]
        setting = setting._replace(
            base_url=overrides.get("baseUrl", setting.base_url),
            api_key_env=overrides.get("apiKeyEnv", setting.api_key_env),
            policy=policy,
        )
    return setting, where


def advisor_from_args(args: argparse.Namespace, main: Model, models: ModelFactory) -> Advisor | None:
    """The advisor the command line describes, beside the agent's model `main`; None when none is named.
    `models` builds a model as sub-agents' are (the main provider's endpoint for a model on it); a model
    with its own base URL or key variable is built with those. ValueError says what is wrong, naming the
    flag or the settings key."""
    setting, where = setting_from_args(args)
    if setting.model is None:
        return None
    from sagent.advisor import Advisor, AdvisorPolicy, advisor_target
    from sagent.providers.base import ProviderError
    from sagent.providers.registry import build_model, choose, infer_provider

    if setting.api_key_env and not os.environ.get(setting.api_key_env):
        raise ValueError(f"the advisor's key variable {setting.api_key_env}: that variable is not set")
    try:
        provider, name = advisor_target(setting.model)
        if setting.base_url is None and setting.api_key_env is None:
            model = models(provider, name)
        else:
            if provider is None and name is not None and infer_provider(name) is None:
                provider = "openai-compat" if setting.base_url else main.provider
            model = build_model(choose(provider, name), base_url=setting.base_url, api_key_env=setting.api_key_env)
        return Advisor(model, AdvisorPolicy(**setting.policy))
    except ProviderError as error:
        raise ValueError(f"{where}: {error.message}") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None
