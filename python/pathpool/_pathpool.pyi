"""pathpool's Rust core (built by maturin from crates/pathpool-py).

Use the façade in :mod:`pathpool` instead of these functions directly.
"""

__version__: str

class ScenarioError(ValueError):
    """A scenario is invalid: the message names the file, line, field and what is allowed,
    one line per problem (every problem found, up to 20)."""

    errors: list[str]
    """The problems, one per entry, in file order."""

class RunHandle:
    """The results of one run, held in Rust until asked for."""

    @property
    def wall_time_s(self) -> float:
        """Wall-clock seconds the simulation took."""
    @property
    def seed(self) -> int:
        """The seed of the run."""
    def tables(self) -> dict[str, bytes]:
        """``{table: Parquet bytes}``, in the encoding of the result files; read them with
        ``pathpool._tables.frame`` (pyarrow)."""
    def summary_json(self) -> str:
        """The run's ``summary.json`` document."""
    def summary_text(self) -> str:
        """The summary table the command line prints."""
    def save(self, dir: str, force: bool = False) -> None:
        """Write Parquet tables, ``summary.json`` and ``provenance.json`` into ``dir``,
        replacing only files pathpool wrote there; raises ``FileExistsError`` for a directory
        of other files unless ``force``."""

class CompiledScenario:
    """A scenario parsed by the Rust core: each check, run and sweep starts from it."""

    def __init__(
        self, text: str, format: str, source_name: str, overrides: list[tuple[str, str]]
    ) -> None:
        """Parse ``text`` (``format`` is ``"toml"`` or ``"json"``) with ``overrides`` applied.

        Raises :class:`ScenarioError` for a malformed scenario (syntax, unknown fields, bad
        values or overrides)."""
    @property
    def source(self) -> str:
        """Where the scenario came from (a file name, or ``<scenario>``)."""
    def check(self) -> tuple[int, int, float]:
        """Validate the whole scenario; return (flows, directed links, duration in seconds)."""
    def normalized_json(self) -> str:
        """The scenario as JSON after overrides, with every field spelled out."""
    def run(self, seed: int | None = None, progress: bool = False) -> RunHandle:
        """Compile and run the scenario without the GIL.

        Raises :class:`ScenarioError` for an invalid scenario and ``KeyboardInterrupt`` on
        Ctrl-C.
        """
    def sweep_plan(
        self,
        grid: list[tuple[str, list[str]]],
        set: list[tuple[str, str]],
        reps: int | None,
        seed: int | None,
        table: str | None,
        metrics: list[str] | None,
        out: str,
    ) -> SweepPlan:
        """Validate a sweep of this scenario (every value and grid point is compiled)."""

def parse_count() -> int:
    """How many scenario texts the extension has parsed (for tests)."""

class SweepPlan:
    """A validated sweep and its directory (``docs/sweeps.md``)."""

    @property
    def out(self) -> str:
        """The sweep directory."""
    @property
    def points(self) -> int:
        """Number of grid points."""
    def __len__(self) -> int:
        """Number of runs."""
    def prepare(self) -> None:
        """Create the directory and write ``manifest.json``.

        Raises :class:`ScenarioError` if the directory holds a sweep of another scenario.
        """
    def pending(self) -> list[int]:
        """Indices of the runs not finished yet."""
    def run_id(self, i: int) -> str:
        """The stable id of run ``i`` (its directory under ``runs/``)."""
    def task(self, i: int) -> str:
        """Run ``i`` as a self-contained JSON task for :func:`sweep_run_task`."""
    def store(self, i: int, files: list[tuple[str, bytes]]) -> None:
        """Store the result files of run ``i``, then mark it done."""
    def run_local(self, jobs: int | None = None, progress: bool = False) -> int:
        """Run the pending runs on ``jobs`` threads without the GIL; return how many ran.

        Raises ``KeyboardInterrupt`` on Ctrl-C (finished runs stay done) and ``RuntimeError``
        if runs failed.
        """
    def gather(self) -> bytes:
        """Write ``sweep.parquet`` and ``sweep.csv``; return the table as Parquet bytes."""
    def identical_replicates(self) -> str | None:
        """The warning when some grid point's replicates are identical, or None."""

def sweep_plan_open(dir: str) -> SweepPlan:
    """The sweep prepared in ``dir`` (its ``manifest.json``), validated again."""

def sweep_plan_file(
    path: str,
    grid: list[tuple[str, list[str]]],
    set: list[str],
    reps: int | None,
    seed: int | None,
    table: str | None,
    metrics: list[str] | None,
    out: str,
) -> SweepPlan:
    """Validate the sweep of a sweep file, with arguments on top (``set`` as ``KEY=VALUE``)."""

def sweep_run_task(task: str) -> list[tuple[str, bytes]]:
    """Run one sweep task without the GIL; return its result files (what Dask workers call)."""

def is_sweep_file(text: str) -> bool:
    """Whether ``text`` is a sweep file (a TOML document with a top-level ``scenario`` key)."""

def reproductions() -> list[tuple[str, str, str]]:
    """Every reproduction: (id, title, source), in documentation order."""

def reproduce(
    id: str,
    out: str,
    quick: bool = True,
    seeds: int | None = None,
    jobs: int | None = None,
    overrides: list[tuple[str, str]] = ...,
    zoo_dir: str | None = None,
    server_quickack: bool = False,
    settings: list[str] = ...,
    progress: bool = False,
) -> tuple[str, str]:
    """Runs reproduction ``id``, writes ``out``; returns (comparisons as JSON lines,
    observations as a JSON list)."""
