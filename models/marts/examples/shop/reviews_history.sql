{{ cdc_typed_history() }}
