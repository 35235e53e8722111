"""Names used where vulture cannot see it, each with why (ADR 0059). Vulture reads this file as
code that uses these names; nothing imports it. Decorated entry points (Typer commands, pydantic
validators, pytest fixtures and hooks) are left out by `[tool.vulture]` in pyproject.toml.

A definition nothing uses does not belong here: remove it."""

from types import SimpleNamespace

_ = SimpleNamespace()

# Fields of a file ssw writes (summary.json, the hand pricing table, a ledger row's columns):
# given by keyword when the file is made, read by people, the page and other programs.
_.harness_errors
_.dollars_total
_.tokens_per_task_run
_.cached_tokens_per_task_run
_.uncached_tokens_per_task_run
_.minutes_per_task_run
_.steps_per_task_run
_.escalations_per_task_run
_.dollars_ratio
_.dollars_ratio_high_bounds
_.pass_rate_difference
_.passed_only_by_a
_.passed_only_by_b
_.mcnemar_p
_.requested_to_served
_.bootstrap
_.mcnemar
_.planned_task_runs
_.rule_source
_.arithmetic
_.created_at
_.reserved_at
_.settled_at

# Read by name: prompts.step_context shows a step the TaskBrief fields its table says it sees.
_.diagnosis
_.review_feedback

# A metric's one-line description, given where each metric is declared (claims/metrics/), read by
# people there; vulture had taken a local variable of the same name for a use of it.
_.doc

# Protocols and settings a library calls or reads by name.
_.list_commands  # click.Group: the order `ssw --help` lists commands in
_.display_type  # typer's parameters: what --help prints after a value
_.get_usage_pieces  # click.Parameter: an argument's piece of the usage line
_.short_help  # click.Command: its line in its group's command list
_.close_connection  # http.server.BaseHTTPRequestHandler
_.address_family  # socketserver.TCPServer
_.server_name  # http.server.HTTPServer
_.server_port
_.protocol_version
_.server_version
_.daemon_threads  # socketserver.ThreadingMixIn
_.do_GET
_.do_HEAD
_.log_message
_.maxfail  # pytest's option, set by the gates' plugin
_.pytestmark  # pytest: marks every test of a module
_.__loader__  # the import system's, on a module made by hand (sitecustomize, the test zygote)
_.__spec__
_.__cached__
_.__package__
_.tb  # the context manager protocol's __exit__ takes it

# xllamacpp.CommonParams, read by the llama.cpp server the tests start.
_.n_ctx
_.n_parallel
_.n_threads
_.cache_prompt
_.use_jinja
_.chat_template
_.warmup

# pytest fixtures a test asks for by parameter only for what they set up.
_.extra_models
_.windowed

# Each language's detection, found by name in gates/lang/registry.py (DETECTORS).
_.detect

# Python calls a module's __getattr__ for a name it lacks (stepswitch.bench's lazy names), and
# reads sys.dont_write_bytecode, which the CLI sets for ssw's own start.
_.__getattr__
_.dont_write_bytecode
