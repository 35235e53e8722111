"""Provider presets: load and validate registry/providers/*.toml; look up prices and efforts."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from stepswitch.errors import ConfigError, UsageError
from stepswitch.util.config_model import Strict, key_of, load_model

# The preset whose "models" replay a script over loopback: every record it touches says so.
SCRIPTED_PROVIDER = "scripted"
# The simulated population (stepswitch.sim): no model either; its records say simulated.
SIM_PROVIDER = "sim"

WireFormatName = Literal["chat-completions", "responses", "messages", "generate-content"]
Capability = Literal[
    "tools",
    "parallel_tool_calls",
    "json_schema",
    "streaming",
    "reasoning",
    "prompt_cache",
    "vision",
]
# Efforts from least to most thinking; "nearest" is measured along this order.
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")
Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


URL_EXAMPLE = "http://127.0.0.1:8080/v1/"


def base_url_problem(url: str) -> str | None:
    """Why `url` cannot be a provider's base URL (http or https, with a host), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it checks it: a port that is not a number raises
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    if not parts.hostname:
        return "has no host"
    if any(c.isspace() for c in url):
        return "has a space in it"
    return None


def _check_base_url(url: str) -> str:
    problem = base_url_problem(url)
    if problem is not None:
        raise PydanticCustomError(
            "base_url",
            "{url} {problem}, e.g. {example}",
            {"url": repr(url), "problem": problem, "example": URL_EXAMPLE},
        )
    return url


BaseUrl = Annotated[str, AfterValidator(_check_base_url)]
# strict: TOML `true` or "1.5" is no price and no token count.
Dollars = Annotated[float, Field(ge=0, strict=True, allow_inf_nan=False)]
Tokens = Annotated[int, Field(gt=0, strict=True)]


class Price(Strict):
    """List prices in US dollars per million tokens. Reasoning tokens bill as output."""

    input: Dollars
    cached_input: Dollars | None = None  # None: cached tokens bill as input
    cache_write: Dollars | None = None  # None: writes bill as input
    output: Dollars
    source: str = Field(min_length=1)  # where the figure came from (a page, or "local")
    as_of: date


class ModelSpec(Strict):
    family: str = Field(min_length=1)  # e.g. "nemotron", "gpt-oss": second opinions differ in it
    context_window: Tokens | None = None  # None: not known
    max_output_tokens: Tokens | None = None
    reasoning_efforts: tuple[Effort, ...] = ()
    capabilities: tuple[Capability, ...] = ()
    # "unknown" must be written out: a missing price is an error, never zero.
    price: Price | Literal["unknown"]
    wire_format: WireFormatName | None = None  # overrides the provider's default
    # The rung `ssw init` gives it in a starter ladder (ADR 0052); None: ranked by price.
    tier: Literal["small", "mid", "large"] | None = None

    @property
    def priced(self) -> bool:
        return isinstance(self.price, Price)


class ProviderSpec(Strict):
    name: str
    display_name: str
    docs: str = ""
    base_url: BaseUrl
    api_key_env: str | None = None  # None: a local server that takes no key
    wire_formats: tuple[WireFormatName, ...] = Field(min_length=1)  # the first is the default
    local: bool = Field(default=False, strict=True)
    # Local servers serve whatever model is loaded: accept unlisted ids, free, abilities unknown.
    any_model: bool = Field(default=False, strict=True)
    prices_endpoint: str | None = None  # relative to base_url; for `ssw prices refresh`
    # false: its model list (`GET <base_url>models`) cannot tell a refused key, so a run does
    # not ask it before its first call (agent/key_check.py, ADR 0065)
    key_check: bool = Field(default=True, strict=True)
    models: dict[str, ModelSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _hosted_models_are_never_free(self) -> ProviderSpec:
        # A zero price on a hosted model is almost always a missing price in disguise.
        for model_id, model in self.models.items():
            price = model.price
            if not self.local and isinstance(price, Price) and price.input == price.output == 0:
                raise ValueError(
                    f'model {model_id!r} of a hosted provider has price 0; write price = "unknown"'
                )
        return self

    @property
    def default_wire_format(self) -> WireFormatName:
        return self.wire_formats[0]


REGISTRY_VARIABLE = "SSW_REGISTRY"


def registry_dir() -> Path:
    """SSW_REGISTRY, else the copy packaged in the wheel, else the source checkout's registry/."""
    override = os.environ.get(REGISTRY_VARIABLE)
    if override:
        return Path(override)
    return shipped_registry_dir()


def shipped_registry_dir() -> Path:
    """The presets ssw ships (the wheel's copy, else the source checkout's): where keys may go."""
    packaged = Path(__file__).parents[1] / "_registry"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "registry"


def preset_path(name: str, root: Path | None = None) -> Path:
    return (root or registry_dir()) / "providers" / f"{name}.toml"


def parse_preset(path: Path) -> ProviderSpec:
    if not path.exists():  # a dangling link too
        raise ConfigError(str(path), "(file)", "no such preset", "run `ssw models`")
    spec = load_model(
        path,
        ProviderSpec,
        "toml",
        what="provider preset",
        fix=f"keep only TOML presets in {path.parent}, or move this aside",
        key=lambda error: key_of(error["loc"], drop=("Price",)),
        fix_for='see registry/README.md; write price = "unknown" when a price is not known',
    )
    if spec.name != path.stem:
        raise ConfigError(str(path), "name", f"is {spec.name!r}", f"name it {path.stem!r}")
    return spec


@cache
def _load_all(root: Path) -> dict[str, ProviderSpec]:
    folder = root / "providers"
    if not folder.is_dir():
        override = os.environ.get(REGISTRY_VARIABLE)
        fix = (
            f"point {REGISTRY_VARIABLE} (now {override!r}) at a folder holding "
            f"providers/<name>.toml, or unset it"
            if override
            else f"set {REGISTRY_VARIABLE} to a folder holding providers/<name>.toml"
        )
        raise ConfigError(str(folder), "(folder)", "no provider presets here", fix)
    return {p.stem: parse_preset(p) for p in sorted(folder.glob("*.toml"))}


def load_registry(root: Path | None = None) -> dict[str, ProviderSpec]:
    return _load_all((root or registry_dir()).resolve())


def load_shipped_registry() -> dict[str, ProviderSpec]:
    """The shipped presets, whatever SSW_REGISTRY says."""
    return _load_all(shipped_registry_dir().resolve())


def clear_cache() -> None:
    _load_all.cache_clear()


def get_provider(name: str, root: Path | None = None) -> ProviderSpec:
    providers = load_registry(root)
    if name not in providers:
        known = ", ".join(sorted(providers))
        raise UsageError(f"unknown provider {name!r}; known providers: {known}")
    return providers[name]


_UNLISTED_LOCAL_MODEL = ModelSpec(
    family="local",
    price=Price(input=0, output=0, source="local server: no charge", as_of=date(2026, 11, 29)),
)


def get_model(provider: ProviderSpec, model_id: str) -> ModelSpec:
    if model_id in provider.models:
        return provider.models[model_id]
    if provider.any_model:
        return _UNLISTED_LOCAL_MODEL
    known = ", ".join(sorted(provider.models)) or "(none)"
    raise UsageError(
        f"unknown model {model_id!r} for provider {provider.name!r} "
        f"(registry/providers/{provider.name}.toml); known models: {known}"
    )


def resolve_effort(model: ModelSpec, wanted: str | None) -> str | None:
    """The accepted effort nearest to `wanted`; ties go to the cheaper one.

    None means "send no effort field": nothing wanted, or a model that takes none.
    """
    if wanted is None:
        return None
    if wanted not in EFFORT_ORDER:
        raise UsageError(
            f"unknown reasoning effort {wanted!r}; use one of {', '.join(EFFORT_ORDER)}"
        )
    if not model.reasoning_efforts:
        return None
    if wanted in model.reasoning_efforts:
        return wanted
    target = EFFORT_ORDER.index(wanted)
    return min(
        model.reasoning_efforts,
        key=lambda e: (abs(EFFORT_ORDER.index(e) - target), EFFORT_ORDER.index(e)),
    )


def key_variables(registry: Mapping[str, ProviderSpec]) -> frozenset[str]:
    """The environment variables that hold the registry's provider keys."""
    return frozenset(s.api_key_env for s in registry.values() if s.api_key_env)
