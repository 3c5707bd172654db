;; TypeScript's definitions (JavaScript's and its own), for .ts and .tsx.
;; include js_definitions

(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(method_signature name: (_) @name) @definition.function
(abstract_method_signature name: (_) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(public_field_definition name: (_) @name value: (arrow_function body: (_) @body))
    @definition.function
