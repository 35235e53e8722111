"""The replay page (`ssw site build`) and the local dashboard (`ssw serve`): one loader of run and
bench run folders (sources.py), one page renderer (page.py), one server over both (serve.py).
See docs/decisions/0017-replay-page.md."""
