{#
    Nothing is lost: every landed record is a change, a quarantine row or a counted ignored record.
    Returns each topic where landed records and their destinations disagree.
#}

select
    topic,
    landed_records,
    changes,
    quarantined,
    unaccounted
from {{ ref('cdc_reconciliation') }}
where unaccounted != 0
