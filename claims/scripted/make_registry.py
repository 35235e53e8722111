"""Write the registry the scripted C-003 bench ran with: the shipped scripted preset, plus one
scripted model per model of the demo's as-if ladder (src/stepswitch/demo/as_if.py), named
`scripted-as-<model>` and priced at that model's list price, copied here from the shipped preset
(registry/providers/<provider>.toml) by this script, never typed. The replies stay scripted: no
model is called, and every record says scripted; only the ledger's arithmetic is put to work on
non-zero prices.

    .venv/bin/python claims/scripted/make_registry.py claims/scripted/registry
    SSW_REGISTRY=claims/scripted/registry ssw bench run ...   (see claims/scripted/README.md)
"""

from __future__ import annotations

import sys
from pathlib import Path

import tomli_w

from stepswitch.demo.as_if import as_if_models
from stepswitch.registry.presets import SCRIPTED_PROVIDER, load_registry, parse_preset, preset_path

PREFIX = "scripted-as-"


def scripted_preset() -> dict[str, object]:
    shipped = load_registry()
    preset = shipped[SCRIPTED_PROVIDER].model_dump(exclude_none=True)
    models = preset["models"]
    assert isinstance(models, dict)
    for worker, played in sorted(as_if_models(shipped).items()):
        spec = shipped[played.provider].models[played.model]
        price = played.price.model_dump(exclude_none=True)
        price["source"] = (
            f"scripted: no model is called; priced as if served by {played.provider} "
            f"{played.model} (the {worker} worker of the demo's ladder), at its list price "
            f"from {played.price.source}"
        )
        models[PREFIX + played.model] = {
            "family": f"scripted-{spec.family}",
            "capabilities": ["tools", "parallel_tool_calls", "json_schema"],
            "price": price,
        }
    return preset


def main(out: Path) -> None:
    target = preset_path(SCRIPTED_PROVIDER, out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(tomli_w.dumps(scripted_preset()), encoding="utf-8")
    parse_preset(target)  # it loads as a preset, or this fails here
    print(f"wrote {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
