;; definitions
;; include c_definitions

(function_definition declarator: (reference_declarator
    (function_declarator declarator: (_) @name))) @definition.function
(class_specifier name: (_) @name body: (_)) @definition.class
(namespace_definition name: (_) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
(field_declaration declarator:
    ;; include cpp_function_declarator
) @definition.method
(declaration declarator: (function_declarator declarator: (qualified_identifier) @name))
    @definition.method

;; calls: C's forms and C++'s, one pattern (a pattern a form compiled each, about 2 ms apiece)
(call_expression function: [
    (identifier) @call.name
    (field_expression argument: (_) @call.qualifier field: (field_identifier) @call.name)
    (qualified_identifier scope: (_) @call.qualifier name: (identifier) @call.name)
    (template_function name: (identifier) @call.name)
    (qualified_identifier scope: (_) @call.qualifier name: (template_function name: (identifier) @call.name))
    (field_expression argument: (_) @call.qualifier field: (template_method name: (field_identifier) @call.name))
])
(new_expression type: [
    (type_identifier) @call.name
    (qualified_identifier scope: (_) @call.qualifier name: (type_identifier) @call.name)
])

;; imports
;; include c_imports

;; inherits
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)]
    @inherit.base)
