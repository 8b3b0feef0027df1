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
    def tables(self) -> dict[str, list[tuple[str, str, bytes | list[str | None], bytes | None]]]:
        """``{table: [(column, kind, data, mask), ...]}``.

        ``kind`` is ``"f64"``, ``"u64"`` or ``"bool"`` (``data`` is little-endian bytes) or
        ``"str"`` (``data`` is a list). ``mask`` (bytes of 0/1, 1 = present) is given for
        columns with missing values, else ``None``.
        """
    def summary_json(self) -> str:
        """The run's ``summary.json`` document."""
    def summary_text(self) -> str:
        """The summary table the command line prints."""
    def save(self, dir: str, force: bool = False) -> None:
        """Write Parquet tables, ``summary.json`` and ``provenance.json`` into ``dir``,
        replacing only files pathpool wrote there; raises ``FileExistsError`` for a directory
        of other files unless ``force``."""

def run(
    text: str,
    format: str,
    source_name: str,
    overrides: list[tuple[str, str]],
    seed: int | None = None,
    progress: bool = False,
) -> RunHandle:
    """Compile and run a scenario (``format`` is ``"toml"`` or ``"json"``) without the GIL.

    Raises :class:`ScenarioError` for invalid scenarios and ``KeyboardInterrupt`` on Ctrl-C.
    """

def check(
    text: str, format: str, source_name: str, overrides: list[tuple[str, str]]
) -> tuple[int, int, float]:
    """Validate a scenario; return (flows, directed links, duration in seconds)."""

def normalize(text: str, format: str, source_name: str, overrides: list[tuple[str, str]]) -> str:
    """The scenario as JSON after overrides, with every field spelled out."""

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
    def gather(self) -> list[tuple[str, str, bytes | list[str | None], bytes | None]]:
        """Write ``sweep.parquet`` and ``sweep.csv``; return the columns as ``RunHandle.tables``."""
    def identical_replicates(self) -> str | None:
        """The warning when some grid point's replicates are identical, or None."""

def sweep_plan(
    text: str,
    format: str,
    source_name: str,
    overrides: list[tuple[str, str]],
    grid: list[tuple[str, list[str]]],
    reps: int | None,
    seed: int | None,
    table: str | None,
    metrics: list[str] | None,
    out: str,
) -> SweepPlan:
    """Validate a sweep of a scenario (every value and grid point is compiled)."""

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
