"""pathpool's Rust core (built by maturin from crates/pathpool-py).

Use the façade in :mod:`pathpool` instead of these functions directly.
"""

__version__: str

class ScenarioError(ValueError):
    """A scenario is invalid: the message names the file, line, field and what is allowed."""

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
    def save(self, dir: str) -> None:
        """Write Parquet tables, ``summary.json`` and ``provenance.json`` into ``dir``."""

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

def cli_main(argv: list[str]) -> int:
    """Run the ``pathpool`` command line; return its exit code."""
