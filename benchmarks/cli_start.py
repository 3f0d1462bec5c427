"""What an ``elelem`` process costs before it does anything, counted by
callgrind: ``python -m benchmarks.cli_start [--src DIR] [--keep DIR]``.

Each row is one whole fresh process under ``valgrind --tool=callgrind``
(hash seed fixed, ``PYTHONHASHSEED=0``), its total instruction count:

- ``python``: ``python -c pass``, the interpreter's own start (the floor);
- ``import elelem``: ``python -c "import elelem"``;
- ``ask import``: the group and the ``ask`` command's module, as ``elelem
  ask`` loads them before it parses its options;
- ``ask one-shot``: a real ``elelem ask -m anthropic:… --no-store hello``
  through the command's entry point (:func:`elelem.command.main`), against
  a loopback Anthropic stand-in (:class:`elelem.testing.servers.LoopbackServer`,
  in this process, not counted) answering one short text; its output must be
  the exact answer and usage line.

The environment holds no ``ELELEM_*`` of the caller's, a private ``HOME``
and no config; nor ``SSL_CERT_FILE``/``SSL_CERT_DIR``, as the CLI tests'
(``--ca-env`` keeps them: the CA bundle they name is read where it is
needed, here never, but how much it would have cost depends on them).  ``--src DIR`` measures another tree's ``elelem`` (its
``src`` first on ``PYTHONPATH``) with this harness, for a before/after in
one run.  About half a minute of one core per tree.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.corpus import ROOT

ANSWER = "Hi."
EXPECTED = "Hi.\n\nusage: 120 in · 9 out · $0.0005\n"
"""What the one-shot must print: the answer, then the usage line."""

ROWS: tuple[tuple[str, str], ...] = (
    ("python", "pass"),
    ("import elelem", "import elelem"),
    ("ask import", "from elelem.cli import main\nimport elelem.cli.ask"),
    (
        "ask one-shot",
        "import sys\nfrom elelem.command import main\n"
        "sys.argv = ['elelem', 'ask', '-m', 'anthropic:claude-sonnet-4-5', '--no-store', 'hello']\n"
        "main()",
    ),
)
"""Each row's name and the code its process runs."""


def _total(out: Path) -> int:
    """The instruction count callgrind wrote for the whole process."""
    for line in out.read_text(encoding="utf-8").splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise ValueError(f"no total in {out}")


CA_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
"""Left out unless ``--ca-env``, as the CLI tests' environment leaves them out."""


def _env(home: Path, src: Path | None, ca_env: bool) -> dict[str, str]:
    left_out = {"PYTHONDONTWRITEBYTECODE", *(() if ca_env else CA_SETTINGS)}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ELELEM_", "ANTHROPIC_")) and k not in left_out
    }
    env.update(
        PYTHONHASHSEED="0",
        HOME=str(home),
        ELELEM_HOME=str(home / "home"),
        XDG_CONFIG_HOME=str(home / "config"),
        LANG="C.UTF-8",
    )
    if src is not None:
        env["PYTHONPATH"] = str(src)
    else:
        env.pop("PYTHONPATH", None)
    return env


def _run(cmd: list[str], name: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One process of row ``name``, checked; the one-shot against its stand-in."""
    from cli_helpers import text_frames
    from elelem.testing.servers import LoopbackServer, replay, sse_body

    if name != "ask one-shot":
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{name} failed:\n{done.stderr[-3000:]}")
        return done
    reply = replay(sse_body(text_frames(ANSWER, "msg_01Start")))
    with LoopbackServer([reply], lifetime=900) as server:  # callgrind is ~50x slower
        run_env = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-x"}
        done = subprocess.run(cmd, env=run_env, capture_output=True, text=True)
    if done.returncode != 0 or done.stdout != EXPECTED:
        raise RuntimeError(f"one-shot failed: {done.stdout!r}\n{done.stderr[-3000:]}")
    return done


def measure(
    src: Path | None, keep: Path | None = None, tag: str = "", ca_env: bool = False
) -> dict[str, int]:
    """Each row's instruction count; the callgrind files are left in
    ``keep`` when given (for ``callgrind_annotate``)."""
    sys.path.insert(0, str(ROOT / "tests"))  # cli_helpers: the stand-in's frames
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="elelem-cli-start-") as tmp:
        home = Path(tmp)
        env = _env(home, src, ca_env)
        for name, code in ROWS:
            out = (keep or home) / f"cg.{tag}{name.replace(' ', '_')}.out"
            cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                   sys.executable, "-c", code]  # fmt: skip
            for warm_up in (True, False):  # the first writes the bytecode, uncounted
                _run(cmd[3:] if warm_up else cmd, name, env)
            counts[name] = _total(out)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, help="another tree's src, measured beside this one")
    parser.add_argument("--keep", type=Path, help="leave the callgrind files in this directory")
    parser.add_argument(
        "--ca-env", action="store_true", help="keep the caller's SSL_CERT_FILE and SSL_CERT_DIR"
    )
    args = parser.parse_args(argv)
    trees: dict[str, Path | None] = {"this tree": None}
    if args.src is not None:
        trees = {"--src": args.src.resolve(), **trees}
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    results = {
        label: measure(src, args.keep, "src." if src else "", args.ca_env)
        for label, src in trees.items()
    }
    labels = list(results)
    print(f"{'row':<14}" + "".join(f"{label:>16}" for label in labels), end="")
    print(f"{'ratio':>8}" if len(labels) == 2 else "")
    for name, _ in ROWS:
        cells = [results[label][name] for label in labels]
        line = f"{name:<14}" + "".join(f"{c / 1e6:>14.1f} M" for c in cells)
        if len(cells) == 2:
            line += f"{cells[1] / cells[0]:>8.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
