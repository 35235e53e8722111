"""`ssw prices` as a user runs it: the registry's prices listed, a refresh refused before any key
where the provider's model list carries no prices."""

import tomllib

from tests.test_cli import copy_registry, ssw


def test_prices_alone_lists_each_models_price_date_and_source(tmp_path):
    result = ssw("prices", registry=copy_registry(tmp_path))
    assert result.returncode == 0, result.stderr
    opus = next(line for line in result.stdout.splitlines() if "claude-opus-5" in line)
    assert opus.split()[:6] == ["anthropic", "claude-opus-5", "5", "0.5", "6.25", "25"]
    assert "unknown" in next(line for line in result.stdout.splitlines() if "tokenfactory" in line)
    assert "ssw prices refresh openai-compatible|openrouter|tokenfactory" in result.stdout
    assert opus.split()[-2] == "preset"  # where the price came from: no cache yet


def test_refreshing_a_provider_whose_list_has_no_prices_is_refused_without_asking_for_a_key(
    tmp_path,
):
    registry = copy_registry(tmp_path)
    unlisted = []
    for preset in sorted((registry / "providers").glob("*.toml")):
        data = tomllib.loads(preset.read_text())
        if "prices_endpoint" not in data:
            unlisted.append((preset.stem, data.get("api_key_env")))
    assert ("anthropic", "ANTHROPIC_API_KEY") in unlisted
    for name, key_variable in unlisted:
        result = ssw("prices", "refresh", name, registry=registry)
        assert result.returncode == 2, (name, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr
        assert f"registry/providers/{name}.toml" in result.stderr
        assert "openai-compatible or openrouter or tokenfactory" in result.stderr
        if key_variable:
            assert key_variable not in result.stderr
