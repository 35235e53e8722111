"""A simulated model population (ADR 0053): a loopback server in the chat-completions wire format
that plays named tiers of models on a bench task whose reference change it knows. Each tier
applies the reference with a stated probability, else makes a plausible wrong change; its
navigate and read calls err at a stated rate; its usage is reported as a provider reports it.
Seeded and parameterised by a population TOML. Nothing made with it says anything about a model:
every record it touches is labelled simulated (and scripted: no model is called)."""
