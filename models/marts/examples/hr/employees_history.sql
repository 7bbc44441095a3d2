{{ cdc_dbt.cdc_typed_history() }}
