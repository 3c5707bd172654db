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

;; receivers: a parameter or a property declared with a type, a property bound to `Type(..)` (a
;; capitalised call: Kotlin constructs without `new`), and a class's constructor properties and
;; properties: receivers (`this.x`, and the bare name) in every method of the class
(parameter (simple_identifier) @receiver.var (user_type (type_identifier) @receiver.type))
(class_parameter (simple_identifier) @receiver.var (user_type (type_identifier) @receiver.type))
(property_declaration (variable_declaration (simple_identifier) @receiver.var (user_type (type_identifier) @receiver.type)))
(property_declaration (variable_declaration (simple_identifier) @receiver.var . )
    (call_expression . (simple_identifier) @receiver.type) (#match? @receiver.type "^[A-Z]"))

;; imports
(import_header (identifier) @import.module) @import
(import_header (identifier) @import.module (wildcard_import) @import.name) @import

;; inherits
(delegation_specifier (user_type) @inherit.base)
(delegation_specifier (constructor_invocation (user_type) @inherit.base))
(delegation_specifier (explicit_delegation (user_type) @inherit.base))
