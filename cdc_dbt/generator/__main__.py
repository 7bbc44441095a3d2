"""`python -m cdc_dbt.generator`: see `cdc_dbt.generator.cli`."""

import sys

from cdc_dbt.generator.cli import main

if __name__ == "__main__":
    sys.exit(main())
