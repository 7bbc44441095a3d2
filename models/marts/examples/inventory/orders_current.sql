{{ cdc_typed_current() }}
