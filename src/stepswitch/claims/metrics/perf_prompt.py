"""perf.prompt_economy: how much of each step's prompt repeats the last one, and the uncached
tokens against a full history, checked against the first repetitions' own per-step counts."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable, agree, field_of, number_of
from stepswitch.claims.metrics.base import Computed
from stepswitch.claims.metrics.perf_results import measured, side_runs


def prompt_economy(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    steps = field_of(data, rel, "prompt", "per_step")
    if not isinstance(steps, list) or not steps:
        raise EvidenceError(f"{rel}: prompt.per_step is not a list of steps")
    where = f"{rel}: prompt.per_step"
    tokens = [int(number_of(s, where, "prompt_tokens")) for s in steps]
    cached = [int(number_of(s, where, "cached_tokens")) for s in steps]
    shares = [number_of(s, where, "repeat_share") for s in steps]
    history = sum(int(number_of(s, where, "full_history_tokens")) for s in steps)
    total, uncached = sum(tokens), sum(tokens) - sum(cached)
    stored = {
        "prompt_tokens_total": total,
        "uncached_tokens_total": uncached,
        "full_history_prompt_tokens_total": history,
    }
    for key, recomputed in stored.items():
        agree(rel, f"prompt.{key}", recomputed, number_of(data, rel, "prompt", key), 0.0)
    median = number_of(data, rel, "prompt", "repeat_share_per_step", "median")
    weighted = number_of(data, rel, "prompt", "repeat_share_token_weighted")
    mean = number_of(data, rel, "prompt", "repeat_share_mean")
    # per_step keeps each share to 4 decimals: the summary must agree to that rounding.
    agree(rel, "prompt.repeat_share_per_step.median", statistics.median(shares), median, 1e-4)
    agree(rel, "prompt.repeat_share_mean", statistics.fmean(shares), mean, 1e-4)
    by_tokens = sum(s * t for s, t in zip(shares, tokens, strict=True)) / total
    agree(rel, "prompt.repeat_share_token_weighted", by_tokens, weighted, 1e-4)
    _run_prompt_agrees(data, rel, tokens, cached, shares)
    mini_tokens, mini_uncached = _mini_prompt(data, rel)
    ideal = _ideal_prefix_uncached(data, rel)
    return Computed(
        {
            **measured(inputs, rel, data),
            "prompt_steps": len(steps),
            "repeat_median": median,
            "repeat_weighted": weighted,
            "repeat_mean": mean,
            "prompt_tokens": total,
            "uncached_tokens": uncached,
            "full_history_tokens": history,
            "uncached_vs_full": uncached / history,
            "mini_prompt_tokens": mini_tokens,
            "mini_uncached_tokens": mini_uncached,
            # like with like: uncached against uncached, both from per-call counts
            "uncached_vs_mini": uncached / mini_uncached,
            # the whole history each step behind a cache that keeps every earlier prefix
            "ideal_prefix_uncached_tokens": ideal,
            "uncached_vs_ideal_prefix": uncached / ideal,
        }
    )


def _prompt_lists(data: Any, rel: str, side: str, *keys: str) -> list[list[float]]:
    """The first repetition's per-step prompt lists (the prompt economy is read from it)."""
    run = side_runs(data, rel, side)[0]
    where = f"{rel}: overhead.{side}_runs[0].prompt"
    found = []
    for key in keys:
        values = field_of(run, where, "prompt", key)
        if not isinstance(values, list):
            raise EvidenceError(f"{where}.{key} is not a list")
        found.append([number_of({"v": v}, f"{where}.{key}", "v") for v in values])
    return found


def _ideal_prefix_uncached(data: Any, rel: str) -> int:
    """What sending the whole history each step leaves uncached behind an ideal prefix cache,
    from the first ssw repetition's per-step counts; the summary must agree exactly."""
    (per_step,) = _prompt_lists(data, rel, "ssw", "full_history_uncached_tokens")
    total = int(sum(per_step))
    key = "full_history_uncached_with_ideal_prefix_cache"
    agree(rel, f"prompt.{key}", total, number_of(data, rel, "prompt", key), 0.0)
    if total <= 0:
        raise EvidenceError(f"{rel}: prompt.{key} is not above zero")
    return total


def _run_prompt_agrees(
    data: Any, rel: str, tokens: list[int], cached: list[int], shares: list[float]
) -> None:
    """prompt.per_step is the first ssw repetition's prompt, its shares kept to 4 decimals."""
    run_tokens, run_cached, run_shares = _prompt_lists(
        data, rel, "ssw", "prompt_tokens", "cached_tokens", "repeat_share"
    )
    if run_tokens != tokens or run_cached != cached:
        raise Unprovable(
            f"{rel}: prompt.per_step's token counts are not those of overhead.ssw_runs[0].prompt"
        )
    if len(run_shares) != len(shares) or any(
        abs(a - b) > 0.00005 + 1e-12 for a, b in zip(run_shares, shares, strict=True)
    ):
        raise Unprovable(
            f"{rel}: prompt.per_step's repeat shares are not those of overhead.ssw_runs[0].prompt"
        )


def _mini_prompt(data: Any, rel: str) -> tuple[int, int]:
    """mini's prompt and uncached token totals, from its first repetition's per-call counts; the
    stored totals must agree."""
    tokens, cached = _prompt_lists(data, rel, "mini", "prompt_tokens", "cached_tokens")
    total, uncached = int(sum(tokens)), int(sum(tokens) - sum(cached))
    for key, recomputed in (
        ("mini_prompt_tokens_total", total),
        ("mini_uncached_tokens_total", uncached),
    ):
        stored = number_of(data, rel, "prompt", key)
        agree(rel, f"prompt.{key}", recomputed, stored, 0.0, "overhead.mini_runs[0]'s calls")
    return total, uncached
