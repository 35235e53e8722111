"""Tracing for `ssw run` and `ssw demo`, turned on by OpenTelemetry's own environment variables
(ADR 0033): OTEL_TRACES_EXPORTER, or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Timeout, compression, TLS, sampling, service name and
resource attributes are the SDK's to read, as they are for any OpenTelemetry program; the
exporter's headers (where a collector's key goes) are held with the keys and handed to it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from stepswitch.errors import UsageError
from stepswitch.util.keys import held_keys

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from stepswitch.agent.events import Sink

INSTALL = "pip install 'stepswitch[otel]'"
EXPORTERS = ("otlp", "console", "none")
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def _exporter_names(env: Mapping[str, str]) -> tuple[list[str], str] | None:
    """The exporters asked for and the variable that asked; None when tracing is off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    asked = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",")]
    asked = [n for n in asked if n]
    if asked:
        unknown = [n for n in asked if n not in EXPORTERS]
        if unknown:
            raise UsageError(
                f"OTEL_TRACES_EXPORTER={env['OTEL_TRACES_EXPORTER']}: ssw exports traces by "
                f"{', '.join(EXPORTERS)}, not {', '.join(unknown)}"
            )
        wanted = [n for n in asked if n != "none"]
        return (wanted, "OTEL_TRACES_EXPORTER") if wanted else None
    for name in ENDPOINTS:
        if env.get(name):
            return (["otlp"], name)
    return None


def _setting(env: Mapping[str, str], name: str) -> str | None:
    """An OTLP exporter setting as the SDK reads it: the traces variable, else the general one."""
    return env.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}") or env.get(f"OTEL_EXPORTER_OTLP_{name}")


def _endpoint(env: Mapping[str, str]) -> str | None:
    """Where OTLP/HTTP sends, as the SDK resolves it."""
    if env.get(ENDPOINTS[0]):
        return env[ENDPOINTS[0]]
    base = env.get(ENDPOINTS[1])
    return f"{base.removesuffix('/')}/v1/traces" if base else None


def _check_protocol(env: Mapping[str, str]) -> None:
    for name in PROTOCOLS:
        protocol = env.get(name, "").strip()
        if protocol:
            if protocol != "http/protobuf":
                raise UsageError(
                    f"{name}={protocol}: ssw sends traces over OTLP/HTTP only; "
                    "set it to http/protobuf or unset it"
                )
            return


def _exporters(names: list[str], env: Mapping[str, str]) -> list[SpanExporter]:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter
    from opentelemetry.util.re import parse_env_headers

    out: list[SpanExporter] = []
    if "otlp" in names:
        _check_protocol(env)
        # The settings that can look secret (headers with a collector's key, an endpoint with a
        # password, the client key's path) were taken out of os.environ with the keys
        # (util.keys), where the SDK would look: they are handed over from ssw's whole env.
        headers = _setting(env, "HEADERS")
        exporter = OTLPSpanExporter(
            endpoint=_endpoint(env),
            headers=parse_env_headers(headers, liberal=True) if headers else None,
            client_key_file=_setting(env, "CLIENT_KEY"),
        )
        out.append(exporter)
    if "console" in names:
        out.append(ConsoleSpanExporter(out=sys.stderr))  # stdout may be `--json`'s
    return out


def otel_sinks(environ: Mapping[str, str] | None = None) -> tuple[Sink, ...]:
    """The run's trace sink when OpenTelemetry's variables ask for one, else (). Asked for
    without the `otel` extra installed: a one-line error, never a run that is silently untraced."""
    env = {**os.environ, **held_keys()} if environ is None else environ
    asked = _exporter_names(env)
    if asked is None:
        return ()
    names, variable = asked
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from stepswitch.agent.otel import TraceExport
    except ImportError:
        raise UsageError(
            f"{variable} is set, so the run would be traced, but OpenTelemetry is not "
            f"installed: {INSTALL} (or unset {variable})"
        ) from None
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "stepswitch"}))  # none set by env
    provider = TracerProvider(resource=resource)
    for exporter in _exporters(names, env):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return (TraceExport(provider),)
