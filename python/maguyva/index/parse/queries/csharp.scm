;; definitions
;; include class_declarations

(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(delegate_declaration name: (identifier) @name) @definition.type
(namespace_declaration name: (_) @name) @definition.module

;; include method_declarations

(local_function_statement name: (identifier) @name) @definition.function
(field_declaration (modifier) @_const
    (variable_declaration (variable_declarator name: (identifier) @name))
    (#eq? @_const "const")) @definition.constant

;; calls
(invocation_expression function: (identifier) @call.name)
(invocation_expression function: (generic_name (identifier) @call.name))
(invocation_expression function: (member_access_expression
    expression: (_) @call.qualifier name: (identifier) @call.name))
(invocation_expression function: (member_access_expression
    expression: (_) @call.qualifier name: (generic_name (identifier) @call.name)))
(object_creation_expression type: (identifier) @call.name)
(object_creation_expression type: (generic_name (identifier) @call.name))
(object_creation_expression type: (qualified_name qualifier: (_) @call.qualifier
    name: (identifier) @call.name))

;; imports
(using_directive [(identifier) (qualified_name)] @import.module .) @import

;; inherits
(base_list (_) @inherit.base)
