;; definitions
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.function
(namespace_definition name: (namespace_name) @name body: (_)) @definition.module
(const_declaration (const_element (name) @name)) @definition.constant

;; calls
(function_call_expression function: (name) @call.name)
(function_call_expression function: (qualified_name (name) @call.name .))
(member_call_expression object: (_) @call.qualifier name: (name) @call.name)
(nullsafe_member_call_expression object: (_) @call.qualifier name: (name) @call.name)
(scoped_call_expression scope: (_) @call.qualifier name: (name) @call.name)
(object_creation_expression [(name) (qualified_name)] @call.name)

;; imports
(namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module))
    @import
(namespace_use_declaration (namespace_name) @import.module
    body: (namespace_use_group
        (namespace_use_clause [(name) (qualified_name)] @import.name))) @import
(include_expression (string (string_content) @import.module)) @import
(include_once_expression (string (string_content) @import.module)) @import
(require_expression (string (string_content) @import.module)) @import
(require_once_expression (string (string_content) @import.module)) @import

;; inherits
(base_clause [(name) (qualified_name)] @inherit.base)
(class_interface_clause [(name) (qualified_name)] @inherit.base)
(use_declaration [(name) (qualified_name)] @inherit.base)
