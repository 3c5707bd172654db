;; C's calls, which C++ has too.
(call_expression function: (identifier) @call.name)
(call_expression function: (field_expression argument: (_) @call.qualifier
    field: (field_identifier) @call.name))
