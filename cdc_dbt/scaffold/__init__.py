"""`cdc-dbt scaffold <source_table>`: a typed mart for a landed source table, without Spark.

It reads the landed files itself (`landed_files`), parses every record with the same parsing core
the build registers as UDFs (`udfs`), and keeps what the records of one source table say about its
columns (`evidence`). Each column's Spark type comes from the best information landed, in this
order (`mart`, with the mappings of `cdc_dbt.column_types`):

1. the Debezium JsonConverter schema of the row (`schema` beside `payload`);
2. the Qlik Replicate metadata message of the table (`tableStructure.tableColumns`);
3. the JSON types of the values seen in the rows (MongoDB's Extended JSON wrappers included,
   since they say more than the unwrapped value: `$numberLong`, `$date`, ...).

It writes `<t>_current.sql` and `<t>_history.sql`, one macro call each, and `_<t>__models.yml`,
the one declaration both read (`declaration`). The command itself, its arguments and the choice
of the table, is `command`; names and one-line text, `names`.
"""
