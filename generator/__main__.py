"""`python -m generator`: see `generator.cli`."""

import sys

from generator.cli import main

if __name__ == "__main__":
    sys.exit(main())
