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
;; One pattern for the forms of a call, one for those of `new` (a pattern a form compiled each).
(invocation_expression function: [
    (identifier) @call.name
    (generic_name (identifier) @call.name)
    (member_access_expression expression: (_) @call.qualifier name: (identifier) @call.name)
    (member_access_expression expression: (_) @call.qualifier name: (generic_name (identifier) @call.name))
])
(object_creation_expression type: [
    (identifier) @call.name
    (generic_name (identifier) @call.name)
    (qualified_name qualifier: (_) @call.qualifier name: (identifier) @call.name)
])

;; receivers: a parameter or a local declared with a type, a local bound to `new T(..)`, and a
;; field: a receiver (`this.x`, and its bare name) in every method of its class
(parameter type: (identifier) @receiver.type name: (identifier) @receiver.var)
(local_declaration_statement (variable_declaration type: (identifier) @receiver.type
    (variable_declarator name: (identifier) @receiver.var)))
(variable_declarator name: (identifier) @receiver.var (object_creation_expression type: (identifier) @receiver.type))
(field_declaration (variable_declaration type: (identifier) @receiver.type
    (variable_declarator name: (identifier) @receiver.var)))

;; imports
(using_directive [(identifier) (qualified_name)] @import.module .) @import

;; inherits
(base_list (_) @inherit.base)
