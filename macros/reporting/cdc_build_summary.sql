{#
    The lines a person reads after a build (on-run-end): what this build parsed and where it went.
    A build whose records all went to the quarantine would otherwise end green and silent, so a
    quarantine in this build is a dbt warning (an error under --warn-error), and so are records
    still waiting for the Schema Registry, from this build or an earlier one. Said only when this
    invocation parsed landed records (int_records_parsed_unbound ran), never after `test` or `ls`.
#}
{% macro cdc_build_summary(results) %}
    {%- if not execute or not (results
            | selectattr('node.name', 'equalto', 'int_records_parsed_unbound')
            | selectattr('status', 'equalto', 'success') | list) %}
        {{- return('') -}}
    {%- endif %}
    {%- set records_parsed = cdc_dbt._model_relation('int_records_parsed') %}
    {%- set outcomes = run_query(
        'select outcome, coalesce(reason, ignore_class) as reason, count(*) as records,'
        ~ ' count(distinct struct(source_db, source_table)) as tables'
        ~ ' from ' ~ records_parsed
        ~ ' where parsed_at = ' ~ cdc_dbt.cdc_build_started_at()
        ~ ' group by 1, 2 order by 1, 3 desc, 2'
    ) %}
    {%- set by_outcome = {'change': 0, 'ignored': 0, 'quarantine': 0} %}
    {%- set tables = namespace(changed=0) %}
    {%- set quarantined = [] %}
    {%- for row in outcomes.rows %}
        {%- do by_outcome.update({row['outcome']: by_outcome.get(row['outcome'], 0) + row['records']}) %}
        {%- if row['outcome'] == 'change' %}
            {%- set tables.changed = tables.changed + row['tables'] %}
        {%- elif row['outcome'] == 'quarantine' %}
            {%- do quarantined.append(row['records'] ~ ' ' ~ row['reason']) %}
        {%- endif %}
    {%- endfor %}
    {%- set total = by_outcome.values() | sum %}
    {{- log(
        'cdc-dbt: this build parsed ' ~ total ~ ' new records: ' ~ by_outcome['change'] ~ ' changes to '
        ~ tables.changed ~ ' tables, ' ~ by_outcome['ignored'] ~ ' ignored (tombstones, markers, metadata), '
        ~ by_outcome['quarantine'] ~ ' quarantined.',
        info=True
    ) -}}
    {%- if quarantined %}
        {#- dbt prints the tag on its own warnings, not on a macro's. #}
        {%- do exceptions.warn(
            '[WARNING]: cdc-dbt: this build quarantined ' ~ by_outcome['quarantine'] ~ ' records (' ~ quarantined | join(', ')
            ~ '): see ' ~ cdc_dbt._model_relation('cdc_quarantine') ~ ' for each one, its reason and its text.'
        ) %}
    {%- endif %}
    {{- cdc_dbt._registry_waiting_summary(records_parsed) -}}
    {{- return('') -}}
{% endmacro %}

{#
    The records held for the Schema Registry, whichever build landed them: a registry that did not
    answer (or none configured) must not leave them in the quarantine unnoticed. A dbt warning,
    as the quarantine's, once per build while any waits; the next build retries them.
#}
{% macro _registry_waiting_summary(records_parsed) %}
    {%- set waiting = run_query(
        'select reason, count(*) as records from ' ~ records_parsed
        ~ ' where reason in ' ~ cdc_dbt.cdc_registry_retry_reasons()
        ~ ' group by reason order by reason'
    ) %}
    {%- set counts = [] %}
    {%- set total = namespace(records=0) %}
    {%- for row in waiting.rows %}
        {%- do counts.append(row['records'] ~ ' ' ~ row['reason']) %}
        {%- set total.records = total.records + row['records'] %}
    {%- endfor %}
    {%- if total.records %}
        {%- do exceptions.warn(
            '[WARNING]: cdc-dbt: ' ~ total.records ~ ' Avro records wait for the Schema Registry ('
            ~ counts | join(', ') ~ '; CDC_SCHEMA_REGISTRY_URL): they stay in '
            ~ cdc_dbt._model_relation('cdc_quarantine') ~ ' until a build reads them, and the next build retries them.'
        ) %}
    {%- endif %}
    {{- return('') -}}
{% endmacro %}

{# The relation a model of this project writes, found in the graph (a hook cannot ref()). #}
{% macro _model_relation(model_name) %}
    {%- for node in graph.nodes.values()
            if node.resource_type == 'model' and node.name == model_name and node.package_name == 'cdc_dbt' %}
        {{- return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) -}}
    {%- endfor %}
    {{- exceptions.raise_compiler_error('no model named ' ~ model_name) -}}
{% endmacro %}
