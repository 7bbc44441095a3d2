"""The same six `cdc-dbt` commands cold (each starts its own JVM and session, as without a server) and
warm (through `cdc-dbt serve` on the same warehouse), in one run.

    python bench/warm_server.py [--repeat 2]

A demo warehouse is built first (not timed). Then each command runs `--repeat` times cold, the
server starts, and each runs `--repeat` times warm; the best time of each is printed with the
ratio cold / warm. The commands: a `sql` count, `ls`, `compile` of one model, `show` of one model,
and an incremental `build` with nothing new landed (its data tests included, as a user runs it):
once as a user gets it (answered from the last build's stamp, cdc_dbt/up_to_date.py), and once
made to run all the same (`CDC_SKIP_UNCHANGED=false`), the work a build costs when something did
change.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cdc_dbt.settings import PACKAGE_PROJECT_DIR

CDC_DBT = str(Path(sys.executable).parent / "cdc-dbt")
COMMANDS: dict[str, tuple[list[str], dict[str, str]]] = {
    "sql count": (["sql", "select count(*) as n from cdc.cdc_current"], {}),
    "ls": (["ls", "--select", "cdc_current"], {}),
    "compile": (["compile", "--select", "cdc_current"], {}),
    "show": (["show", "--select", "cdc_current", "--limit", "5"], {}),
    "build, nothing new": (["build"], {}),
    "build, made to run": (["build"], {"CDC_SKIP_UNCHANGED": "false"}),
}
"""Each command's arguments and the variables it runs with besides the run's own."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run(args: list[str], environment: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([CDC_DBT, *args], cwd=PACKAGE_PROJECT_DIR, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"cdc-dbt {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def best_times(environment: dict[str, str], repeat: int) -> dict[str, float]:
    return {
        name: min(run(args, {**environment, **variables}) for _ in range(repeat))
        for name, (args, variables) in COMMANDS.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cdc-dbt-bench-server-"))
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith(("CDC_", "DBT_"))},
        "CDC_LANDING_DIR": str(PACKAGE_PROJECT_DIR / "demo" / "landing"),
        "CDC_WAREHOUSE_DIR": str(folder / "warehouse"),
        "CDC_SERVER_PORT": str(free_port()),
    }
    try:
        print("building the demo warehouse (not timed) ...", flush=True)
        run(["build"], environment)
        cold = best_times(environment, options.repeat)
        server = subprocess.Popen(
            [CDC_DBT, "serve"], cwd=PACKAGE_PROJECT_DIR, env=environment, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
        assert server.stdout is not None
        print(server.stdout.readline().strip(), flush=True)
        try:
            warm = best_times(environment, options.repeat)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nbest of {options.repeat}, seconds\n")
    print(f"{'command':<22}{'cold':>9}{'warm':>9}{'cold / warm':>13}")
    for name in COMMANDS:
        print(f"{name:<22}{cold[name]:>9.2f}{warm[name]:>9.2f}{cold[name] / warm[name]:>12.1f}x")


if __name__ == "__main__":
    main()
