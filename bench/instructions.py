"""`python -m bench.instructions [--root DIR ...]`: instructions executed from spawn to the first frame (valgrind
callgrind's Ir, in a pty), of the minimal Textual app and of `stacktop --config F`, `--demo` and the big demo,
each also up to App.run (imports, config, recorder, the app's construction). Counts do not depend on the host's
load, so a change of a few milliseconds shows where wall-time rounds on a loaded 2-core host cannot tell it.
Several --root: the same counts for other checkouts (PYTHONPATH), e.g. a worktree of an older commit. Needs
valgrind; about 15 s a count."""

from __future__ import annotations

import argparse
import compileall
import os
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT
from bench.ptyapp import PtyApp
from bench.ui import BIG_DEMO

CHILD = Path(__file__).resolve().parent / "first_frame_child.py"


def _config(directory: Path) -> Path:
    """A config naming a cloud and RabbitMQ that nothing reads before the first frame."""
    clouds = directory / "clouds.yaml"
    clouds.write_text(
        "clouds:\n  bench:\n    auth:\n      auth_url: http://127.0.0.1:9/identity/v3\n"
        "      username: admin\n      password: bench\n      project_name: admin\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n"
    )
    path = directory / "stacktop.toml"
    path.write_text(
        f'[openstack]\ncloud = "bench"\nclouds_file = "{clouds}"\n\n[rabbitmq]\n'
        'management_url = "http://127.0.0.1:9"\nuser = "guest"\npassword_env = "STACKTOP_BENCH_RMQ"\n\n'
        f'[recorder]\ndir = "{directory / "rec"}"\n'
    )
    return path


def count(argv: list[str], root: Path, directory: Path) -> int:
    """Ir of `first_frame_child.py ARGV` under callgrind, with `root` first on the module path."""
    out = directory / f"callgrind.{len(list(directory.glob('callgrind.*')))}"
    env = {
        "HOME": str(directory),
        "XDG_STATE_HOME": str(directory / "state"),
        "XDG_DATA_HOME": str(directory / "data"),
        "TMPDIR": str(directory),
        "PYTHONPATH": str(root),
        "STACKTOP_BENCH_RMQ": "guest",
    }
    app = PtyApp(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, str(CHILD), *argv],
        env=env,
        cwd=directory,
    ).start()
    try:
        app.proc.wait(timeout=600)  # type: ignore[union-attr]
    finally:
        app.stop()
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction count in {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.splitlines()[0])
    ap.add_argument("--root", action="append", type=Path, help="a checkout to measure (default: this one)")
    args = ap.parse_args(argv)
    roots = args.root or [ROOT]
    directory = Path(tempfile.mkdtemp(prefix="stacktop-instructions-"))
    cfg = _config(directory)
    runs = {
        "minimal Textual app": ["minimal"],
        "`stacktop --config F`": ["stacktop", "--config", str(cfg)],
        "`stacktop --demo`": ["stacktop", "--demo"],
        f"`stacktop --demo {' '.join(BIG_DEMO)}`": ["stacktop", "--demo", *BIG_DEMO],
    }
    for root in roots:  # every module compiled before counting, as an installed package has them
        for sub in ("tui", "bench"):
            compileall.compile_dir(str(root / sub), quiet=1, force=False)
    print("| checkout | program | to App.run (M) | to the first frame (M) | over the minimal app (M) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for root in roots:
        floor = None
        for name, run in runs.items():
            to_run = count([*run, "--stop-at-run"], root, directory)
            to_frame = count(run, root, directory)
            floor = to_frame if floor is None else floor
            print(
                f"| {root} | {name} | {to_run / 1e6:,.0f} | {to_frame / 1e6:,.0f} | {(to_frame - floor) / 1e6:+,.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
