;; definitions
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
(template_body (val_definition pattern: (identifier) @name) @definition.constant
    (#match? @name "^[A-Z]"))

;; calls
;; The forms of a call, and of `new`, each an alternative of one pattern: a pattern a form
;; compiled each.
(call_expression function: [
    (identifier) @call.name
    (field_expression value: (_) @call.qualifier field: (identifier) @call.name)
    (generic_function function: (identifier) @call.name)
])
(instance_expression [
    (type_identifier) @call.name
    (generic_type type: (type_identifier) @call.name)
])

;; imports
(import_declaration (identifier) @import.module.part) @import
(import_declaration (namespace_selectors [(identifier) @import.name
    (arrow_renamed_identifier name: (_) @import.name)])) @import
(import_declaration (namespace_wildcard) @import.name) @import

;; inherits
(extends_clause [(type_identifier) (generic_type) (stable_type_identifier)]
    @inherit.base)
