"""Which test files a change can affect, from the repository's own static import graph.

Every `.py` file of the repository is read (virtual environments, `.git`, caches and build output
skipped) and its import statements are parsed with `ast`. A file is known by every module name it
can be imported as: its package path (folders with `__init__.py`), its path from the repository
root, from `src/`, and from pytest's `pythonpath` folders. The reverse of the import graph leads
from the changed files to everything that imports them, directly or through other modules; the
test files among those, the changed test files themselves and the tests beside and below an
affected `conftest.py` are the impacted tests.

What a static graph cannot see (dynamic imports built at run time, data files, plugins, entry
points) is why the full suite always runs after the impacted tests pass: see
docs/decisions/0006-impacted-tests.md.

Speed: only the lines that start an import statement are parsed (a file whose snippets do not
parse is parsed whole: import_scan.py), and results are cached per file by modification time and
size, so a repository of a thousand files answers well under a second.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from stepswitch.gates.import_scan import _parse_source, _Parsed, python_files
from stepswitch.gates.pytest_config import PytestConfig, read_pytest_config


def is_test_file(rel_path: str) -> bool:
    """pytest's default file names: test_*.py and *_test.py (ImportGraph uses the project's own
    `python_files` and `testpaths`)."""
    return PytestConfig().is_test_file(rel_path)


_CACHE: dict[str, tuple[int, int, _Parsed]] = {}


def _parse_file(path: Path) -> _Parsed:
    try:
        stat = path.stat()
    except OSError:
        return _Parsed(frozenset(), ())
    key = str(path)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stat.st_mtime_ns and cached[1] == stat.st_size:
        return cached[2]
    try:
        data = path.read_bytes()
    except OSError:
        return _Parsed(frozenset(), ())
    parsed = _parse_source(data)
    _CACHE[key] = (stat.st_mtime_ns, stat.st_size, parsed)
    return parsed


def _dotted(parts: Iterable[str]) -> str | None:
    parts = list(parts)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


# How much likelier to fail than a test that reaches the change through helpers, for ordering
# (a file of this weight runs first unless it is that many times slower).
LIKELIER_NAMED = 8.0
LIKELIER_DIRECT = 3.0


def _stem(rel: str) -> str:
    """What a module and its test file share: `tz` for tz/tz.py, tz/__init__.py, test_tz.py and
    tz_test.py; `parser` for parser/_parser.py."""
    path = PurePosixPath(rel)
    name = path.parent.name if path.stem == "__init__" else path.stem
    name = name.removeprefix("test_").removesuffix("_test") if name != "test" else name
    return name.strip("_")


# Folder names that mark the test side of a repository: a non-test module there is a helper.
TEST_FOLDERS = frozenset({"test", "tests", "testing"})


def _pythonpath_roots(config: PytestConfig) -> list[str]:
    out = []
    for entry in config.pythonpath:
        clean = PurePosixPath(entry.strip()).as_posix()
        out.append("" if clean in (".", "") else clean.strip("/") + "/")
    return out


class ImportGraph:
    """The repository's modules, what each file imports, and who imports each module name."""

    def __init__(self, root: Path, pytest_config: PytestConfig | None = None) -> None:
        self.root = root
        self.pytest = pytest_config or read_pytest_config(root)
        self.files = python_files(root)
        self._packages = {
            f[: -len("/__init__.py")] for f in self.files if f.endswith("/__init__.py")
        }
        self._roots = ["", "src/", *_pythonpath_roots(self.pytest)]
        self._tests = {f for f in self.files if self.pytest.is_test_file(f)}
        test_dirs = {PurePosixPath(f).parent.as_posix() for f in self._tests}
        self._helpers = {
            f
            for f in self.files
            if f not in self._tests
            and (
                PurePosixPath(f).name == "conftest.py"
                or PurePosixPath(f).parent.as_posix() in test_dirs
                or TEST_FOLDERS & set(PurePosixPath(f).parent.parts)
            )
        }
        self.importers: dict[str, set[str]] = {}
        self.explicit: dict[str, set[str]] = {}  # imported by name, not only as a parent package
        for rel in self.files:
            named, everything = self._imports(rel)
            for name in everything:
                self.importers.setdefault(name, set()).add(rel)
            for name in named:
                self.explicit.setdefault(name, set()).add(rel)

    def module_names(self, rel: str) -> set[str]:
        """Every dotted name `rel` can be imported as (works for deleted files too)."""
        path = PurePosixPath(rel)
        if path.suffix != ".py":
            return set()
        parts = [*path.parent.parts, path.stem] if path.stem != "__init__" else [*path.parent.parts]
        names: set[str] = set()
        # Its package path: climb while the folder holds an __init__.py.
        folder = path.parent
        package: list[str] = [] if path.stem == "__init__" else [path.stem]
        while folder.as_posix() != "." and folder.as_posix() in self._packages:
            package.insert(0, folder.name)
            folder = folder.parent
        if not package:
            package = [path.parent.name]  # a deleted __init__.py: the listing no longer has it
        dotted = _dotted(package)
        if dotted:
            names.add(dotted)
        for base in self._roots:
            if base and not rel.startswith(base):
                continue
            sub = parts[len(PurePosixPath(base).parts) if base else 0 :]
            dotted = _dotted(sub)
            if dotted:
                names.add(dotted)
        return names

    def _imports(self, rel: str) -> tuple[set[str], set[str]]:
        """(the names `rel` imports as written, those with every parent package)."""
        parsed = _parse_file(self.root / rel)
        wanted = set(parsed.absolute)
        if parsed.relative:
            is_init = PurePosixPath(rel).stem == "__init__"
            for own in self.module_names(rel):
                package = own.split(".") if is_init else own.split(".")[:-1]
                for level, module, names in parsed.relative:
                    if level - 1 > len(package):
                        continue
                    base = package[: len(package) - (level - 1)]
                    target = ".".join([*base, *([module] if module else [])])
                    if target:
                        wanted.add(target)
                        wanted.update(f"{target}.{n}" for n in names)
        out: set[str] = set()
        for name in wanted:
            pieces = name.split(".")
            out.update(".".join(pieces[: i + 1]) for i in range(len(pieces)))
        return wanted, out

    def _step(self, importer: str, name: str) -> int:
        # A package __init__ that re-exports, a test helper or a conftest passes the change on
        # at no cost; importing only a parent package (`import a.b` runs a/__init__) costs one
        # more hop than importing the module by name.
        free = importer in self._helpers or importer.endswith("__init__.py")
        by_name = importer in self.explicit.get(name, ())
        return (0 if free else 1) + (0 if by_name else 1)

    def distances(self, changed: Iterable[str]) -> dict[str, int]:
        """Each affected file and how far it is from a changed file (0: changed; a test that
        imports a changed module by name, or through a helper or a re-export: 1)."""
        start = {c for c in changed if c.endswith(".py")}
        seen = dict.fromkeys(start, 0)
        queue = [(0, c) for c in sorted(start)]
        while queue:
            hops, current = heapq.heappop(queue)
            if hops > seen.get(current, hops):
                continue
            for name in self.module_names(current):
                for importer in self.importers.get(name, ()):
                    far = hops + self._step(importer, name)
                    if far < seen.get(importer, far + 1):
                        seen[importer] = far
                        heapq.heappush(queue, (far, importer))
        return seen

    def test_distances(self, changed: Iterable[str]) -> dict[str, int]:
        """Each impacted test file and its distance: by its own imports, or one more than an
        affected conftest.py above it; a changed test file is at 0."""
        distance = self.distances(changed)
        out: dict[str, int] = {}

        def put(rel: str, hops: int) -> None:
            if rel in self._tests and hops < out.get(rel, hops + 1):
                out[rel] = hops

        for rel, hops in distance.items():
            put(rel, max(hops, 1) if hops else 0)
        for conftest, hops in distance.items():
            for test in self._under_conftest(conftest):
                put(test, hops + 1)
        return out

    def _under_conftest(self, rel: str) -> list[str]:
        """The test files a conftest.py at rel applies to (its folder's and below); none when
        rel is another file."""
        if PurePosixPath(rel).name != "conftest.py":
            return []
        folder = PurePosixPath(rel).parent.as_posix()
        prefix = "" if folder == "." else folder + "/"
        return [test for test in self._tests if test.startswith(prefix)]

    def links(self, changed: Iterable[str]) -> dict[str, int]:
        """Each impacted test file and how many imports lie between it and a changed file, every
        import counted (helpers, re-exports and conftest files too; a test under an affected
        conftest is one more than the conftest). For ordering only: a test that imports the
        changed module itself is likelier to test it than one that reaches it through a
        helper everybody imports."""
        start = {c for c in changed if c.endswith(".py")}
        seen = dict.fromkeys(start, 0)
        frontier = sorted(start)
        while frontier:
            nxt: list[str] = []
            for current in frontier:
                for name in self.module_names(current):
                    for importer in sorted(self.importers.get(name, ())):
                        if importer not in seen:
                            seen[importer] = seen[current] + 1
                            nxt.append(importer)
            frontier = nxt
        out = {rel: hops for rel, hops in seen.items() if rel in self._tests}
        for conftest, hops in seen.items():
            for test in self._under_conftest(conftest):
                if hops + 1 < out.get(test, hops + 2):
                    out[test] = hops + 1
        return out

    def impacted_tiers(
        self, changed: Iterable[str], durations: Mapping[str, float] | None = None
    ) -> tuple[list[str], list[str]]:
        """(nearest, wider): the tests at distance <= 1, then the other impacted tests, each in
        the order most likely to fail fast: nearest first, then by cost (measured seconds, else
        file size) over a guessed likelihood of failing: LIKELIER_NAMED for the test named after
        a changed module (test_tz.py for tz.py), LIKELIER_DIRECT for one that imports a changed
        module itself (`links` 1), 1 for those that reach it through helpers or re-exports."""
        changed = list(changed)
        distance = self.test_distances(changed)
        order = self.rank(distance, durations, changed)
        nearest = [t for t in order if distance[t] <= 1]
        return nearest, [t for t in order if distance[t] > 1]

    def rank(
        self,
        distance: Mapping[str, int],
        durations: Mapping[str, float] | None,
        changed: Iterable[str] = (),
    ) -> list[str]:
        changed = list(changed)
        links = self.links(changed) if changed else {}
        stems = {_stem(c) for c in changed if c.endswith(".py")} - {""}

        def cost(rel: str) -> float:
            if durations and rel in durations:
                return durations[rel]
            try:
                return (self.root / rel).stat().st_size / 50_000  # about 1 s per 50 kB
            except OSError:
                return 0.0

        def key(rel: str) -> tuple[int, float, str]:
            # Smith's rule: shortest expected time to the first failure runs the files by cost
            # over likelihood of failing; the likelihood is only guessed, from the name and
            # from how directly the test imports the change.
            if _stem(rel) in stems:
                weight = LIKELIER_NAMED
            elif links.get(rel, distance[rel]) <= 1:
                weight = LIKELIER_DIRECT
            else:
                weight = 1.0
            return (distance[rel], cost(rel) / weight, rel)

        return sorted(distance, key=key)

    def impacted_tests(self, changed: Iterable[str]) -> list[str]:
        nearest, wider = self.impacted_tiers(changed)
        return sorted([*nearest, *wider])

    def test_files(self) -> list[str]:
        return sorted(self._tests)


def normalise(root: Path, path: str) -> str | None:
    """`path` relative to root as a posix path, or None when it is outside root."""
    given = Path(path)
    if given.is_absolute():
        try:
            given = given.resolve().relative_to(root.resolve())
        except ValueError:
            return None
    clean = PurePosixPath(given.as_posix())
    if ".." in clean.parts:
        return None
    return clean.as_posix().removeprefix("./")


def impacted_tiers(
    root: Path, changed: Iterable[str], durations: Mapping[str, float] | None = None
) -> tuple[list[str], list[str], int]:
    """(nearest, wider, number of test files in the repository); see ImportGraph.impacted_tiers.
    Each list is in the order to run it; durations are seconds per test file, if measured."""
    rel = [r for r in (normalise(root, c) for c in changed) if r]
    if not any(r.endswith(".py") for r in rel):
        return [], [], 0
    graph = ImportGraph(root)
    nearest, wider = graph.impacted_tiers(rel, durations)
    return nearest, wider, len(graph.test_files())


def named_tests(tests: Iterable[str], changed: Iterable[str]) -> list[str]:
    """The test files among `tests` (in their order) named after a changed module: test_tz.py
    and tz_test.py for tz/tz.py or tz/__init__.py, test_parser.py for parser/_parser.py."""
    stems = {_stem(c) for c in changed if c.endswith(".py")} - {""}
    return [t for t in tests if _stem(t) in stems]


def impacted_tests(root: Path, changed: Iterable[str]) -> list[str]:
    """Test files (relative posix paths, sorted) that import a changed module directly or through
    the repository's own modules, the changed test files that still exist, and the tests beside
    and below an affected conftest.py. Empty when nothing Python changed."""
    rel = [r for r in (normalise(root, c) for c in changed) if r]
    if not any(r.endswith(".py") for r in rel):
        return []
    return ImportGraph(root).impacted_tests(rel)
