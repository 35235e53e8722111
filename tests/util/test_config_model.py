"""One loader for the files a user writes (TOML, YAML, JSON) into one strict model, and one
translation of a validation error into the one-line ConfigError: file, key, problem, fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stepswitch.errors import ConfigError
from stepswitch.util.config_model import Strict, first_problem, load_model, validate
from stepswitch.util.toml import MAX_TOML_DEPTH


class Worker(Strict):
    model: str
    timeout_s: float = 60.0


class Team(Strict):
    name: str
    workers: tuple[Worker, ...] = ()


def test_the_same_model_loads_from_toml_yaml_and_json(tmp_path: Path):
    files = {
        "toml": 'name = "a"\n[[workers]]\nmodel = "m"\n',
        "yaml": "name: a\nworkers:\n  - model: m\n",
        "json": '{"name": "a", "workers": [{"model": "m"}]}',
    }
    for format, text in files.items():
        path = tmp_path / f"team.{format}"
        path.write_text(text, encoding="utf-8")
        team = load_model(path, Team, format, what="team file", fix="name a team file")  # type: ignore[arg-type]
        assert team == Team(name="a", workers=(Worker(model="m"),))


def test_a_misspelt_key_is_one_line_naming_the_file_and_the_key(tmp_path: Path):
    path = tmp_path / "team.toml"
    path.write_text('name = "a"\n[[workers]]\nmodel = "m"\ntimeout = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_model(path, Team, "toml", what="team file", fix="name a team file")
    assert str(caught.value) == (
        f"{path}: workers[0].timeout: Extra inputs are not permitted (fix: name a team file)"
    )


def test_a_site_words_the_key_the_problem_and_the_fix_itself(tmp_path: Path):
    path = tmp_path / "team.yaml"
    path.write_text("name: a\nworkers:\n  - {}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_model(
            path,
            Team,
            "yaml",
            what="team file",
            fix="name a team file",
            key=lambda error: ".".join(map(str, error["loc"])),
            problem=lambda error: error["type"],
            fix_for=lambda error: f"add {error['loc'][-1]}",
        )
    assert (caught.value.key, caught.value.problem, caught.value.fix) == (
        "workers.0.model",
        "missing",
        "add model",
    )


def test_syntax_errors_and_missing_files_are_config_errors(tmp_path: Path):
    for format, text in (("toml", "name = "), ("yaml", "name: [a"), ("json", "{")):
        path = tmp_path / f"bad.{format}"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_model(path, Team, format, what="team file", fix="x")  # type: ignore[arg-type]
        assert caught.value.key == "(syntax)"
    with pytest.raises(ConfigError) as caught:
        load_model(tmp_path / "none.toml", Team, "toml", what="team file", fix="x")
    assert caught.value.problem == "no such team file"


def test_toml_keeps_its_nesting_bound(tmp_path: Path):
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * (MAX_TOML_DEPTH + 1) + "]" * (MAX_TOML_DEPTH + 1) + "\n")
    with pytest.raises(ConfigError) as caught:
        load_model(path, Team, "toml", what="team file", fix="x")
    assert caught.value.key == "(syntax)" and "nested deeper" in caught.value.problem


def test_a_strict_model_is_frozen_and_refuses_unknown_keys():
    team = Team(name="a")
    with pytest.raises(ValidationError):
        team.name = "b"  # type: ignore[misc]
    with pytest.raises(ValidationError) as caught:
        Team.model_validate({"name": "a", "size": 3})
    assert first_problem(caught.value) == "size: Extra inputs are not permitted"
    with pytest.raises(ConfigError) as said:
        validate(Team, {"name": "a", "size": 3}, "team.toml")
    assert str(said.value) == "team.toml: size: Extra inputs are not permitted"


def test_a_problem_at_the_top_level_names_the_document():
    with pytest.raises(ValidationError) as caught:
        Team.model_validate([])
    assert first_problem(caught.value, "(file)").startswith("(file): ")
    with pytest.raises(ConfigError) as said:
        validate(Team, [], "team.toml")
    assert said.value.key == "(top level)"


def test_a_json_document_ssw_wrote_is_parsed_and_checked_in_one_step():
    assert validate(Team, b'{"name": "a"}', "team.json", from_json=True) == Team(name="a")
    for text, key in ((b'{"name": 1}', "name"), (b"{", "(top level)")):
        with pytest.raises(ConfigError) as said:
            validate(Team, text, "team.json", fix="delete it", from_json=True)
        assert (said.value.key, said.value.fix) == (key, "delete it")
