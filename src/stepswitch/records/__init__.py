"""What a run leaves on disk: run.json, steps.jsonl, money. Pydantic models with a schema
version; old records keep loading through `records.folder.load_run`."""
