;; definitions
;; include class_declarations

(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum

;; include method_declarations

(field_declaration (modifiers) @_mods
    declarator: (variable_declarator name: (identifier) @name)
    (#match? @_mods "static[^=]*final|final[^=]*static")) @definition.constant

;; calls
(method_invocation !object name: (identifier) @call.name)
(method_invocation object: (_) @call.qualifier name: (identifier) @call.name)
(object_creation_expression
    type: [(type_identifier) (generic_type) (scoped_type_identifier)] @call.name)
;; receivers: a name declared with a type
(local_variable_declaration type: (type_identifier) @receiver.type
    declarator: (variable_declarator name: (identifier) @receiver.var))
(formal_parameter type: (type_identifier) @receiver.type name: (identifier) @receiver.var)
;; a field: a receiver in every method of its class
(field_declaration type: (type_identifier) @receiver.type
    declarator: (variable_declarator name: (identifier) @receiver.var))

;; imports
(import_declaration [(identifier) (scoped_identifier)] @import.module .) @import
(import_declaration [(identifier) (scoped_identifier)] @import.module
    (asterisk) @import.name) @import

;; inherits
(superclass (_) @inherit.base)
(super_interfaces (type_list (_) @inherit.base))
(extends_interfaces (type_list (_) @inherit.base))
