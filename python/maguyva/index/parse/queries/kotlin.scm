;; definitions
(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(function_declaration (receiver_type) @receiver (simple_identifier) @name)
    @definition.function
(function_declaration (simple_identifier) @name) @definition.function
(type_alias (type_identifier) @name) @definition.type
(property_declaration (modifiers (property_modifier) @_mod)
    (variable_declaration (simple_identifier) @name)
    (#eq? @_mod "const")) @definition.constant
(source_file (property_declaration (variable_declaration (simple_identifier) @name))
    @definition.variable)

;; calls
(call_expression . (simple_identifier) @call.name)
(call_expression . (navigation_expression (_) @call.qualifier
    (navigation_suffix (simple_identifier) @call.name) .))

;; imports
(import_header (identifier) @import.module) @import
(import_header (identifier) @import.module (wildcard_import) @import.name) @import

;; inherits
(delegation_specifier (user_type) @inherit.base)
(delegation_specifier (constructor_invocation (user_type) @inherit.base))
(delegation_specifier (explicit_delegation (user_type) @inherit.base))
