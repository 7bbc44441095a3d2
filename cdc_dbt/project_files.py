"""What cdc-dbt's dbt project is made of, beside the code in a checkout: what a user's copy of the
project holds, and a wheel carries (setup.py adds the demo). Data only, without imports: setup.py
reads this file at build time, without importing the package and so its dependencies."""

DBT_PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
DBT_PROJECT_FOLDERS = ("models", "macros", "tests/generic", "tests/singular", "tests/fixtures")
