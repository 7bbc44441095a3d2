# Sourced by the README's commands: checks the prerequisites, then creates the project's virtual
# environment and installs the project into it (again only when pyproject.toml changed).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${CDC_VENV:-$ROOT/.venv}"

if ! command -v java >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/java" ]; then
    echo "cdc-dbt needs Java 17 or newer and found none: install a JDK/JRE 17+ (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME" >&2
    exit 1
fi
JAVA_BIN="$( [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && echo "$JAVA_HOME/bin/java" || command -v java )"
JAVA_MAJOR="$("$JAVA_BIN" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
if [ -z "$JAVA_MAJOR" ] || [ "$JAVA_MAJOR" -lt 17 ]; then
    echo "cdc-dbt needs Java 17 or newer; $JAVA_BIN is version ${JAVA_MAJOR:-unknown}" >&2
    exit 1
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "cdc-dbt needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating the virtual environment in $VENV ..." >&2
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.cdc-dbt-installed"
WANTED="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANTED" ]; then
    echo "Installing cdc-dbt and its pinned dependencies (first run: a few minutes) ..." >&2
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    # setuptools tells every editable install, in ten lines, to mind folders named like the
    # package: this checkout is laid out for it, so that notice is left out.
    PYTHONWARNINGS="ignore:Editable installation" "$VENV/bin/python" -m pip install --quiet -e "$ROOT[dev]" >&2
    echo "$WANTED" >"$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
